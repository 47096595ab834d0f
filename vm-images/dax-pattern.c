/*
 * dax-pattern: write or verify an offset-dependent pattern through an mmap of
 * a device-dax device (which has no read/write, so dd cannot be used).
 *
 *   dax-pattern write|verify DEV SEED LENGTH [STEP]
 *
 * Touches the 8-byte word at every STEP bytes (default 8) of [0, LENGTH).
 * Sizes take K/M/G suffixes.  The mapping is LENGTH rounded up to 2 MiB,
 * devdax's default alignment.  verify exits 1 on any mismatch.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "guest-util.h"

#define MAP_ALIGN (2ULL << 20)

static void usage(void)
{
    fprintf(stderr, "usage: dax-pattern write|verify DEV SEED LENGTH [STEP]\n");
    exit(2);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6)
        usage();
    int do_write = !strcmp(argv[1], "write");
    if (!do_write && strcmp(argv[1], "verify"))
        usage();
    const char *dev = argv[2];
    uint64_t seed = guest_parse_size("dax-pattern", argv[3]);
    uint64_t len = guest_parse_size("dax-pattern", argv[4]);
    uint64_t step = argc == 6 ? guest_parse_size("dax-pattern", argv[5]) : 8;
    if (len == 0 || step == 0 || step % 8) {
        fprintf(stderr, "dax-pattern: LENGTH must be > 0, STEP a multiple of 8\n");
        return 2;
    }

    int fd = open(dev, do_write ? O_RDWR : O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "dax-pattern: %s: %s\n", dev, strerror(errno));
        return 1;
    }
    uint64_t map_len = (len + MAP_ALIGN - 1) / MAP_ALIGN * MAP_ALIGN;
    void *p = mmap(NULL, map_len, do_write ? PROT_READ | PROT_WRITE : PROT_READ,
                   MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "dax-pattern: mmap %s (%" PRIu64 " bytes): %s\n",
                dev, map_len, strerror(errno));
        return 1;
    }
    volatile uint64_t *mem = p;

    uint64_t words = 0, bad = 0, first_bad = 0, got = 0;
    double t0 = now();
    for (uint64_t off = 0; off + 8 <= len; off += step, words++) {
        uint64_t want = guest_pattern(seed, off);
        if (do_write) {
            mem[off / 8] = want;
        } else {
            uint64_t v = mem[off / 8];
            if (v != want && !bad++) {
                first_bad = off;
                got = v;
            }
        }
    }
    double secs = now() - t0;

    printf("dax-pattern: %s %s: %" PRIu64 " words in %.3f s", argv[1], dev, words, secs);
    if (bad) {
        printf(", %" PRIu64 " MISMATCHES, first at offset 0x%" PRIx64
               " (got 0x%016" PRIx64 ", want 0x%016" PRIx64 ")\n",
               bad, first_bad, got, guest_pattern(seed, first_bad));
        return 1;
    }
    printf(", all ok\n");
    return 0;
}
