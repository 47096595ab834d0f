/*
 * cxlssd-native: the host: facts for the manifest (CPU model, THP
 * settings, the git commit the tool was built from) and output files.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "native.h"

static void first_line(const char *cmd, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p) {
        return;
    }
    if (fgets(buf, (int)len, p)) {
        buf[strcspn(buf, "\n")] = '\0';
    }
    pclose(p);
}

void native_host_cpu(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') {
                    c++;
                }
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, len, "%s", c);
            }
            break;
        }
    }
    if (f) {
        fclose(f);
    }
}

void native_host_thp(const char *name, char *buf, size_t len)
{
    char path[128], line[256];
    snprintf(buf, len, "unknown");
    snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/%s",
             name);
    FILE *f = fopen(path, "r");
    if (f && fgets(line, sizeof(line), f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b) {
            *b = '\0';
            snprintf(buf, len, "%s", a + 1);
        }
    }
    if (f) {
        fclose(f);
    }
}

void native_git_commit(char *buf, size_t len)
{
    first_line("git -C \"$(dirname \"$(readlink -f /proc/self/exe)\")\" "
               "rev-parse HEAD 2>/dev/null", buf, len);
    if (!buf[0]) {
        snprintf(buf, len, "unknown");
    }
}

FILE *native_create(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        fprintf(stderr, "cxlssd-native: open %s: %s\n", path,
                strerror(errno));
    }
    return f;
}
