/*
 * numa-touch: fault in anonymous memory under the caller's NUMA policy (run
 * it under numactl), verify it, say where its pages are, and hold them.
 *
 *   numa-touch LENGTH PFN-FILE
 *
 * Writes a pattern to every 8-byte word of a LENGTH-byte anonymous mapping
 * (K/M/G suffixes), verifies it, writes the page frame number of every page
 * (from /proc/self/pagemap, one decimal number a line) to PFN-FILE, prints
 * "numa-touch: ready <pid>" and then waits for a signal, so that the
 * caller can read /proc/<pid>/numa_maps while the pages are still mapped.
 * Exits 1 on a mismatch or an unreadable pagemap.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest-util.h"

#define PAGE 4096ULL
#define PFN_MASK ((UINT64_C(1) << 55) - 1)
#define PRESENT (UINT64_C(1) << 63)

static int write_pfns(const char *path, const uint8_t *buf, uint64_t len)
{
    int pm = open("/proc/self/pagemap", O_RDONLY);
    FILE *out = fopen(path, "w");
    uint64_t i, e, absent = 0;

    if (pm < 0 || !out) {
        perror(pm < 0 ? "/proc/self/pagemap" : path);
        return -1;
    }
    for (i = 0; i < len / PAGE; i++) {
        off_t at = (off_t)((uintptr_t)(buf + i * PAGE) / PAGE * sizeof(e));
        if (pread(pm, &e, sizeof(e), at) != sizeof(e)) {
            perror("pagemap read");
            return -1;
        }
        if (!(e & PRESENT) || !(e & PFN_MASK)) {
            absent++;
            continue;
        }
        fprintf(out, "%" PRIu64 "\n", (uint64_t)(e & PFN_MASK));
    }
    close(pm);
    if (fclose(out) != 0) {
        perror(path);
        return -1;
    }
    if (absent) {
        fprintf(stderr, "numa-touch: %" PRIu64 " pages without a frame number "
                "(not root?)\n", absent);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t len, i, bad = 0;
    uint64_t *w;

    if (argc != 3) {
        fprintf(stderr, "usage: numa-touch LENGTH PFN-FILE\n");
        return 2;
    }
    len = (guest_parse_size("numa-touch", argv[1]) + PAGE - 1) / PAGE * PAGE;
    w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    /* 4 KiB pages: one frame per page in pagemap, like the device's pages. */
    madvise(w, len, MADV_NOHUGEPAGE);
    for (i = 0; i < len / 8; i++)
        w[i] = guest_pattern(0x70c4, i);
    for (i = 0; i < len / 8; i++)
        bad += w[i] != guest_pattern(0x70c4, i);
    if (bad) {
        fprintf(stderr, "numa-touch: %" PRIu64 " of %" PRIu64 " words wrong\n",
                bad, len / 8);
        return 1;
    }
    if (write_pfns(argv[2], (const uint8_t *)w, len) != 0)
        return 1;
    printf("numa-touch: %" PRIu64 " bytes written and verified; ready %d\n",
           len, (int)getpid());
    fflush(stdout);
    pause();
    return 0;
}
