/*
 * The FTL's consistency check (ftl.h, ftl_check): the forward and reverse
 * maps agree, valid counts match the map, block states match the free
 * stacks.  For the tests and for a restored state (ftl_state.c).
 */
#include "ftl_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* An inconsistency found by ftl_check(): print it, count it. */
static void __attribute__((format(printf, 2, 3)))
check_failed(int *bad, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ftl_check: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    (*bad)++;
}

int ftl_check(struct ftl *f)
{
    int bad = 0;
    pthread_mutex_lock(&f->lock);
    uint64_t nblocks = (uint64_t)f->luns * f->blocks_per_lun;
    uint32_t *cnt = calloc(nblocks, sizeof(*cnt));
    if (!cnt) {
        pthread_mutex_unlock(&f->lock);
        return -1;
    }
    /* Forward: every mapped lpn's reverse entry points back, or, before
     * p2l is built, no other lpn has its ppa (two lpns sharing a ppa are
     * impossible either way); count the valid pages per block. */
    uint64_t *seen = f->p2l_built ? NULL
                                  : calloc((f->physical_pages + 63) / 64, 8);
    if (!f->p2l_built && !seen) {
        free(cnt);
        pthread_mutex_unlock(&f->lock);
        return -1;
    }
    for (uint64_t lpn = 0; lpn < f->logical_pages && bad < 10; lpn++) {
        cxlssd_ppa ppa = l2p_get(f, lpn);
        if (ppa == FTL_NONE) {
            continue;
        }
        if (ppa >= f->physical_pages) {
            check_failed(&bad, "lpn %llu -> ppa %u out of range",
                         (unsigned long long)lpn, ppa);
            continue;
        }
        if (f->p2l_built && p2l_get(f, ppa) != lpn) {
            check_failed(&bad, "lpn %llu -> ppa %u -> lpn %u",
                         (unsigned long long)lpn, ppa, p2l_get(f, ppa));
            continue;
        }
        if (seen) {
            if (seen[ppa / 64] >> (ppa % 64) & 1) {
                check_failed(&bad, "lpn %llu -> ppa %u, another lpn's",
                             (unsigned long long)lpn, ppa);
                continue;
            }
            seen[ppa / 64] |= 1ull << (ppa % 64);
        }
        if (f->state[ppa / f->pages_per_block] == BLK_FREE) {
            check_failed(&bad, "lpn %llu in free block",
                         (unsigned long long)lpn);
        }
        cnt[ppa / f->pages_per_block]++;
    }
    free(seen);
    /* Reverse: every live p2l entry is the current copy of its lpn; none
     * before p2l is built. */
    for (uint64_t ppa = 0; ppa < f->physical_pages && bad < 10; ppa++) {
        uint32_t lpn = p2l_get(f, ppa);
        if (lpn == FTL_NONE) {
            continue;
        }
        if (!f->p2l_built || lpn >= f->logical_pages ||
            l2p_get(f, lpn) != ppa) {
            check_failed(&bad, "stale ppa %llu -> lpn %u%s",
                         (unsigned long long)ppa, lpn,
                         f->p2l_built ? "" : " (p2l not built yet)");
        }
    }
    /* Valid counts, block states, free stacks. */
    for (uint32_t l = 0; l < f->luns && bad < 10; l++) {
        struct ftl_lun *L = &f->lun[l];
        uint32_t nfree = 0, nopen = 0;
        for (uint32_t b = 0; b < f->blocks_per_lun; b++) {
            uint64_t i = blk_index(f, l, b);
            if (cnt[i] != f->valid[i]) {
                check_failed(&bad, "lun %u block %u valid %u, counted %u",
                             l, b, f->valid[i], cnt[i]);
            }
            nfree += f->state[i] == BLK_FREE;
            nopen += f->state[i] == BLK_OPEN;
        }
        if (nfree != L->nfree || nopen != (L->open_block != FTL_NONE)) {
            check_failed(&bad, "lun %u free %u/%u open %u", l, nfree,
                         L->nfree, nopen);
        }
        for (uint32_t k = 0; k < L->nfree; k++) {
            uint32_t b = free_stack(f, l)[k];
            if (b >= f->blocks_per_lun ||
                f->state[blk_index(f, l, b)] != BLK_FREE) {
                check_failed(&bad, "lun %u free stack holds used block %u",
                             l, b);
            }
        }
    }
    free(cnt);
    pthread_mutex_unlock(&f->lock);
    return bad ? -1 : 0;
}
