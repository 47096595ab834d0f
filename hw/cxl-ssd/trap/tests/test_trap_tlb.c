/*
 * Trap engine, access-path delivery (CXLSSD_DELIVERY_TLB) without QEMU:
 * each accessing thread keeps a software "TLB" (per page: no entry, read,
 * read/write), calls cxlssd_trap_tlb_fill() before it uses a page it has no
 * (or only a read) entry for, as TCG's TLB fill does, and the trap's
 * unmapped() hook drops the entries of unmapped pages.  Then:
 *  - two threads read a pattern through the registered view over 16x the
 *    cache, then write a new one in disjoint halves (read first, so the
 *    store needs a second fill of a clean page), then verify through the
 *    plain view and the registered one, for eviction sync and background:
 *    no mismatch, the misses come through the fill (tlb_fill_misses +
 *    host_route_misses >= misses, host_route_misses <= misses / 10), the first stores mark pages dirty (dirty evictions), a clean
 *    page's fill is read-only under dirty tracking; and again with
 *    keep_clean_mapped (as the QEMU device runs it): clean victims stay
 *    mapped on the host (victims_kept_mapped > 0, only dirty ones
 *    unmapped), same data;
 *  - keep_clean_mapped: a store that does not come through the fill (QEMU's
 *    DMA) to a page evicted clean and left mapped write-protect faults and
 *    is served as a write miss: resident, dirty, its data kept, and its
 *    next eviction unmaps it (dirty); refused with another delivery;
 *  - without keep_clean_mapped, an access through an entry the hook did
 *    not drop (a stale one: the hook is off) still gets its data, through
 *    the poll handler (host_route_misses > 0): the safety net.
 */
#include <pthread.h>

#include "trap_test.h"

#define NPAGES 512
#define FRAMES 32
#define THREADS 2

/* per-thread software TLB: 0 none, 1 read, 2 read/write */
static _Atomic unsigned char soft_tlb[THREADS][NPAGES];
static atomic_bool drop_entries = true;
static _Atomic uint64_t readonly_fills, bad_fills;

static void unmapped(void *opaque, uint64_t first, uint64_t n)
{
    (void)opaque;
    if (!atomic_load(&drop_entries)) {
        return;
    }
    for (int t = 0; t < THREADS; t++) {
        for (uint64_t p = first; p < first + n && p < NPAGES; p++) {
            atomic_store(&soft_tlb[t][p], 0);
        }
    }
}

struct job {
    struct env *e;
    struct cxlssd_trap *t;
    int id;             /* soft TLB index, half to write */
    int op;             /* 0 verify all, 1 write half */
    uint64_t seed;
    uint64_t bad;
};

/* What the TLB-fill path does before an access to page @p. */
static void fill(struct job *j, uint64_t p, bool write)
{
    unsigned char have = atomic_load(&soft_tlb[j->id][p]);
    if (have == 2 || (have == 1 && !write)) {
        return;
    }
    bool w = cxlssd_trap_tlb_fill(j->t, p * PG, write);
    if (write && !w) {
        atomic_fetch_add(&bad_fills, 1);    /* a store must be allowed */
    }
    if (!w) {
        atomic_fetch_add(&readonly_fills, 1);
    }
    atomic_store(&soft_tlb[j->id][p], w ? 2 : 1);
}

static void *worker(void *arg)
{
    struct job *j = arg;
    struct env *e = j->e;
    if (j->op == 0) {
        for (uint64_t p = 0; p < e->npages; p++) {
            fill(j, p, false);
            j->bad += check_page(e->a, p, j->seed);
        }
        return NULL;
    }
    uint64_t lo = j->id ? e->npages / 2 : 0, n = e->npages / 2;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t p = lo + (k * 37) % n;
        fill(j, p, false);
        (void)*(volatile uint64_t *)(e->a + p * PG);
        fill(j, p, true);
        uint64_t *w = (uint64_t *)(e->a + p * PG);
        for (uint64_t i = 0; i < PG / 8; i++) {
            w[i] = pat(j->seed, p, i);
        }
    }
    return NULL;
}

static uint64_t run2(struct env *e, struct cxlssd_trap *t, int op,
                     uint64_t seed)
{
    struct job j[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        j[i] = (struct job){ .e = e, .t = t, .id = i, .op = op,
                             .seed = seed };
        pthread_create(&th[i], NULL, worker, &j[i]);
    }
    uint64_t bad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        bad += j[i].bad;
    }
    return bad;
}

/* A case's model (@pol, @ev) in *@mp and its tlb trap (keep_clean_mapped
 * if @keep), over pattern @seed, the unmapped() hook dropping entries if
 * @drop; NULL (nothing left to free) after a failed check named @name. */
static struct cxlssd_trap *start(struct env *e, const char *name,
                                 enum cxlssd_policy pol,
                                 enum cxlssd_eviction ev, uint64_t seed,
                                 bool drop, bool keep,
                                 struct cxlssd_model **mp)
{
    struct cxlssd_model *m = test_policy_model(NPAGES, FRAMES, pol, 0, ev,
                                               name);
    if (!m) {
        return NULL;
    }
    fill_pattern(e->b, NPAGES, seed);
    atomic_store(&drop_entries, drop);
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, CXLSSD_DELIVERY_TLB, 1);
    tc.keep_clean_mapped = keep;
    struct cxlssd_trap_hooks hooks = { .unmapped = unmapped };
    memset(soft_tlb, 0, sizeof(soft_tlb));
    struct cxlssd_trap *t = test_trap_new(m, e, &tc, &hooks, name);
    if (t) {
        *mp = m;
    }
    return t;
}

static void data_path(struct env *e, enum cxlssd_eviction ev, bool keep)
{
    char name[96];
    snprintf(name, sizeof(name), "tlb eviction=%s%s",
             cxlssd_eviction_name(ev), keep ? " keep_clean_mapped" : "");
    uint64_t seed1 = 0x7b1 + ev, seed2 = seed1 * 31 + 1;
    atomic_store(&readonly_fills, 0);
    atomic_store(&bad_fills, 0);
    struct cxlssd_model *m;
    struct cxlssd_trap *t = start(e, name, CXLSSD_POLICY_CLOCK, ev, seed1,
                                  true, keep, &m);
    if (!t) {
        return;
    }
    uint64_t bad1 = run2(e, t, 0, seed1);
    uint64_t bad2 = run2(e, t, 1, seed2);
    uint64_t badb = check_pages(e->b, NPAGES, seed2);
    uint64_t bad3 = run2(e, t, 0, seed2);
    struct cxlssd_stats s;
    struct cxlssd_trap_stats ts;
    bool wp = finish_trap(t, m, &s, &ts);
    cxlssd_model_free(m);
    uint64_t evictions = s.evictions_clean + s.evictions_dirty;
    bool kept_ok = keep ? ts.victims_kept_mapped > 0 &&
                          ts.pages_unmapped < evictions &&
                          ts.pages_unmapped + ts.victims_kept_mapped >=
                          evictions
                        : ts.victims_kept_mapped == 0;
    tap_ok(kept_ok, "%s: victims kept mapped=%llu, pages unmapped=%llu, "
           "evictions=%llu (dirty %llu)", name,
           (unsigned long long)ts.victims_kept_mapped,
           (unsigned long long)ts.pages_unmapped,
           (unsigned long long)evictions,
           (unsigned long long)s.evictions_dirty);
    tap_ok(bad1 == 0 && bad2 == 0 && badb == 0 && bad3 == 0 &&
           s.misses >= 3 * NPAGES - FRAMES && ts.tlb_fill_misses + ts.host_route_misses >= s.misses &&
           ts.host_route_misses <= s.misses / 10 && s.evictions_dirty > 0 &&
           ts.tlb_invalidations > 0 && atomic_load(&bad_fills) == 0 &&
           (!wp || atomic_load(&readonly_fills) > 0),
           "%s: mismatches read=%llu write=%llu viaB=%llu reread=%llu; "
           "misses=%llu tlb_fill_misses=%llu host_route_misses=%llu "
           "invalidations=%llu dirty evictions=%llu read-only fills=%llu "
           "(tracking %s)", name,
           (unsigned long long)bad1, (unsigned long long)bad2,
           (unsigned long long)badb, (unsigned long long)bad3,
           (unsigned long long)s.misses,
           (unsigned long long)ts.tlb_fill_misses,
           (unsigned long long)ts.host_route_misses,
           (unsigned long long)ts.tlb_invalidations,
           (unsigned long long)s.evictions_dirty,
           (unsigned long long)atomic_load(&readonly_fills),
           wp ? "on" : "off");
}

/* Entries are not dropped: every access after an eviction uses a stale
 * one, faults on the host and is served by the handler thread. */
static void safety_net(struct env *e)
{
    const char *name = "tlb stale entries";
    struct cxlssd_model *m;
    struct cxlssd_trap *t = start(e, name, CXLSSD_POLICY_FIFO,
                                  CXLSSD_EVICTION_SYNC, 0x5afe, false, false,
                                  &m);
    if (!t) {
        return;
    }
    uint64_t bad = run2(e, t, 0, 0x5afe) + run2(e, t, 0, 0x5afe);
    struct cxlssd_trap_stats ts;
    cxlssd_trap_get_stats(t, &ts);
    cxlssd_trap_free(t);
    cxlssd_model_free(m);
    tap_ok(bad == 0 && ts.host_route_misses > 0 && ts.tlb_fill_misses > 0,
           "%s: mismatches=%llu, host_route_misses=%llu (the poll handler "
           "served the stale entries' faults), tlb_fill_misses=%llu", name,
           (unsigned long long)bad, (unsigned long long)ts.host_route_misses,
           (unsigned long long)ts.tlb_fill_misses);
    atomic_store(&drop_entries, true);
}

static const char *state_name(enum cxlssd_page_state s)
{
    static const char *const names[] = { "not cached", "loading", "cached",
                                         "evicting" };
    return (unsigned)s < 4 ? names[s] : "?";
}

/* @p's state once its miss is done: the handler wakes a write miss's
 * writer before it marks the page filled, so the writer may run on while
 * the page is still LOADING (a 2 s bound keeps a stuck miss a failure). */
static enum cxlssd_page_state settled_state(struct cxlssd_model *m,
                                            uint64_t p)
{
    for (int i = 0; i < 20000; i++) {
        enum cxlssd_page_state s = cxlssd_page_state(m, p);
        if (s != CXLSSD_LOADING) {
            return s;
        }
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    return CXLSSD_LOADING;
}

/* keep_clean_mapped: QEMU's DMA, a store through the registered mapping
 * without a fill, to a page evicted clean and left mapped. */
static void kept_page_store(struct env *e)
{
    const char *name = "keep_clean_mapped: a store without a fill";
    struct cxlssd_model *m;
    struct cxlssd_trap *t = start(e, name, CXLSSD_POLICY_FIFO,
                                  CXLSSD_EVICTION_SYNC, 0xd3a, true, true,
                                  &m);
    if (!t) {
        return;
    }
    if (!cxlssd_trap_dirty_tracking(t)) {
        tap_ok(1, "# SKIP %s: no dirty tracking (uffd write-protect) here",
               name);
        cxlssd_trap_free(t);
        cxlssd_model_free(m);
        return;
    }
    struct job j = { .e = e, .t = t, .id = 0 };
    uint64_t bad = 0, p = 0;
    for (uint64_t q = 0; q < 2 * FRAMES; q++) {
        fill(&j, q, false);
        bad += check_page(e->a, q, 0xd3a);
    }
    struct cxlssd_trap_stats before;
    cxlssd_trap_get_stats(t, &before);
    enum cxlssd_page_state s0 = cxlssd_page_state(m, p);
    uint64_t *w = (uint64_t *)(e->a + p * PG);
    w[0] = 0x5107e;                         /* no fill: the host mapping */
    enum cxlssd_page_state s1 = settled_state(m, p);
    bool dirty1 = cxlssd_page_dirty(m, p);
    struct cxlssd_trap_stats after;
    cxlssd_trap_get_stats(t, &after);
    for (uint64_t q = 2 * FRAMES; q < 4 * FRAMES; q++) {
        fill(&j, q, false);
        bad += check_page(e->a, q, 0xd3a);
    }
    struct cxlssd_trap_stats end;
    cxlssd_trap_get_stats(t, &end);
    enum cxlssd_page_state s2 = cxlssd_page_state(m, p);
    uint64_t word = *(volatile uint64_t *)(e->b + p * PG);
    cxlssd_trap_free(t);
    cxlssd_model_free(m);
    tap_ok(bad == 0 && before.victims_kept_mapped > 0 &&
           s0 == CXLSSD_NOT_CACHED && s1 == CXLSSD_CACHED && dirty1 &&
           after.host_route_misses == before.host_route_misses + 1 &&
           after.wp_faults > before.wp_faults &&
           s2 == CXLSSD_NOT_CACHED &&
           end.pages_unmapped > after.pages_unmapped && word == 0x5107e,
           "%s: page 0 %s (kept mapped: %llu victims) -> %s%s after the "
           "store (host-route misses +%llu, write-protect faults +%llu), "
           "evicted again: %s, pages unmapped +%llu; stored word %s; "
           "mismatches=%llu", name, state_name(s0),
           (unsigned long long)before.victims_kept_mapped,
           state_name(s1), dirty1 ? " dirty" : " clean",
           (unsigned long long)(after.host_route_misses -
                                before.host_route_misses),
           (unsigned long long)(after.wp_faults - before.wp_faults),
           state_name(s2),
           (unsigned long long)(end.pages_unmapped - after.pages_unmapped),
           word == 0x5107e ? "kept" : "lost", (unsigned long long)bad);

    struct cxlssd_model *m2 = test_policy_model(NPAGES, FRAMES,
                                                CXLSSD_POLICY_FIFO, 0,
                                                CXLSSD_EVICTION_SYNC, name);
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, CXLSSD_DELIVERY_POLL, 1);
    tc.keep_clean_mapped = true;
    check_refused(m2, e, &tc, "keep_clean_mapped",
                  "keep_clean_mapped with delivery=poll refused");
    cxlssd_model_free(m2);
}

int main(void)
{
    /* a hang guard, not a time limit: the plain build took 121 s once on
     * a 2-CPU host at load average 12 (the ASan build 115 s in a CI run) */
    watchdog(600);
    struct env e;
    if (env_open(&e, NPAGES) < 0) {
        tap_skip_all("memfd/mmap unavailable");
    }
    char err[256];
    struct cxlssd_config mc;
    test_model_config(&mc, NPAGES, FRAMES);
    struct cxlssd_model *probe = cxlssd_model_new(&mc, err, sizeof(err));
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, CXLSSD_DELIVERY_TLB, 1);
    struct cxlssd_trap *pt = probe ? cxlssd_trap_new(probe, e.a, e.len, &tc,
                                                     NULL, err, sizeof(err))
                                   : NULL;
    if (!pt) {
        tap_diag("cxlssd_trap_new: %s", err);
        tap_skip_all("userfaultfd MINOR unavailable");
    }
    cxlssd_trap_free(pt);
    cxlssd_model_free(probe);
    enum cxlssd_delivery d;
    tap_ok(cxlssd_delivery_from_name_any("tlb", &d) == 0 &&
           d == CXLSSD_DELIVERY_TLB &&
           strcmp(cxlssd_delivery_name(d), "tlb") == 0 &&
           cxlssd_delivery_from_name("tlb", &d) < 0,
           "delivery name tlb: only through cxlssd_delivery_from_name_any");
    data_path(&e, CXLSSD_EVICTION_SYNC, false);
    data_path(&e, CXLSSD_EVICTION_BACKGROUND, false);
    data_path(&e, CXLSSD_EVICTION_SYNC, true);
    data_path(&e, CXLSSD_EVICTION_BACKGROUND, true);
    kept_page_store(&e);
    safety_net(&e);
    env_close(&e);
    return tap_done();
}
