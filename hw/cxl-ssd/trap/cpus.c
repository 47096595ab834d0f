/*
 * handler-cpus lists ("0,1", "0-3"): parsing and checking against this
 * host's CPUs.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trap_int.h"

int trap_parse_cpus(const char *list, int *cpus, int max, char *err,
                    size_t errlen)
{
    int n = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1 || ncpu > CPU_SETSIZE) {
        ncpu = CPU_SETSIZE;
    }
    if (!list || !*list) {
        return 0;
    }
    const char *p = list;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10);
        if (end == p || errno || a < 0) {
            goto bad;
        }
        long b = a;
        p = end;
        if (*p == '-') {
            p++;
            b = strtol(p, &end, 10);
            if (end == p || errno || b < a) {
                goto bad;
            }
            p = end;
        }
        if (b >= ncpu) {
            snprintf(err, errlen, "handler-cpus=\"%s\": CPU %ld does not "
                     "exist (this host has CPUs 0-%ld)", list, b, ncpu - 1);
            return -1;
        }
        for (long c = a; c <= b; c++) {
            if (n >= max) {
                snprintf(err, errlen, "handler-cpus=\"%s\": more than %d "
                         "entries", list, max);
                return -1;
            }
            cpus[n++] = (int)c;
        }
        if (*p == ',') {
            p++;
            if (!*p) {
                goto bad;
            }
        } else if (*p) {
            goto bad;
        }
    }
    return n;
bad:
    snprintf(err, errlen, "handler-cpus=\"%s\": expected a list of CPU "
             "numbers or ranges such as \"0,1\" or \"0-3\"", list);
    return -1;
}

int cxlssd_trap_check_cpus(const char *list, char *err, size_t errlen)
{
    int *cpus = calloc(TRAP_MAX_CPUS, sizeof(int));
    if (!cpus) {
        snprintf(err, errlen, "cxl-ssd trap: out of memory");
        return -1;
    }
    int n = trap_parse_cpus(list, cpus, TRAP_MAX_CPUS, err, errlen);
    free(cpus);
    return n;
}
