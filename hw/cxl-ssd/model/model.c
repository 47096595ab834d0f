/*
 * cxl-ssd cache engine: page states, frames, policies, prefetch, dirty
 * state and statistics in front of the FTL/NAND model.  See model.h for
 * the state machine and the miss protocol.
 *
 * Metadata (1 Mi pages, 5% cache: 2.9 B per device page; the FTL adds
 * ~8.7 B, see bench_model's metadata_* figures):
 *   per device page  1 B   state byte (state, dirty, reference frequency,
 *                           prefetched, ghost, handover), changed by CAS
 *   per frame       13 B   slot -> page, prev/next links, queue id
 *                 + 16-32 B LOADING-deadline table (a power of two > frames)
 *                 +  4 B   S3-FIFO ghost ring (s3fifo only)
 *   fixed           64 KiB hot LOADING table
 *   per set        ~64 B   (one set unless cache-ways is set)
 *
 * Frames: an atomic free-frame counter per set (and in total).  A fill
 * takes a free frame, or else picks a victim whose frame passes straight
 * to the fill (the victim is marked HANDOVER, so its evict_done() does not
 * free a frame).  Victims chosen by the background evictor free their frame
 * at evict_done().  So CACHED + LOADING <= frames at all times and, because
 * the glue unmaps victims before it maps fills, mapped pages (CACHED plus
 * not-yet-unmapped EVICTING) <= frames.  LOADING + CACHED + EVICTING can
 * exceed frames only by the victims whose frame a fill already owns.
 *
 * Locking: one policy mutex (lock.h, a futex mutex), held only for a
 * decision (state CAS for a fill, frame/victim choice, FTL read timing,
 * LOADING table, the plain statistics) -- never while anyone waits.  Page
 * bytes are changed only by CAS, so hits, references, fill_done() and
 * evict_done() run without the mutex.  Writebacks (ftl_write) are issued
 * after the mutex is dropped; the FTL has its own mutex.
 *
 * Cost per miss (bench_model): 4 CAS on page bytes, 2 mutexes (ours and
 * the FTL's), one clock read (decision_end; decision_start is the caller's
 * now_ns), no allocation.  The policy prefetches the next victim
 * candidate's state byte at the end of each decision.
 */
#include "model.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftl.h"
#include "lock.h"
#include "policy.h"

struct ld_entry {
    _Atomic uint32_t page;      /* LD_EMPTY if free (hot table: or dead) */
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

uint64_t cxlssd_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct policy_ops *policy_ops_of(enum cxlssd_policy p)
{
    switch (p) {
    case CXLSSD_POLICY_FIFO: return &cxlssd_policy_fifo;
    case CXLSSD_POLICY_LIFO: return &cxlssd_policy_lifo;
    case CXLSSD_POLICY_CLOCK: return &cxlssd_policy_clock;
    case CXLSSD_POLICY_S3FIFO: return &cxlssd_policy_s3fifo;
    default: return NULL;
    }
}

/* ---- LOADING table: page -> deadline of its fill in flight.
 *
 * Two open-addressing tables: a small hot one (LD_HOT entries, stays in
 * the CPU cache; a page may sit only within LD_WINDOW slots of its hash)
 * and a big fallback one (a power of two > frames, linear probing), used
 * only when the hot window holds nothing reusable (many fills in flight
 * that hash together).  LOADING pages each hold a frame, so live entries
 * never fill the big table.  Inserts and finds run under the mutex;
 * fill_done() kills its hot entry lock-free (ld_kill) and leaves big-table
 * entries to die with the page's LOADING state.  An insert stops at the
 * first reusable entry of the hot window, else of the big table's probe
 * sequence, and a page's stale entries are reusable, so a find (made only
 * for a page seen LOADING under the mutex, whose entry was inserted in the
 * same critical section as its NOT_CACHED -> LOADING CAS) meets the page's
 * current entry first: hot window, then big table.  A find can miss only
 * in the instant between ld_kill() and the CAS of a completing fill; the
 * waiter then gets "deadline now" (its fill is completing).  Inserts land
 * at or next to their hash slot: ~1 probe each. ---- */

#define LD_HOT 4096u
#define LD_WINDOW 8u

static inline uint32_t ld_hash(uint32_t page)
{
    return (uint32_t)((page * 0x9E3779B97F4A7C15ull) >> 32);
}

/* Hot table: reusable if empty/dead or the same page (its stale entry);
 * fill_done() kills its page's hot entry, so no pst read is needed.
 * Big table: entries are never emptied; reusable if empty, the same page,
 * or a page no longer LOADING. */
static inline uint32_t ld_page(const struct ld_entry *e)
{
    return atomic_load_explicit(&e->page, memory_order_relaxed);
}

static void ld_insert(struct cxlssd_model *m, uint32_t page, uint64_t dl)
{
    uint32_t h = ld_hash(page);
    for (uint32_t n = 0; n < LD_WINDOW; n++) {
        struct ld_entry *e = &m->ld_hot[(h + n) & (LD_HOT - 1)];
        uint32_t ep = ld_page(e);
        if (ep == LD_EMPTY || ep == page) {
            e->deadline_ns = dl;
            atomic_store_explicit(&e->page, page, memory_order_relaxed);
            return;
        }
    }
    uint32_t i = h & m->ld_mask;
    for (uint32_t n = 0; n <= m->ld_mask; n++) {
        struct ld_entry *e = &m->ld[i];
        uint32_t ep = ld_page(e);
        if (ep == LD_EMPTY || ep == page ||
            ps_state(atomic_load_explicit(&m->pc.pst[ep],
                                          memory_order_relaxed)) !=
            CXLSSD_LOADING) {
            e->deadline_ns = dl;
            atomic_store_explicit(&e->page, page, memory_order_relaxed);
            return;
        }
        i = (i + 1) & m->ld_mask;
    }
    /* unreachable: live entries <= frames < big table size */
}

/* Under the mutex.  The hot window is scanned whole (killed entries leave
 * holes); the big table's probe sequence ends at an empty entry. */
static struct ld_entry *ld_find(struct cxlssd_model *m, uint32_t page)
{
    uint32_t h = ld_hash(page);
    for (uint32_t n = 0; n < LD_WINDOW; n++) {
        struct ld_entry *e = &m->ld_hot[(h + n) & (LD_HOT - 1)];
        if (ld_page(e) == page) {
            return e;
        }
    }
    uint32_t i = h & m->ld_mask;
    for (uint32_t n = 0; n <= m->ld_mask; n++) {
        struct ld_entry *e = &m->ld[i];
        uint32_t ep = ld_page(e);
        if (ep == page) {
            return e;
        }
        if (ep == LD_EMPTY) {
            return NULL;
        }
        i = (i + 1) & m->ld_mask;
    }
    return NULL;
}

/* fill_done(), lock-free, before the LOADING -> CACHED CAS: kill @page's
 * hot entry.  Nobody else writes it meanwhile (it is not reusable for
 * another page, and @page cannot start another fill while LOADING). */
static void ld_kill(struct cxlssd_model *m, uint32_t page)
{
    uint32_t h = ld_hash(page);
    for (uint32_t n = 0; n < LD_WINDOW; n++) {
        struct ld_entry *e = &m->ld_hot[(h + n) & (LD_HOT - 1)];
        if (ld_page(e) == page) {
            atomic_store_explicit(&e->page, LD_EMPTY, memory_order_relaxed);
            return;
        }
    }
}

/* ---- sets and frames ---- */

static inline struct pol_set *set_of(struct cxlssd_model *m, uint64_t page)
{
    return &m->sets[m->nsets == 1 ? 0 : page % m->nsets];
}

static void sets_reset(struct cxlssd_model *m)
{
    uint32_t ghost_base = 0;
    for (uint32_t s = 0; s < m->nsets; s++) {
        struct pol_set *ps = &m->sets[s];
        ps->base = s * m->ways;
        ps->n = m->ways;
        m->pol->reset(&m->pc, ps);
        /* free slot list: base, base+1, ... */
        ps->free_head = POL_NIL;
        for (uint32_t i = ps->n; i-- > 0;) {
            uint32_t slot = ps->base + i;
            m->pc.q[slot] = POL_Q_FREE;
            m->pc.next[slot] = ps->free_head;
            m->pc.prev[slot] = POL_NIL;
            m->pc.slot_page[slot] = 0;
            ps->free_head = slot;
        }
        atomic_store(&ps->nfree, ps->n);
        atomic_store(&ps->pending, 0);
        ps->small_target = ps->n / 10 ? ps->n / 10 : 1;
        if (m->pol == &cxlssd_policy_s3fifo) {
            ps->ghost_cap = ps->n - (ps->small_target < ps->n ?
                                     ps->small_target : ps->n);
            ps->ghost_base = ghost_base;
            ghost_base += ps->ghost_cap;
        } else {
            ps->ghost_cap = 0;
            ps->ghost_base = 0;
        }
        ps->ghost_head = ps->ghost_len = 0;
    }
    atomic_store(&m->free_total, m->frames);
    atomic_store(&m->pending_total, 0);

    m->bg_cursor = 0;
    for (uint32_t i = 0; i <= m->ld_mask; i++) {
        atomic_store_explicit(&m->ld[i].page, LD_EMPTY, RLX);
    }
    for (uint32_t i = 0; i < LD_HOT; i++) {
        atomic_store_explicit(&m->ld_hot[i].page, LD_EMPTY, RLX);
    }
}

/*
 * Get a frame in @ps for a new page: a free one, or a victim (CACHED ->
 * EVICTING|HANDOVER) whose frame passes to the new page.  Returns the slot
 * or POL_NIL; a victim is appended to out->victims.  Policy mutex held.
 */
static uint32_t acquire_frame(struct cxlssd_model *m, struct pol_set *ps,
                              struct cxlssd_miss *out)
{
    if (atomic_load_explicit(&ps->nfree, memory_order_acquire) > 0) {
        /* only mutex holders decrement, so this cannot underflow */
        atomic_fetch_sub_explicit(&ps->nfree, 1, memory_order_acq_rel);
        atomic_fetch_sub_explicit(&m->free_total, 1, memory_order_acq_rel);
        uint32_t slot = ps->free_head;
        ps->free_head = m->pc.next[slot];
        return slot;
    }
    uint8_t old;
    uint32_t slot = m->pol->pick(&m->pc, ps, PS_HANDOVER, &old);
    if (slot == POL_NIL) {
        return POL_NIL;
    }
    struct cxlssd_victim *v = &out->victims[out->nvictims++];
    v->page = m->pc.slot_page[slot];
    v->dirty = (old & PS_DIRTY) != 0;
    if (v->dirty) {
        m->st_ev_dirty++;
    } else {
        m->st_ev_clean++;
    }
    return slot;
}

/* Set bits in a page byte by CAS if its state is in @states (bitmask of
 * 1 << state).  Returns the byte before the change, or the current byte
 * with *changed false if the state did not match. */
static uint8_t ps_update(struct cxlssd_model *m, uint64_t page,
                         unsigned states, uint8_t set, uint8_t clear,
                         bool *changed)
{
    _Atomic uint8_t *p = &m->pc.pst[page];
    uint8_t b = atomic_load_explicit(p, memory_order_acquire);
    for (;;) {
        if (!(states & (1u << ps_state(b)))) {
            *changed = false;
            return b;
        }
        uint8_t nb = (uint8_t)((b & ~clear) | set);
        if (nb == b) {
            *changed = false;
            return b;
        }
        if (atomic_compare_exchange_weak_explicit(p, &b, nb,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *changed = true;
            return b;
        }
    }
}

/*
 * An access to a resident or loading page: reference (frequency +1,
 * saturating), dirty on write, first use of a prefetched page.  Returns the
 * byte before.  *used: this access consumed the prefetched bit.
 */
static uint8_t ps_access(struct cxlssd_model *m, uint64_t page, bool write,
                         unsigned states, bool *ok, bool *dirtied,
                         bool *used)
{
    _Atomic uint8_t *p = &m->pc.pst[page];
    uint8_t b = atomic_load_explicit(p, memory_order_acquire);
    unsigned fmax = m->pol->freq_max;
    for (;;) {
        if (!(states & (1u << ps_state(b)))) {
            *ok = *dirtied = *used = false;
            return b;
        }
        unsigned f = ps_freq(b);
        uint8_t nb = ps_with_freq(b, f < fmax ? f + 1 : f);
        if (write) {
            nb |= PS_DIRTY;
        }
        nb &= (uint8_t)~PS_PREFETCHED;
        if (nb == b || atomic_compare_exchange_weak_explicit(
                p, &b, nb, memory_order_acq_rel, memory_order_acquire)) {
            *ok = true;
            *dirtied = write && !(b & PS_DIRTY);
            *used = (b & PS_PREFETCHED) != 0;
            return b;
        }
    }
}

/* ---- lifecycle ---- */

struct cxlssd_model *cxlssd_model_new(const struct cxlssd_config *cfg,
                                      char *err, size_t errlen)
{
    if (cxlssd_config_validate(cfg, err, errlen) < 0) {
        return NULL;
    }
    uint64_t frames = cxlssd_config_cache_frames(cfg);
    if (frames > UINT32_MAX / 2) {
        snprintf(err, errlen, "cache-size=%llu: at most %u frames supported",
                 (unsigned long long)cfg->cache_size, UINT32_MAX / 2);
        return NULL;
    }
    struct cxlssd_model *m = calloc(1, sizeof(*m));
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->cfg = *cfg;
    m->pages = cxlssd_config_pages(cfg);
    m->frames = (uint32_t)frames;
    m->ways = cfg->cache_ways ? cfg->cache_ways : m->frames;
    m->nsets = m->frames / m->ways;
    m->pol = policy_ops_of(cfg->policy);
    cxlssd_lock_init(&m->lock);

    m->ftl = ftl_new(cfg, err, errlen);
    if (!m->ftl) {
        free(m);
        return NULL;
    }

    uint32_t ldn = 16;
    while (ldn <= m->frames) {
        ldn <<= 1;
    }
    m->ld_mask = ldn - 1;

    m->pc.pst = calloc(m->pages, sizeof(*m->pc.pst));
    m->pc.slot_page = calloc(m->frames, sizeof(uint32_t));
    m->pc.prev = calloc(m->frames, sizeof(uint32_t));
    m->pc.next = calloc(m->frames, sizeof(uint32_t));
    m->pc.q = calloc(m->frames, 1);
    m->sets = calloc(m->nsets, sizeof(*m->sets));
    m->ld = calloc(ldn, sizeof(*m->ld));
    m->ld_hot = calloc(LD_HOT, sizeof(*m->ld_hot));
    m->ghost_total = m->pol == &cxlssd_policy_s3fifo ? m->frames : 0;
    m->pc.ghost = calloc(m->ghost_total ? m->ghost_total : 1,
                         sizeof(uint32_t));
    if (!m->pc.pst || !m->pc.slot_page || !m->pc.prev || !m->pc.next ||
        !m->pc.q || !m->sets || !m->ld || !m->ld_hot || !m->pc.ghost) {
        snprintf(err, errlen, "out of memory for %llu pages / %u frames",
                 (unsigned long long)m->pages, m->frames);
        cxlssd_model_free(m);
        return NULL;
    }
    for (uint64_t i = 0; i < m->pages; i++) {
        atomic_init(&m->pc.pst[i], 0);
    }

    m->low_frames = (uint32_t)((uint64_t)m->frames * cfg->evict_low_pct
                               / 100);
    m->high_frames = (uint32_t)(((uint64_t)m->frames * cfg->evict_high_pct
                                 + 99) / 100);
    if (m->high_frames == 0) {
        m->high_frames = 1;
    }
    if (m->low_frames >= m->high_frames) {
        m->low_frames = m->high_frames - 1;
    }
    m->set_high = (uint32_t)(((uint64_t)m->ways * cfg->evict_high_pct + 99)
                             / 100);
    if (m->set_high == 0) {
        m->set_high = 1;
    }
    sets_reset(m);
    return m;
}

void cxlssd_model_free(struct cxlssd_model *m)
{
    if (!m) {
        return;
    }
    if (m->ftl) {
        ftl_free(m->ftl);
    }
    free(m->pc.pst);
    free(m->pc.slot_page);
    free(m->pc.prev);
    free(m->pc.next);
    free(m->pc.q);
    free(m->pc.ghost);
    free(m->sets);
    free(m->ld);
    free(m->ld_hot);
    free(m);
}

const struct cxlssd_config *cxlssd_model_config(const struct cxlssd_model *m)
{
    return &m->cfg;
}

void cxlssd_model_reset_residency(struct cxlssd_model *m)
{
    cxlssd_lock(&m->lock);
    for (uint64_t i = 0; i < m->pages; i++) {
        atomic_store_explicit(&m->pc.pst[i], 0, RLX);
    }
    sets_reset(m);
    cxlssd_unlock(&m->lock);
}

/* ---- miss path ---- */

static void finish(struct cxlssd_miss *out)
{
    out->decision_end_ns = cxlssd_now_ns();
}

/* Dirty victims: program them (after the mutex is dropped; the FTL has
 * its own).  Counted as clean/dirty evictions when chosen. */
static void charge_writebacks(struct cxlssd_model *m,
                              const struct cxlssd_victim *v, uint32_t n,
                              uint64_t now_ns)
{
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].dirty) {
            ftl_write(m->ftl, v[i].page, now_ns);
        }
    }
}

/* Start a LOADING page's fill in its set.  Mutex held; the byte is
 * NOT_CACHED (@b).  Returns false (byte restored) if no frame can be had. */
static bool start_fill(struct cxlssd_model *m, uint64_t page, uint8_t b,
                       uint8_t newbits, uint64_t now_ns,
                       struct cxlssd_miss *out, uint64_t *deadline)
{
    _Atomic uint8_t *p = &m->pc.pst[page];
    uint8_t nb = (uint8_t)(CXLSSD_LOADING | newbits);
    bool ghost = (b & PS_GHOST) != 0;
    /* Nobody else changes a NOT_CACHED byte without the mutex (evict_done
     * works on EVICTING bytes, hits on CACHED ones), but keep it a CAS. */
    while (!atomic_compare_exchange_weak_explicit(p, &b, nb,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
        if (ps_state(b) != CXLSSD_NOT_CACHED) {
            return false;
        }
        ghost = (b & PS_GHOST) != 0;
    }
    struct pol_set *ps = set_of(m, page);
    uint32_t slot = acquire_frame(m, ps, out);
    if (slot == POL_NIL) {
        /* back to NOT_CACHED (by CAS: lock-free writers may have set the
         * dirty bit meanwhile; it is dropped with the aborted fill) */
        uint8_t cur = atomic_load_explicit(p, memory_order_acquire);
        while (!atomic_compare_exchange_weak_explicit(
                   p, &cur, (uint8_t)(ghost ? PS_GHOST : 0),
                   memory_order_acq_rel, memory_order_acquire)) {
        }
        return false;
    }
    m->pol->insert(&m->pc, ps, slot, (uint32_t)page, ghost);
    *deadline = ftl_read(m->ftl, page, now_ns);
    ld_insert(m, (uint32_t)page, *deadline);
    return true;
}

void cxlssd_miss(struct cxlssd_model *m, uint64_t page, bool write,
                 uint64_t now_ns, struct cxlssd_miss *out)
{
    /* @now_ns is read by the caller right before the call (both glues pass
     * cxlssd_now_ns()): it is the decision start; a second clock read here
     * would cost 50-80 ns with kvm-clock. */
    out->decision_start_ns = now_ns;
    out->page = page;
    out->write = write;
    out->deadline_ns = now_ns;
    out->nvictims = 0;
    out->nprefetch = 0;
    out->prefetch_hit = false;

    if (page >= m->pages) {
        /* out of range: nothing to load (the glue never maps it) */
        out->outcome = CXLSSD_MISS_RESIDENT;
        finish(out);
        return;
    }

    _Atomic uint8_t *p = &m->pc.pst[page];
    /* The map entry's cache miss overlaps this page's state miss instead of
     * waiting behind the lock. */
    ftl_prefetch(m->ftl, page);
    for (;;) {
        uint8_t b = atomic_load_explicit(p, memory_order_acquire);
        switch (ps_state(b)) {
        case CXLSSD_CACHED: {
            bool ok, dirtied, used;
            ps_access(m, page, write, 1u << CXLSSD_CACHED, &ok, &dirtied,
                      &used);
            if (!ok) {
                continue;
            }
            if (dirtied) {
                stat_add(&m->st_write_hits, 1);
            }
            if (used) {
                stat_add(&m->st_pf_used, 1);
            }
            out->outcome = CXLSSD_MISS_RESIDENT;
            finish(out);
            return;
        }
        case CXLSSD_EVICTING:
            out->outcome = CXLSSD_MISS_EVICTING;
            finish(out);
            return;
        case CXLSSD_LOADING: {
            cxlssd_lock(&m->lock);
            if (ps_state(atomic_load_explicit(p, memory_order_acquire)) !=
                CXLSSD_LOADING) {
                cxlssd_unlock(&m->lock);
                continue;       /* fill completed meanwhile */
            }
            struct ld_entry *e = ld_find(m, (uint32_t)page);
            /* no entry: the fill is completing right now (see ld_kill) */
            out->deadline_ns = e ? e->deadline_ns : now_ns;
            /* reference; the write itself is marked dirty when the waiter
             * retries and finds the page CACHED */
            bool ok, dirtied, used;
            ps_access(m, page, false,
                      (1u << CXLSSD_LOADING) | (1u << CXLSSD_CACHED), &ok,
                      &dirtied, &used);
            m->st_loading_waits++;
            if (used) {
                m->st_pf_late++;
                out->prefetch_hit = true;
            }
            cxlssd_unlock(&m->lock);
            if (used) {
                stat_add(&m->st_pf_used, 1);
            }
            out->outcome = CXLSSD_MISS_LOADING;
            finish(out);
            return;
        }
        case CXLSSD_NOT_CACHED:
        default: {
            cxlssd_lock(&m->lock);
            b = atomic_load_explicit(p, memory_order_acquire);
            if (ps_state(b) != CXLSSD_NOT_CACHED) {
                cxlssd_unlock(&m->lock);
                continue;
            }
            uint64_t dl;
            if (!start_fill(m, page, b, write ? PS_DIRTY : 0, now_ns, out,
                            &dl)) {
                cxlssd_unlock(&m->lock);
                /* every frame of the set is loading or being evicted */
                out->outcome = CXLSSD_MISS_EVICTING;
                finish(out);
                return;
            }
            out->deadline_ns = dl;
            /* next-N prefetch */
            uint32_t n = m->cfg.prefetch;
            for (uint32_t i = 1; i <= n; i++) {
                uint64_t q = page + i;
                if (q >= m->pages) {
                    break;
                }
                uint8_t qb = atomic_load_explicit(&m->pc.pst[q],
                                                  memory_order_acquire);
                if (ps_state(qb) != CXLSSD_NOT_CACHED) {
                    continue;   /* resident or loading already */
                }
                uint64_t qdl;
                if (!start_fill(m, q, qb, PS_PREFETCHED, now_ns, out,
                                &qdl)) {
                    if (ps_state(atomic_load_explicit(
                            &m->pc.pst[q], memory_order_acquire)) ==
                        CXLSSD_NOT_CACHED) {
                        break;  /* no frame left for prefetching */
                    }
                    continue;
                }
                out->prefetch[out->nprefetch].page = q;
                out->prefetch[out->nprefetch].deadline_ns = qdl;
                out->nprefetch++;
            }
            m->st_misses++;
            m->st_pf_issued += out->nprefetch;
            if (m->pol->hint) {
                m->pol->hint(&m->pc, set_of(m, page));
            }
            cxlssd_unlock(&m->lock);

            charge_writebacks(m, out->victims, out->nvictims, now_ns);
            out->outcome = CXLSSD_MISS_FILL;
            finish(out);
            return;
        }
        }
    }
}

void cxlssd_evict_done(struct cxlssd_model *m, uint64_t page)
{
    if (page >= m->pages) {
        return;
    }
    _Atomic uint8_t *p = &m->pc.pst[page];
    uint8_t b = atomic_load_explicit(p, memory_order_acquire);
    for (;;) {
        if (ps_state(b) != CXLSSD_EVICTING) {
            return;             /* not ours to finish (bad call) */
        }
        uint8_t nb = (uint8_t)(CXLSSD_NOT_CACHED | (b & PS_GHOST));
        if (atomic_compare_exchange_weak_explicit(p, &b, nb,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            break;
        }
    }
    if (!(b & PS_HANDOVER)) {
        struct pol_set *ps = set_of(m, page);
        atomic_fetch_sub_explicit(&ps->pending, 1, memory_order_acq_rel);
        atomic_fetch_sub_explicit(&m->pending_total, 1, memory_order_acq_rel);
        /* free_total first: an acquirer that sees nfree > 0 then also sees
         * this frame in free_total, so free_total never dips below zero. */
        atomic_fetch_add_explicit(&m->free_total, 1, memory_order_acq_rel);
        atomic_fetch_add_explicit(&ps->nfree, 1, memory_order_acq_rel);
    }
}

void cxlssd_fill_done(struct cxlssd_model *m, uint64_t page)
{
    if (page >= m->pages) {
        return;
    }
    /* LOADING -> CACHED; its LOADING-table entry dies first */
    _Atomic uint8_t *p = &m->pc.pst[page];
    uint8_t b = atomic_load_explicit(p, memory_order_acquire);
    if (ps_state(b) != CXLSSD_LOADING) {
        return;
    }
    ld_kill(m, (uint32_t)page);
    while (ps_state(b) == CXLSSD_LOADING &&
           !atomic_compare_exchange_weak_explicit(
               p, &b, (uint8_t)((b & ~PS_STATE) | CXLSSD_CACHED),
               memory_order_acq_rel, memory_order_acquire)) {
    }
}

bool cxlssd_hit(struct cxlssd_model *m, uint64_t page, bool write)
{
    if (page >= m->pages) {
        return false;
    }
    bool ok, dirtied, used;
    ps_access(m, page, write, 1u << CXLSSD_CACHED, &ok, &dirtied, &used);
    if (!ok) {
        return false;
    }
    stat_add(&m->st_trapped_hits, 1);
    if (dirtied) {
        stat_add(&m->st_write_hits, 1);
    }
    if (used) {
        stat_add(&m->st_pf_used, 1);
    }
    return true;
}

void cxlssd_mark_dirty(struct cxlssd_model *m, uint64_t page)
{
    if (page >= m->pages) {
        return;
    }
    bool changed;
    ps_update(m, page, (1u << CXLSSD_CACHED) | (1u << CXLSSD_LOADING),
              PS_DIRTY, 0, &changed);
    if (changed) {
        stat_add(&m->st_write_hits, 1);
    }
}

/* ---- background eviction ---- */

bool cxlssd_evict_needed(const struct cxlssd_model *m)
{
    return atomic_load_explicit(&m->free_total, memory_order_acquire) <
           m->low_frames;
}

uint32_t cxlssd_evict_background(struct cxlssd_model *m, uint64_t now_ns,
                                 struct cxlssd_victim *victims, uint32_t max)
{
    uint32_t n = 0;
    if (max == 0 || !victims) {
        return 0;
    }
    cxlssd_lock(&m->lock);
    uint64_t avail = atomic_load(&m->free_total) +
                     atomic_load(&m->pending_total);
    uint32_t idle = 0;          /* consecutive sets without a victim */
    while (n < max && avail + n < m->high_frames && idle < m->nsets) {
        struct pol_set *ps = &m->sets[m->bg_cursor];
        if (++m->bg_cursor == m->nsets) {
            m->bg_cursor = 0;
        }
        if (m->nsets > 1 &&
            atomic_load(&ps->nfree) + atomic_load(&ps->pending) >=
            m->set_high) {
            idle++;
            continue;
        }
        uint8_t old;
        uint32_t slot = m->pol->pick(&m->pc, ps, 0, &old);
        if (slot == POL_NIL) {
            idle++;
            continue;
        }
        idle = 0;
        victims[n].page = m->pc.slot_page[slot];
        victims[n].dirty = (old & PS_DIRTY) != 0;
        if (victims[n].dirty) {
            m->st_ev_dirty++;
        } else {
            m->st_ev_clean++;
        }
        n++;
        /* the slot leaves the order now; its frame is freed at evict_done */
        m->pc.q[slot] = POL_Q_FREE;
        m->pc.next[slot] = ps->free_head;
        ps->free_head = slot;
        atomic_fetch_add(&ps->pending, 1);
        atomic_fetch_add(&m->pending_total, 1);
    }
    cxlssd_unlock(&m->lock);
    charge_writebacks(m, victims, n, now_ns);
    return n;
}

/* ---- queries ---- */

enum cxlssd_page_state cxlssd_page_state(const struct cxlssd_model *m,
                                         uint64_t page)
{
    if (page >= m->pages) {
        return CXLSSD_NOT_CACHED;
    }
    return (enum cxlssd_page_state)ps_state(
        atomic_load_explicit(&m->pc.pst[page], memory_order_acquire));
}

bool cxlssd_page_dirty(const struct cxlssd_model *m, uint64_t page)
{
    if (page >= m->pages) {
        return false;
    }
    uint8_t b = atomic_load_explicit(&m->pc.pst[page], memory_order_acquire);
    return ps_state(b) != CXLSSD_NOT_CACHED && (b & PS_DIRTY);
}

uint64_t cxlssd_model_pages(const struct cxlssd_model *m)
{
    return m->pages;
}

uint64_t cxlssd_model_frames(const struct cxlssd_model *m)
{
    return m->frames;
}

void cxlssd_model_get_stats(struct cxlssd_model *m, struct cxlssd_stats *out)
{
    memset(out, 0, sizeof(*out));
    cxlssd_lock(&m->lock);
    out->misses = m->st_misses;
    out->loading_waits = m->st_loading_waits;
    out->evictions_clean = m->st_ev_clean;
    out->evictions_dirty = m->st_ev_dirty;
    out->prefetch_issued = m->st_pf_issued;
    out->prefetch_late = m->st_pf_late;
    cxlssd_unlock(&m->lock);
    out->trapped_hits = atomic_load_explicit(&m->st_trapped_hits, RLX);
    out->write_hits = atomic_load_explicit(&m->st_write_hits, RLX);
    out->prefetch_used = atomic_load_explicit(&m->st_pf_used, RLX);
    /* counted here rather than kept in a counter: saves an atomic
     * read-modify-write on every miss; ~0.1 ms per Mi pages */
    uint64_t resident = 0;
    for (uint64_t i = 0; i < m->pages; i++) {
        resident += ps_state(atomic_load_explicit(&m->pc.pst[i], RLX)) !=
                    CXLSSD_NOT_CACHED;
    }
    out->resident_pages = resident;
    out->free_frames = atomic_load_explicit(&m->free_total, RLX);

    struct ftl_stats fs;
    ftl_get_stats(m->ftl, &fs);
    out->gc_runs = fs.gc_runs;
    out->gc_pages_moved = fs.gc_pages_moved;
    out->erases = fs.erases;
    out->nand_reads = fs.reads;
    out->nand_writes = fs.nand_writes;
    out->host_writes = fs.host_writes;
    out->waf = ftl_waf(m->ftl);
    uint32_t ch = ftl_channels(m->ftl);
    if (ch > 256) {
        ch = 256;
    }
    out->channels = ch;
    for (uint32_t i = 0; i < ch; i++) {
        out->channel_busy_ns[i] = ftl_channel_busy_ns(m->ftl, i);
    }
}

uint64_t cxlssd_model_cache_metadata_bytes(const struct cxlssd_model *m)
{
    uint64_t b = m->pages * sizeof(uint8_t);                    /* pst */
    b += (uint64_t)m->frames * (3 * sizeof(uint32_t) + 1);      /* slots */
    b += (uint64_t)(m->ld_mask + 1 + LD_HOT) * sizeof(struct ld_entry);
    b += (uint64_t)m->ghost_total * sizeof(uint32_t);           /* ghosts */
    b += (uint64_t)m->nsets * sizeof(struct pol_set);
    b += sizeof(*m);
    return b;
}

struct ftl *cxlssd_model_ftl(struct cxlssd_model *m)
{
    return m->ftl;
}

double cxlssd_model_metadata_bytes_per_page(const struct cxlssd_model *m)
{
    uint64_t b = cxlssd_model_cache_metadata_bytes(m) +
                 ftl_metadata_bytes(m->ftl);
    return (double)b / (double)m->pages;
}
