/*
 * tdm-extents FILE...: each file's extents on its block device (FIEMAP,
 * after a sync of the file) as CSV for tracing/tdm-join.py --extents:
 *
 *   path,logical_offset_bytes,physical_offset_bytes,length_bytes,flags
 *
 * physical_offset_bytes is the byte on the filesystem's block device
 * (/dev/pmemN on fsdax); tdm-join.py adds --dev-offset to reach the
 * device's byte (tracing/README.md "TDM tooling").  flags: FIEMAP's
 * fe_flags (0x800 = unwritten).  Paths with a comma or a quote are quoted.
 * Exit status: 0, 1 if a file could not be mapped (named on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BATCH 256

static void put_path(const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"') {
            putchar('"');
        }
        putchar(*s);
    }
    putchar('"');
}

static int extents(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "tdm-extents: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t size = sizeof(struct fiemap) + BATCH * sizeof(struct fiemap_extent);
    struct fiemap *fm = calloc(1, size);
    int rc = fm ? 0 : -1;
    for (__u64 start = 0; !rc;) {
        memset(fm, 0, size);
        fm->fm_start = start;
        fm->fm_length = FIEMAP_MAX_OFFSET - start;
        fm->fm_flags = FIEMAP_FLAG_SYNC;
        fm->fm_extent_count = BATCH;
        if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
            fprintf(stderr, "tdm-extents: %s: FIEMAP: %s\n", path,
                    strerror(errno));
            rc = -1;
            break;
        }
        if (fm->fm_mapped_extents == 0) {
            break;
        }
        const struct fiemap_extent *e = NULL;
        for (__u32 i = 0; i < fm->fm_mapped_extents; i++) {
            e = &fm->fm_extents[i];
            put_path(path);
            printf(",%llu,%llu,%llu,%u\n", (unsigned long long)e->fe_logical,
                   (unsigned long long)e->fe_physical,
                   (unsigned long long)e->fe_length, e->fe_flags);
        }
        if (e->fe_flags & FIEMAP_EXTENT_LAST) {
            break;
        }
        start = e->fe_logical + e->fe_length;
    }
    free(fm);
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tdm-extents FILE...\n");
        return 64;
    }
    puts("path,logical_offset_bytes,physical_offset_bytes,length_bytes,flags");
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        rc |= extents(argv[i]) ? 1 : 0;
    }
    return rc;
}
