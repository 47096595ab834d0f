/*
 * Internal to the cache engine (model*.c): the model's state and the
 * helpers its files share.  Not part of the interface (see model.h).
 * model.c keeps the miss path and the page-state protocol,
 * model_setup.c creation and reset, model_evict.c background eviction,
 * model_stats.c queries and statistics.
 */
#ifndef CXLSSD_MODEL_MODEL_INT_H
#define CXLSSD_MODEL_MODEL_INT_H

#include <stdatomic.h>

#include "ftl.h"
#include "lock.h"
#include "model.h"
#include "policy.h"

/* The LOADING table's hot part (see model.c). */
#define LD_HOT 4096u

struct ld_entry {
    _Atomic uint32_t page;      /* the page + 1: 0 (LD_EMPTY + 1) if free
                                 * (hot table: or dead), so that the big
                                 * table's untouched part stays untouched
                                 * memory (calloc'd, never swept) */
    uint32_t pad;
    uint64_t deadline_ns;       /* written and read under the mutex */
};
#define LD_EMPTY UINT32_MAX

struct cxlssd_model {
    struct cxlssd_config cfg;
    uint64_t pages;
    uint32_t frames;
    uint32_t nsets, ways;
    const struct policy_ops *pol;
    struct ftl *ftl;

    struct cxlssd_lock lock;    /* policy mutex */
    struct pol_ctx pc;
    struct pol_set *sets;
    uint32_t ghost_total;
    uint32_t bg_cursor;         /* background eviction: next set */

    struct ld_entry *ld_hot;    /* LOADING page -> deadline: hot table */
    struct ld_entry *ld;        /* ... and the big fallback table */
    uint32_t ld_mask;

    uint32_t low_frames, high_frames;   /* background watermarks */
    uint32_t set_high;                  /* per-set high watermark */

    _Atomic uint64_t free_total;
    _Atomic uint64_t pending_total;

    /* statistics: plain ones are updated under the mutex only, atomic
     * ones by the lock-free paths (hits, references) */
    uint64_t st_misses, st_loading_waits, st_ev_clean, st_ev_dirty,
        st_pf_issued, st_pf_late;
    _Atomic uint64_t st_trapped_hits, st_write_hits, st_pf_used;
};

#define RLX memory_order_relaxed

static inline void stat_add(_Atomic uint64_t *c, uint64_t v)
{
    atomic_fetch_add_explicit(c, v, RLX);
}

static inline struct pol_set *set_of(struct cxlssd_model *m, uint64_t page)
{
    return &m->sets[m->nsets == 1 ? 0 : page % m->nsets];
}

/* model_setup.c: every set's order, free list and ghost ring empty, the
 * LOADING table empty.  Policy mutex held (or the model not yet shared). */
void model_sets_reset(struct cxlssd_model *m);

/* model.c: program the dirty victims among @v (after the policy mutex is
 * dropped; the FTL has its own).  Returns the victim blocks garbage
 * collection took on the way. */
uint32_t model_charge_writebacks(struct cxlssd_model *m,
                                 const struct cxlssd_victim *v, uint32_t n,
                                 uint64_t now_ns);

#endif
