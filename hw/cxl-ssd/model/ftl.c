/*
 * Page-mapped FTL (see ftl.h): the map, block allocation, garbage
 * collection and the timing entry points (the check and the saved state
 * are in ftl_check.c and ftl_state.c).
 *
 * Layout and rules:
 *  - l2p[lpn] -> ppa (never written: none), p2l[ppa] -> lpn (free or
 *    stale: none), both stored + 1 so that none is 0: the arrays come
 *    zeroed from calloc, and the pages of a large device's map that no
 *    write reaches are never touched, so they cost no memory (metadata
 *    grows with the pages written, not with capacity); per block a valid-page count and a state
 *    (FREE / OPEN / CLOSED), per LUN a stack of free blocks and one open
 *    block that receives both host writes and GC copies.
 *  - p2l is needed by garbage collection only, so it is built when GC
 *    first runs (one scan of l2p) and kept from then on: until then a
 *    write touches l2p alone, and the reverse map (4 bytes per page
 *    programmed, which grows with every host write, not with the pages
 *    touched) costs no memory.  A device that never collects never
 *    builds it.  The scan runs once, under the FTL lock, in the write
 *    that triggers the first GC (a 96 GiB device: 25M entries, ~0.1-0.3
 *    s of host time; the modeled NAND time is not affected).  Restored
 *    state: built iff the saved p2l has entries.
 *  - Host writes go round-robin over the LUN index, which is
 *    channel + channels * way, so consecutive writes hit different channels.
 *  - One free block per LUN is reserved for GC: a host write may not open a
 *    LUN's last free block.  GC on a LUN starts when its free blocks drop
 *    below max(gc-low, 2) and collects greedy victims (fewest valid pages,
 *    found by an O(blocks-per-LUN) scan per victim) until max(gc-high, 2)
 *    blocks are free or no victim would gain space.  Valid pages are copied
 *    within the LUN (nand_read + nand_program) and the victim erased, all
 *    issued at the triggering write's issue time: the LUN timeline chains
 *    them, and the host program queues behind them.
 *  - If a LUN is full of valid data (GC cannot gain), the write goes to the
 *    next LUN in round-robin order.  ftl_new() requires, per LUN,
 *    max(gc-high, 2) + 1 blocks beyond the logical capacity, which makes it
 *    impossible for every LUN to be full at once: writes never fail.
 *  - blocks per LUN when derived (nand-blocks=0):
 *      max(ceil(pages * (100 + OP) / 100 / (luns * pages-per-block)),
 *          ceil(pages / (luns * pages-per-block)) + max(gc-high, 2) + 1)
 *    i.e. the configured over-provisioning, raised if needed to the GC
 *    minimum (small devices with many LUNs end up with more spare space).
 *  - Unwritten pages read as zero pages at no NAND cost, or, with
 *    precondition=on, cost a read of the LUN the page would be striped to
 *    (lpn % luns); no map entry is created.
 */
#include "ftl_int.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

struct ftl *ftl_new(const struct cxlssd_config *cfg, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    err[0] = '\0';
    if (!cfg) {
        snprintf(err, errlen, "ftl: no configuration");
        return NULL;
    }
    if (cfg->page_size == 0 || cfg->device_size < cfg->page_size) {
        snprintf(err, errlen, "ftl: device size %llu is smaller than "
                 "page-size=%u", (unsigned long long)cfg->device_size,
                 cfg->page_size);
        return NULL;
    }
    if (cfg->channels == 0 || cfg->luns_per_channel == 0) {
        snprintf(err, errlen, "nand-channels=%u, nand-luns=%u: both must "
                 "be at least 1", cfg->channels, cfg->luns_per_channel);
        return NULL;
    }
    if (cfg->pages_per_block == 0) {
        snprintf(err, errlen, "nand-pages-per-block=0: must be at least 1");
        return NULL;
    }
    uint64_t lpages = cfg->device_size / cfg->page_size;
    if (lpages >= UINT32_MAX) {
        snprintf(err, errlen, "ftl: %llu logical pages exceed the 32-bit "
                 "page map; use a larger page-size or a smaller device",
                 (unsigned long long)lpages);
        return NULL;
    }
    uint64_t luns = (uint64_t)cfg->channels * cfg->luns_per_channel;
    uint64_t ppb = cfg->pages_per_block;
    uint32_t gc_low = cfg->gc_low_blocks < 2 ? 2 : cfg->gc_low_blocks;
    uint32_t gc_high = cfg->gc_high_blocks < gc_low ? gc_low
                                                     : cfg->gc_high_blocks;
    uint64_t data_blocks = div_ceil(lpages, luns * ppb);
    uint64_t min_blocks = data_blocks + gc_high + 1;
    uint64_t bpl = cfg->blocks_per_lun;
    if (bpl == 0) {
        uint64_t op_pages = div_ceil(lpages * (100 + (uint64_t)cfg->op_pct),
                                     100);
        bpl = div_ceil(op_pages, luns * ppb);
        if (bpl < min_blocks) {
            bpl = min_blocks;
        }
    } else if (bpl < min_blocks) {
        snprintf(err, errlen, "nand-blocks=%llu is too small: %llu logical "
                 "pages over %llu LUNs x %llu pages per block need at least "
                 "%llu blocks per LUN (%llu for data + %u spare for garbage "
                 "collection, gc-high + 1); raise nand-blocks (or set it to 0 "
                 "to derive it from over-provisioning)",
                 (unsigned long long)bpl, (unsigned long long)lpages,
                 (unsigned long long)luns, (unsigned long long)ppb,
                 (unsigned long long)min_blocks,
                 (unsigned long long)data_blocks, gc_high + 1);
        return NULL;
    }
    uint64_t ppages = luns * bpl * ppb;
    if (ppages >= UINT32_MAX) {
        snprintf(err, errlen, "ftl: %llu physical pages (nand-channels x "
                 "nand-luns x nand-blocks x nand-pages-per-block) exceed the "
                 "32-bit address space; lower nand-blocks or "
                 "over-provisioning", (unsigned long long)ppages);
        return NULL;
    }

    struct ftl *f = calloc(1, sizeof(*f));
    if (!f) {
        snprintf(err, errlen, "ftl: out of memory");
        return NULL;
    }
    pthread_mutex_init(&f->lock, NULL);
    f->logical_pages = lpages;
    f->luns = (uint32_t)luns;
    f->channels = cfg->channels;
    f->blocks_per_lun = (uint32_t)bpl;
    f->pages_per_block = (uint32_t)ppb;
    f->physical_pages = ppages;
    f->gc_low = gc_low;
    f->gc_high = gc_high;
    f->precondition = cfg->precondition;
    f->nand = nand_new(cfg, (uint32_t)bpl);
    uint64_t nblocks = luns * bpl;
    f->l2p = calloc(lpages, sizeof(*f->l2p));
    f->p2l = calloc(ppages, sizeof(*f->p2l));
    f->valid = calloc(nblocks, sizeof(*f->valid));
    f->state = calloc(nblocks, sizeof(*f->state));
    f->free_stacks = malloc(nblocks * sizeof(*f->free_stacks));
    f->lun = calloc(luns, sizeof(*f->lun));
    if (!f->nand || !f->l2p || !f->p2l || !f->valid || !f->state ||
        !f->free_stacks || !f->lun) {
        snprintf(err, errlen, "ftl: out of memory for %llu logical / %llu "
                 "physical pages", (unsigned long long)lpages,
                 (unsigned long long)ppages);
        ftl_free(f);
        return NULL;
    }
    for (uint32_t l = 0; l < f->luns; l++) {
        struct ftl_lun *L = &f->lun[l];
        L->open_block = FTL_NONE;
        uint32_t *stack = free_stack(f, l);
        /* Pop order: block 0 first. */
        for (uint32_t b = 0; b < bpl; b++) {
            stack[b] = (uint32_t)bpl - 1 - b;
        }
        L->nfree = (uint32_t)bpl;
    }
    return f;
}

void ftl_free(struct ftl *f)
{
    if (!f) {
        return;
    }
    nand_free(f->nand);
    free(f->l2p);
    free(f->p2l);
    free(f->valid);
    free(f->state);
    free(f->free_stacks);
    free(f->lun);
    pthread_mutex_destroy(&f->lock);
    free(f);
}


/* Next page of @lun's open block, opening a free block if needed.  Host
 * writes (@gc false) may not open the LUN's last free block. */
static cxlssd_ppa lun_alloc(struct ftl *f, uint32_t lun, bool gc)
{
    struct ftl_lun *L = &f->lun[lun];
    if (L->open_block == FTL_NONE) {
        if (L->nfree == 0 || (!gc && L->nfree <= 1)) {
            return FTL_NONE;
        }
        L->open_block = free_stack(f, lun)[--L->nfree];
        L->write_ptr = 0;
        f->state[blk_index(f, lun, L->open_block)] = BLK_OPEN;
    }
    cxlssd_ppa ppa = nand_ppa(f->nand, lun, L->open_block, L->write_ptr);
    if (++L->write_ptr == f->pages_per_block) {
        f->state[blk_index(f, lun, L->open_block)] = BLK_CLOSED;
        L->open_block = FTL_NONE;
    }
    return ppa;
}

static void invalidate(struct ftl *f, cxlssd_ppa ppa)
{
    if (f->p2l_built) {
        f->p2l[ppa] = 0;
    }
    f->valid[ppa / f->pages_per_block]--;   /* block index = ppa / ppb */
}

static void map(struct ftl *f, uint32_t lpn, cxlssd_ppa ppa)
{
    f->l2p[lpn] = ppa + 1;
    if (f->p2l_built) {
        f->p2l[ppa] = lpn + 1;
    }
    f->valid[ppa / f->pages_per_block]++;
}

/* The reverse map from the forward one, when GC first needs it: one
 * pass over l2p (its untouched parts read as the zero page). */
static void p2l_build(struct ftl *f)
{
    for (uint64_t lpn = 0; lpn < f->logical_pages; lpn++) {
        cxlssd_ppa ppa = l2p_get(f, lpn);
        if (ppa != FTL_NONE) {
            f->p2l[ppa] = (uint32_t)lpn + 1;
        }
    }
    f->p2l_built = true;
}

/* Greedy GC on @lun until gc_high blocks are free or nothing can be gained.
 * Every operation is issued at @now; the LUN timeline orders them. */
static void gc_lun(struct ftl *f, uint32_t lun, uint64_t now)
{
    struct ftl_lun *L = &f->lun[lun];
    uint32_t ppb = f->pages_per_block;
    uint64_t base = blk_index(f, lun, 0);

    if (!f->p2l_built) {
        p2l_build(f);
    }

    while (L->nfree < f->gc_high) {
        uint32_t victim = FTL_NONE, vmin = ppb;
        for (uint32_t b = 0; b < f->blocks_per_lun; b++) {
            if (f->state[base + b] == BLK_CLOSED && f->valid[base + b] < vmin) {
                vmin = f->valid[base + b];
                victim = b;
                if (vmin == 0) {
                    break;
                }
            }
        }
        if (victim == FTL_NONE) {
            return;             /* every closed block is fully valid */
        }
        uint64_t room = (uint64_t)L->nfree * ppb +
            (L->open_block == FTL_NONE ? 0 : ppb - L->write_ptr);
        if (vmin > room) {
            return;             /* cannot happen with the GC reserve */
        }
        cxlssd_ppa first = nand_ppa(f->nand, lun, victim, 0);
        for (uint32_t p = 0; p < ppb && f->valid[base + victim] > 0; p++) {
            uint32_t lpn = p2l_get(f, first + p);
            if (lpn == FTL_NONE) {
                continue;
            }
            cxlssd_ppa dst = lun_alloc(f, lun, true);
            nand_read(f->nand, first + p, now);
            nand_program(f->nand, dst, now);
            invalidate(f, first + p);
            map(f, lpn, dst);
            f->st.reads++;
            f->st.nand_writes++;
            f->st.gc_pages_moved++;
        }
        nand_erase(f->nand, lun, victim, now);
        f->state[base + victim] = BLK_FREE;
        free_stack(f, lun)[L->nfree++] = victim;
        f->st.erases++;
        f->st.gc_runs++;
    }
}

uint64_t ftl_read(struct ftl *f, uint64_t lpn, uint64_t now_ns)
{
    uint64_t done = now_ns;
    pthread_mutex_lock(&f->lock);
    cxlssd_ppa ppa = lpn < f->logical_pages ? l2p_get(f, lpn) : FTL_NONE;
    if (ppa != FTL_NONE) {
        f->st.reads++;
        done = nand_read(f->nand, ppa, now_ns);
    } else {
        f->st.zero_page_reads++;
        if (f->precondition) {
            /* Where a sequential fill would have put it. */
            uint32_t lun = (uint32_t)(lpn % f->luns);
            uint64_t idx = lpn / f->luns;
            uint32_t block = (uint32_t)((idx / f->pages_per_block) %
                                        f->blocks_per_lun);
            uint32_t page = (uint32_t)(idx % f->pages_per_block);
            f->st.reads++;
            done = nand_read(f->nand, nand_ppa(f->nand, lun, block, page),
                             now_ns);
        }
    }
    pthread_mutex_unlock(&f->lock);
    return done;
}

uint64_t ftl_write(struct ftl *f, uint64_t lpn, uint64_t now_ns)
{
    return ftl_write_counted(f, lpn, now_ns, NULL);
}

uint64_t ftl_write_counted(struct ftl *f, uint64_t lpn, uint64_t now_ns,
                           uint32_t *gc_runs)
{
    if (lpn >= f->logical_pages) {
        return now_ns;
    }
    pthread_mutex_lock(&f->lock);
    uint64_t gc_before = f->st.gc_runs;
    cxlssd_ppa ppa = FTL_NONE;
    uint32_t lun = f->cursor;
    for (uint32_t tries = 0; tries < f->luns; tries++) {
        if (f->lun[lun].nfree < f->gc_low) {
            gc_lun(f, lun, now_ns);
        }
        ppa = lun_alloc(f, lun, false);
        if (ppa != FTL_NONE) {
            break;
        }
        lun = lun + 1 == f->luns ? 0 : lun + 1;   /* LUN full of valid data */
    }
    uint64_t done = now_ns;
    if (ppa != FTL_NONE) {
        f->cursor = lun + 1 == f->luns ? 0 : lun + 1;
        cxlssd_ppa old = l2p_get(f, lpn);
        if (old != FTL_NONE) {
            invalidate(f, old);
        }
        map(f, (uint32_t)lpn, ppa);
        f->st.host_writes++;
        f->st.nand_writes++;
        done = nand_program(f->nand, ppa, now_ns);
    }
    /* else: impossible by the ftl_new() capacity check; keep the old copy
     * rather than abort. */
    if (gc_runs) {
        *gc_runs += (uint32_t)(f->st.gc_runs - gc_before);
    }
    pthread_mutex_unlock(&f->lock);
    return done;
}

void ftl_place(struct ftl *f, uint64_t lpn)
{
    if (lpn >= f->logical_pages) {
        return;
    }
    pthread_mutex_lock(&f->lock);
    for (uint32_t tries = 0; tries < f->luns; tries++) {
        uint32_t lun = f->cursor;
        f->cursor = lun + 1 == f->luns ? 0 : lun + 1;
        cxlssd_ppa ppa = lun_alloc(f, lun, false);
        if (ppa != FTL_NONE) {
            cxlssd_ppa old = l2p_get(f, lpn);
            if (old != FTL_NONE) {
                invalidate(f, old);
            }
            map(f, (uint32_t)lpn, ppa);
            break;
        }
    }
    pthread_mutex_unlock(&f->lock);
}

void ftl_prefetch(const struct ftl *f, uint64_t lpn)
{
    if (lpn < f->logical_pages) {
        __builtin_prefetch(&f->l2p[lpn]);
    }
}

cxlssd_ppa ftl_lookup(struct ftl *f, uint64_t lpn)
{
    if (lpn >= f->logical_pages) {
        return FTL_NONE;
    }
    pthread_mutex_lock(&f->lock);
    cxlssd_ppa ppa = l2p_get(f, lpn);
    pthread_mutex_unlock(&f->lock);
    return ppa;
}

void ftl_get_stats(struct ftl *f, struct ftl_stats *out)
{
    pthread_mutex_lock(&f->lock);
    *out = f->st;
    pthread_mutex_unlock(&f->lock);
}

uint64_t ftl_channel_busy_ns(struct ftl *f, uint32_t ch)
{
    pthread_mutex_lock(&f->lock);
    uint64_t b = nand_channel_busy_ns(f->nand, ch);
    pthread_mutex_unlock(&f->lock);
    return b;
}

uint32_t ftl_channels(const struct ftl *f)
{
    return f->channels;
}

uint64_t ftl_metadata_bytes(const struct ftl *f)
{
    uint64_t nblocks = (uint64_t)f->luns * f->blocks_per_lun;
    return sizeof(*f) +
        f->logical_pages * sizeof(*f->l2p) +
        f->physical_pages * sizeof(*f->p2l) +
        nblocks * (sizeof(*f->valid) + sizeof(*f->state) +
                   sizeof(*f->free_stacks)) +
        (uint64_t)f->luns * (sizeof(*f->lun) + sizeof(uint64_t)) +
        (uint64_t)f->channels * 64 * 2 * sizeof(uint64_t);
}
