/*
 * relprobe: guest-side helper of the reliability tests (static, packed into
 * the guest initramfs as /usr/bin/relprobe).  The pattern is the one of
 * vm-images/dax-pattern.c: word at byte offset o = splitmix64(seed, o).
 *
 *   relprobe write  DAX SEED OFFSET LENGTH   pattern over [OFFSET, +LENGTH)
 *   relprobe verify DAX SEED OFFSET LENGTH   exit 1 on any mismatch
 *   relprobe wait   DAX SEED OFFSET SECONDS  poll until the word at OFFSET
 *                                             is the pattern word
 *   relprobe dma-dax DAX DISK SEED LENGTH
 *       QEMU-side DMA with devdax buffers: fill [0, LENGTH) of the device,
 *       evict it by touching [2L, 3L), O_DIRECT-write it to DISK (the
 *       virtio-blk model reads the window), O_DIRECT-read it back into
 *       [L, 2L) (the model writes the window), verify both ranges.
 *   relprobe dma-ram NODE DISK SEED LENGTH REGION_START REGION_SIZE
 *       Same with anonymous buffers bound to NUMA node NODE (the CXL region
 *       onlined as system RAM by kmem); fails unless every buffer page is
 *       in [REGION_START, +REGION_SIZE) (physical, from /proc/self/pagemap).
 *
 * Sizes take K/M/G suffixes.  Prints one "relprobe: ..." result line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest-util.h"

static uint64_t num(const char *s)
{
    return guest_parse_size("relprobe", s);
}

#define MAP_ALIGN (2ULL << 20)
#define MPOL_BIND 2
#define MPOL_MF_MOVE (1 << 1)
#define MPOL_MF_STRICT (1 << 0)

static void die(const char *what)
{
    fprintf(stderr, "relprobe: %s: %s\n", what, strerror(errno));
    exit(3);
}

static volatile uint64_t *map_dax(const char *dev, uint64_t end, int *fdp)
{
    uint64_t len = (end + MAP_ALIGN - 1) / MAP_ALIGN * MAP_ALIGN;
    int fd = open(dev, O_RDWR);
    void *p;

    if (fd < 0)
        die(dev);
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        die("mmap");
    if (fdp)
        *fdp = fd;
    else
        close(fd);
    return p;
}

/* buf holds the bytes of offsets [off, off+len) */
static void fill(volatile uint64_t *buf, uint64_t seed, uint64_t off,
                 uint64_t len)
{
    for (uint64_t i = 0; i < len / 8; i++)
        buf[i] = guest_pattern(seed, off + 8 * i);
}

static uint64_t check(volatile uint64_t *buf, uint64_t seed, uint64_t off,
                      uint64_t len, const char *what)
{
    uint64_t bad = 0;

    for (uint64_t i = 0; i < len / 8; i++) {
        uint64_t want = guest_pattern(seed, off + 8 * i), got = buf[i];
        if (got != want) {
            if (bad < 5)
                fprintf(stderr, "relprobe: %s: mismatch at 0x%" PRIx64
                        ": expected %016" PRIx64 " got %016" PRIx64 "\n",
                        what, off + 8 * i, want, got);
            bad++;
        }
    }
    return bad;
}

static void touch(volatile uint64_t *buf, uint64_t len)
{
    for (uint64_t i = 0; i < len / 8; i += 512)
        buf[i] = i;
}

static void disk_io(int fd, volatile uint64_t *buf, uint64_t len, int wr)
{
    const uint64_t chunk = 256 * 1024;

    for (uint64_t o = 0; o < len; o += chunk) {
        uint64_t n = len - o < chunk ? len - o : chunk;
        ssize_t r = wr ? pwrite(fd, (char *)buf + o, n, (off_t)o)
                       : pread(fd, (char *)buf + o, n, (off_t)o);
        if (r != (ssize_t)n)
            die(wr ? "O_DIRECT write" : "O_DIRECT read");
    }
    if (wr && fdatasync(fd))
        die("fdatasync");
}

static int dma_dax(const char *dax, const char *disk, uint64_t seed,
                   uint64_t len)
{
    volatile uint64_t *m = map_dax(dax, 3 * len, NULL);
    int fd = open(disk, O_RDWR | O_DIRECT);
    uint64_t bad;

    if (fd < 0)
        die(disk);
    fill(m, seed, 0, len);
    touch((volatile uint64_t *)((char *)m + 2 * len), len);
    disk_io(fd, m, len, 1);
    touch((volatile uint64_t *)((char *)m + 2 * len), len);
    disk_io(fd, (volatile uint64_t *)((char *)m + len), len, 0);
    bad = check((volatile uint64_t *)((char *)m + len), seed, 0, len,
                "dma-dax read-back") +
          check(m, seed, 0, len, "dma-dax source");
    printf("relprobe: dma-dax bytes=%" PRIu64 " mismatches=%" PRIu64 "\n",
           len, bad);
    return bad ? 1 : 0;
}

static long sys_mbind(void *addr, unsigned long len, int mode,
                      const unsigned long *mask, unsigned long maxnode,
                      unsigned flags)
{
    return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

static volatile uint64_t *alloc_on(int node, uint64_t len)
{
    unsigned long mask[4] = { 0 };
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        die("mmap anon");
    mask[node / 64] |= 1UL << (node % 64);
    if (sys_mbind(p, len, MPOL_BIND, mask, 256, MPOL_MF_STRICT))
        die("mbind");
    return p;
}

static uint64_t pages_on(volatile uint64_t *buf, uint64_t len, int node)
{
    uint64_t n = len / 4096, on = 0;
    void **pages = calloc(n, sizeof(*pages));
    int *status = calloc(n, sizeof(*status));

    for (uint64_t i = 0; i < n; i++)
        pages[i] = (char *)buf + i * 4096;
    if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
        die("move_pages(query)");
    for (uint64_t i = 0; i < n; i++)
        on += status[i] == node;
    free(pages);
    free(status);
    return on;
}

/* Pages of [buf, buf+len) whose physical address lies in [lo, hi)
 * (/proc/self/pagemap; root sees the PFNs). */
static uint64_t pages_in(volatile uint64_t *buf, uint64_t len, uint64_t lo,
                         uint64_t hi)
{
    int fd = open("/proc/self/pagemap", O_RDONLY);
    uint64_t in = 0;

    if (fd < 0)
        die("/proc/self/pagemap");
    for (uint64_t o = 0; o < len; o += 4096) {
        uint64_t e, va = (uint64_t)(uintptr_t)buf + o;
        if (pread(fd, &e, 8, (off_t)(va / 4096 * 8)) != 8)
            die("pagemap read");
        uint64_t pa = (e & ((1ULL << 55) - 1)) * 4096;
        in += (e >> 63) && pa >= lo && pa < hi;
    }
    close(fd);
    return in;
}

static int dma_ram(int node, const char *disk, uint64_t seed, uint64_t len,
                   uint64_t lo, uint64_t size)
{
    volatile uint64_t *src = alloc_on(node, len), *dst = alloc_on(node, len),
                      *churn = alloc_on(node, len);
    int fd = open(disk, O_RDWR | O_DIRECT);
    uint64_t bad, on, in;

    if (fd < 0)
        die(disk);
    fill(src, seed, 0, len);
    touch(dst, len);
    touch(churn, len);
    disk_io(fd, src, len, 1);
    touch(churn, len);
    disk_io(fd, dst, len, 0);
    on = pages_on(src, len, node) + pages_on(dst, len, node);
    in = pages_in(src, len, lo, lo + size) + pages_in(dst, len, lo, lo + size);
    bad = check(dst, seed, 0, len, "dma-ram read-back") +
          check(src, seed, 0, len, "dma-ram source");
    printf("relprobe: dma-ram node=%d bytes=%" PRIu64 " pages_on_node=%"
           PRIu64 "/%" PRIu64 " pages_in_region=%" PRIu64 " mismatches=%"
           PRIu64 "\n", node, len, on, 2 * len / 4096, in, bad);
    return bad || in != 2 * len / 4096 ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && (!strcmp(argv[1], "write") ||
                      !strcmp(argv[1], "verify"))) {
        uint64_t seed = num(argv[3]), off = num(argv[4]),
                 len = num(argv[5]);
        volatile uint64_t *m;
        if (off % 8 || len % 8)
            return 2;
        m = map_dax(argv[2], off + len, NULL);
        m = (volatile uint64_t *)((char *)m + off);
        if (argv[1][0] == 'w') {
            fill(m, seed, off, len);
            printf("relprobe: wrote bytes=%" PRIu64 " seed=%" PRIu64 "\n",
                   len, seed);
            return 0;
        }
        uint64_t bad = check(m, seed, off, len, "verify");
        printf("relprobe: verify offset=0x%" PRIx64 " bytes=%" PRIu64
               " seed=%" PRIu64 " mismatches=%" PRIu64 "\n", off, len, seed,
               bad);
        return bad ? 1 : 0;
    }
    if (argc == 6 && !strcmp(argv[1], "wait")) {
        uint64_t seed = num(argv[3]), off = num(argv[4]);
        double secs = atof(argv[5]);
        volatile uint64_t *m = map_dax(argv[2], off + 8, NULL);
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        for (double t = 0; t < secs; t += 0.05) {
            if (m[off / 8] == guest_pattern(seed, off)) {
                printf("relprobe: wait done after %.1f s\n", t);
                return 0;
            }
            nanosleep(&ts, NULL);
        }
        printf("relprobe: wait timed out\n");
        return 1;
    }
    if (argc == 6 && !strcmp(argv[1], "dma-dax"))
        return dma_dax(argv[2], argv[3], num(argv[4]),
                       num(argv[5]));
    if (argc == 8 && !strcmp(argv[1], "dma-ram"))
        return dma_ram(atoi(argv[2]), argv[3], num(argv[4]),
                       num(argv[5]), num(argv[6]),
                       num(argv[7]));
    fprintf(stderr, "usage: relprobe write|verify DAX SEED OFFSET LENGTH\n"
            "       relprobe wait DAX SEED OFFSET SECONDS\n"
            "       relprobe dma-dax DAX DISK SEED LENGTH\n"
            "       relprobe dma-ram NODE DISK SEED LENGTH REGION_START "
            "REGION_SIZE\n");
    return 2;
}
