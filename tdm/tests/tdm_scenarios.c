/*
 * Short call sequences whose statistics the tests check (test-tdm-stats,
 * tdm/guest/test-tdm-dax): each prints one line per step and exits 0 when
 * every call returned what it should.
 *
 *   tdm_scenarios probe DIR     can DIR's files be mapped MAP_SYNC?
 *   tdm_scenarios rw DIR        reads and writes within a 1 MiB file
 *   tdm_scenarios direct DIR    the same through O_DIRECT (aligned)
 *   tdm_scenarios wronly DIR    writes through a write-only fd
 *   tdm_scenarios sizes DIR     a 64 KiB and a 4 MiB file, read through
 *   tdm_scenarios recur DIR     a 4 MiB file: region 0 read 3 times,
 *                               region 1 once
 *   tdm_scenarios fsync DIR     a write in place then fsync; a write past
 *                               the end then fsync; reopened, an fsync
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mapsync.h"
#include "ops.h"

#define KiB 1024l
#define MiB (1024 * KiB)

static const char *dir;
static bool good = true;

static int open_file(const char *name, int flags)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = ops.openat(AT_FDCWD, path, flags, 0644);
    if (fd < 0) {
        printf("open %s: %s\n", name, strerror(errno));
        good = false;
    }
    return fd;
}

static void expect(const char *what, long got, long want)
{
    printf("%s: %ld%s\n", what, got, got == want ? "" : " (unexpected)");
    good &= got == want;
}

/* a file of @size bytes (written through the calls under test) */
static int make_file(const char *name, long size, int flags)
{
    static char buf[64 * KiB];
    int fd = open_file(name, O_RDWR | O_CREAT | O_TRUNC | flags);
    memset(buf, 'x', sizeof(buf));
    for (long off = 0; fd >= 0 && off < size; off += (long)sizeof(buf)) {
        if (ops.pwrite(fd, buf, sizeof(buf), off) != (long)sizeof(buf)) {
            good = false;
        }
    }
    return fd;
}

static void read_all(int fd, long size, long chunk)
{
    static char buf[1 * MiB];
    long got = 0;
    for (long off = 0; off < size; off += chunk) {
        got += ops.pread(fd, buf, (size_t)chunk, off);
    }
    good &= got == size;
}

static int probe(void)
{
    int fd = make_file("probe", 4096, 0);
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                   MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
    printf("map_sync %s\n", p == MAP_FAILED ? strerror(errno) : "ok");
    ops.close(fd);
    return p == MAP_FAILED ? 1 : 0;
}

static void rw(void)
{
    int fd = make_file("rw", MiB, 0);
    char buf[4096];
    expect("pread", ops.pread(fd, buf, sizeof(buf), 8192), sizeof(buf));
    expect("pwrite in place", ops.pwrite(fd, buf, sizeof(buf), 4096), sizeof(buf));
    expect("read", ops.read(fd, buf, sizeof(buf)), sizeof(buf));
    expect("write", ops.write(fd, buf, sizeof(buf)), sizeof(buf));
    expect("pread at the end", ops.pread(fd, buf, sizeof(buf), MiB - 100), 100);
    ops.close(fd);
}

static void direct(void)
{
    char *buf;
    if (posix_memalign((void **)&buf, 4096, 64 * KiB)) {
        good = false;
        return;
    }
    memset(buf, 'd', 64 * KiB);
    int fd = open_file("direct", O_RDWR | O_CREAT | O_TRUNC | O_DIRECT);
    for (long off = 0; fd >= 0 && off < MiB; off += 64 * KiB) {
        good &= ops.pwrite(fd, buf, 64 * KiB, off) == 64 * KiB;
    }
    expect("direct pread", ops.pread(fd, buf, 64 * KiB, 128 * KiB), 64 * KiB);
    expect("direct read", ops.read(fd, buf, 64 * KiB), 64 * KiB);
    ops.close(fd);
    free(buf);
}

static void wronly(void)
{
    ops.close(make_file("wronly", 256 * KiB, 0));
    int fd = open_file("wronly", O_WRONLY);
    char buf[4096] = { 0 };
    expect("pwrite write-only", ops.pwrite(fd, buf, sizeof(buf), 0), sizeof(buf));
    expect("write write-only", ops.write(fd, buf, sizeof(buf)), sizeof(buf));
    ops.close(fd);
}

static void sizes(void)
{
    int small = make_file("small", 64 * KiB, 0);
    int big = make_file("big", 4 * MiB, 0);
    read_all(small, 64 * KiB, 4096);
    read_all(big, 4 * MiB, 64 * KiB);
    ops.close(small);
    ops.close(big);
}

/* with TDM_POLICY=recur:64K: region 0's second pass maps it */
static void recur(void)
{
    int fd = make_file("recur", 4 * MiB, 0);
    for (int pass = 0; pass < 3; pass++) {
        read_all(fd, 2 * MiB, 64 * KiB);
    }
    static char buf[64 * KiB];
    long got = 0;
    for (long off = 2 * MiB; off < 4 * MiB; off += (long)sizeof(buf)) {
        got += ops.pread(fd, buf, sizeof(buf), off);
    }
    expect("region 1 read once", got, 2 * MiB);
    ops.close(fd);
}

static void fsync_scenario(void)
{
    int fd = make_file("fsync", MiB, 0);
    expect("first fsync", ops.fsync(fd), 0);
    char buf[4096] = { 1 };
    expect("pwrite in place", ops.pwrite(fd, buf, sizeof(buf), 8192), sizeof(buf));
    expect("fsync after it", ops.fsync(fd), 0);
    expect("fdatasync again", ops.fdatasync(fd), 0);
    expect("pwrite past the end", ops.pwrite(fd, buf, sizeof(buf), MiB), sizeof(buf));
    expect("fsync after that", ops.fsync(fd), 0);
    ops.close(fd);
    fd = open_file("fsync", O_RDWR);
    expect("fsync after reopening", ops.fsync(fd), 0);
    ops.close(fd);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } all[] = {
        { "rw", rw }, { "direct", direct }, { "wronly", wronly },
        { "sizes", sizes }, { "recur", recur }, { "fsync", fsync_scenario },
    };
    if (argc != 3) {
        fprintf(stderr, "usage: tdm_scenarios probe|rw|direct|wronly|sizes|"
                        "recur|fsync DIR\n");
        return 2;
    }
    ops_init();
    dir = argv[2];
    if (!strcmp(argv[1], "probe")) {
        return probe();
    }
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (!strcmp(argv[1], all[i].name)) {
            all[i].fn();
            return good ? 0 : 1;
        }
    }
    fprintf(stderr, "tdm_scenarios: no scenario %s\n", argv[1]);
    return 2;
}
