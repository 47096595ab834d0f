/*
 * kmod-probe: the in-guest test program of the cxl-ssd kernel module
 * (tests/kmod/test-kmod runs it).  Each mode prints one "kmod-probe: ..."
 * line and exits 0 when the module behaved as expected.
 *
 *   kmod-probe DEV private      a MAP_PRIVATE mapping is refused (EINVAL)
 *   kmod-probe DEV beyond       a mapping past the device end is refused
 *   kmod-probe DEV hold SEC     map, touch page 0, hold the mapping SEC s
 *                               (prints "mapped" first: the caller then
 *                               tries rmmod, which must fail)
 *   kmod-probe DEV touch BYTES  write then read every page of the first
 *                               BYTES forever (misses in flight until
 *                               the caller kills it)
 *   kmod-probe DEV dirty        read page 0, then write it: the first
 *                               write to a clean resident page (the caller
 *                               checks wp_faults/write_hits in stats)
 *   kmod-probe DEV pin          pinning is refused: process_vm_readv
 *                               (get_user_pages on the mapping) fails
 *                               with EFAULT, while write(2) from the
 *                               mapping (an ordinary copy that faults)
 *                               works and carries the page's data
 *   kmod-probe DEV hotcold BYTES N
 *                               skewed reads over the first BYTES (any
 *                               MAP_SHARED device, /dev/dax0.0 too): 80% of
 *                               them to the first 20% of the pages; N/2
 *                               untimed, then N timed, each read taking
 *                               >= 3.1 us (half the default 6.2 us miss)
 *                               counted as a miss; prints miss_ratio
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ul

static unsigned long long device_size(const char *dev)
{
    const char *base = strrchr(dev, '/');
    char p[256];
    unsigned long long v = 0;
    FILE *f;

    snprintf(p, sizeof(p), "/sys/class/cxlssd/%s/size", base ? base + 1 : dev);
    f = fopen(p, "r");
    if (!f || fscanf(f, "%llu", &v) != 1) {
        fprintf(stderr, "kmod-probe: cannot read %s\n", p);
        exit(2);
    }
    fclose(f);
    return v;
}

static int expect_refused(int fd, size_t len, int flags, off_t off,
                          const char *what)
{
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);

    if (m != MAP_FAILED) {
        printf("kmod-probe: %s: mapped, expected a refusal\n", what);
        return 1;
    }
    printf("kmod-probe: %s: refused (%s)\n", what, strerror(errno));
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#define MISS_NS 3100u

static int hotcold(const char *dev, int fd, size_t len, uint64_t n)
{
    volatile uint64_t *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    size_t pages = len / PAGE, hot = pages / 5;
    uint64_t rng = 88172645463325252ull, misses = 0, sum = 0;

    if (m == MAP_FAILED || hot == 0) {
        fprintf(stderr, "kmod-probe: mmap %s (%zu bytes): %s\n", dev, len,
                strerror(errno));
        return 2;
    }
    for (uint64_t i = 0; i < n / 2 + n; i++) {
        uint64_t r = rng_next(&rng);
        size_t p = (r % 100) < 80 ? (r >> 8) % hot
                                  : hot + (r >> 8) % (pages - hot);
        uint64_t t0 = now_ns();
        sum += m[p * PAGE / 8];
        if (i >= n / 2 && now_ns() - t0 >= MISS_NS) {
            misses++;
        }
    }
    printf("kmod-probe: hotcold pages=%zu hot_pages=%zu accesses=%llu "
           "misses=%llu miss_ratio=%.4f (sum %llu)\n", pages, hot,
           (unsigned long long)n, (unsigned long long)misses,
           (double)misses / (double)n, (unsigned long long)sum);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: kmod-probe DEV private|beyond|hold SEC|"
                "touch BYTES|dirty|hotcold BYTES N\n");
        return 2;
    }
    const char *dev = argv[1], *mode = argv[2];
    int fd = open(dev, O_RDWR);

    if (fd < 0) {
        fprintf(stderr, "kmod-probe: open %s: %s\n", dev, strerror(errno));
        return 2;
    }
    if (!strcmp(mode, "hotcold") && argc > 4) {
        return hotcold(dev, fd, strtoull(argv[3], NULL, 0),
                       strtoull(argv[4], NULL, 0));
    }
    unsigned long long size = device_size(dev);
    if (!strcmp(mode, "private")) {
        return expect_refused(fd, PAGE, MAP_PRIVATE, 0, "MAP_PRIVATE");
    }
    if (!strcmp(mode, "beyond")) {
        return expect_refused(fd, 2 * PAGE, MAP_SHARED, (off_t)(size - PAGE),
                              "past the end");
    }
    size_t len = size;
    if (!strcmp(mode, "touch") && argc > 3) {
        len = strtoull(argv[3], NULL, 0);
    }
    volatile uint64_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "kmod-probe: mmap %s: %s\n", dev, strerror(errno));
        return 2;
    }
    if (!strcmp(mode, "hold") && argc > 3) {
        m[0] = 1;
        printf("kmod-probe: mapped\n");
        fflush(stdout);
        sleep((unsigned)atoi(argv[3]));
        return 0;
    }
    if (!strcmp(mode, "touch")) {
        printf("kmod-probe: touching %zu bytes\n", len);
        fflush(stdout);
        for (uint64_t round = 1;; round++) {
            for (size_t p = 0; p < len / PAGE; p++) {
                m[p * PAGE / 8] = round;
            }
            for (size_t p = 0; p < len / PAGE; p++) {
                if (m[p * PAGE / 8] != round) {
                    printf("kmod-probe: page %zu lost a write\n", p);
                    return 1;
                }
            }
        }
    }
    if (!strcmp(mode, "pin")) {
        char buf[64];
        int p[2];
        struct iovec local = { buf, sizeof(buf) };
        /* page 1: page 0 stays clean for the dirty mode */
        volatile uint64_t *p1 = m + PAGE / 8;
        struct iovec remote = { (void *)p1, sizeof(buf) };

        p1[0] = 0x1234abcdull;
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) >= 0 ||
            errno != EFAULT) {
            printf("kmod-probe: pin: process_vm_readv on the mapping "
                   "did not fail with EFAULT\n");
            return 1;
        }
        if (pipe(p) || write(p[1], (const void *)p1, 8) != 8 ||
            read(p[0], buf, 8) != 8 || *(uint64_t *)buf != 0x1234abcdull) {
            printf("kmod-probe: pin: write(2) from the mapping failed\n");
            return 1;
        }
        printf("kmod-probe: pin: GUP refused (EFAULT), copies work\n");
        return 0;
    }
    if (!strcmp(mode, "dirty")) {
        uint64_t v = m[0];
        m[0] = v + 1;
        if (m[0] != v + 1) {
            printf("kmod-probe: dirty: write lost\n");
            return 1;
        }
        printf("kmod-probe: dirty: read then wrote page 0\n");
        return 0;
    }
    fprintf(stderr, "kmod-probe: unknown mode %s\n", mode);
    return 2;
}
