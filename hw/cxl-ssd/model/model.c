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

#include "model_int.h"

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
    /* stored + 1 (model_int.h): an untouched, zeroed entry is LD_EMPTY */
    return atomic_load_explicit(&e->page, memory_order_relaxed) - 1u;
}

static inline void ld_set(struct ld_entry *e, uint32_t page)
{
    atomic_store_explicit(&e->page, page + 1u, memory_order_relaxed);
}

static void ld_insert(struct cxlssd_model *m, uint32_t page, uint64_t dl)
{
    CXLSSD_LOCK_ASSERT_HELD(&m->lock);
    uint32_t h = ld_hash(page);
    for (uint32_t n = 0; n < LD_WINDOW; n++) {
        struct ld_entry *e = &m->ld_hot[(h + n) & (LD_HOT - 1)];
        uint32_t ep = ld_page(e);
        if (ep == LD_EMPTY || ep == page) {
            e->deadline_ns = dl;
            ld_set(e, page);
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
            ld_set(e, page);
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
    CXLSSD_LOCK_ASSERT_HELD(&m->lock);
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
            ld_set(e, LD_EMPTY);
            return;
        }
    }
}

/* ---- sets and frames ---- */

/*
 * Get a frame in @ps for a new page: a free one, or a victim (CACHED ->
 * EVICTING|HANDOVER) whose frame passes to the new page.  Returns the slot
 * or POL_NIL; a victim is appended to out->victims.  Policy mutex held.
 */
static uint32_t acquire_frame(struct cxlssd_model *m, struct pol_set *ps,
                              struct cxlssd_miss *out)
{
    CXLSSD_LOCK_ASSERT_HELD(&m->lock);
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

/* ---- miss path ---- */

/* The lock-free statistics of an access ps_access() applied. */
static void count_access(struct cxlssd_model *m, bool dirtied, bool used)
{
    if (dirtied) {
        stat_add(&m->st_write_hits, 1);
    }
    if (used) {
        stat_add(&m->st_pf_used, 1);
    }
}

static void finish(struct cxlssd_miss *out, enum cxlssd_miss_outcome outcome)
{
    out->outcome = outcome;
    out->decision_end_ns = cxlssd_now_ns();
}

/* Counted as clean/dirty evictions when chosen. */
uint32_t model_charge_writebacks(struct cxlssd_model *m,
                                 const struct cxlssd_victim *v, uint32_t n,
                                 uint64_t now_ns)
{
    uint32_t gc_runs = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].dirty) {
            ftl_write_counted(m->ftl, v[i].page, now_ns, &gc_runs);
        }
    }
    return gc_runs;
}

/* Start a LOADING page's fill in its set.  Mutex held; the byte is
 * NOT_CACHED (@b).  Returns false (byte restored) if no frame can be had. */
static bool start_fill(struct cxlssd_model *m, uint64_t page, uint8_t b,
                       uint8_t newbits, uint64_t now_ns,
                       struct cxlssd_miss *out, uint64_t *deadline)
{
    CXLSSD_LOCK_ASSERT_HELD(&m->lock);
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
    out->gc_runs = 0;
    out->prefetch_hit = false;

    if (page >= m->pages) {
        /* out of range: nothing to load (the glue never maps it) */
        finish(out, CXLSSD_MISS_RESIDENT);
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
            count_access(m, dirtied, used);
            finish(out, CXLSSD_MISS_RESIDENT);
            return;
        }
        case CXLSSD_EVICTING:
            finish(out, CXLSSD_MISS_EVICTING);
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
            finish(out, CXLSSD_MISS_LOADING);
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
                finish(out, CXLSSD_MISS_EVICTING);
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

            out->gc_runs = model_charge_writebacks(m, out->victims,
                                                   out->nvictims, now_ns);
            finish(out, CXLSSD_MISS_FILL);
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
    count_access(m, dirtied, used);
    return true;
}

void cxlssd_mark_dirty(struct cxlssd_model *m, uint64_t page)
{
    if (page >= m->pages) {
        return;
    }
    bool changed;
    /* EVICTING too: a write can land between the victim's choice and its
     * unmap (its write-protect fault is served meanwhile), and whoever
     * writes the victim back (the media store) reads the bit after the
     * unmap; the model charged the writeback at the choice */
    ps_update(m, page, (1u << CXLSSD_CACHED) | (1u << CXLSSD_LOADING) |
                       (1u << CXLSSD_EVICTING),
              PS_DIRTY, 0, &changed);
    if (changed) {
        stat_add(&m->st_write_hits, 1);
    }
}

bool cxlssd_mark_dirty_resident(struct cxlssd_model *m, uint64_t page)
{
    if (page >= m->pages) {
        return false;
    }
    bool changed;
    uint8_t b = ps_update(m, page, 1u << CXLSSD_CACHED, PS_DIRTY, 0,
                          &changed);
    if (changed) {
        stat_add(&m->st_write_hits, 1);
    }
    return ps_state(b) == CXLSSD_CACHED;
}
