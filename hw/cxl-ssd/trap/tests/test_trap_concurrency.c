/*
 * Trap engine, concurrency: 4 threads read and write their own words of
 * the same pages (every page shared by all threads) through the registered
 * view, with a tiny cache and 2 handler threads, so duplicate faults,
 * LOADING waits, evictions racing fills and WP faults all happen.  Each
 * thread checks every read against its own shadow copy; at the end every
 * word is checked through both views.  An alarm() watchdog fails the test
 * if anything hangs.
 */
#include <pthread.h>

#include "trap_test.h"

#define NPAGES 128
#define FRAMES 8
#define NTHREADS 4
#define WORDS (PG / 8)
#define OWN (WORDS / NTHREADS)
#define RUN_NS 1200000000ull

static void *worker_fn(void *arg)
{
    struct shadow_worker *w = arg;
    uint64_t rs = 0x2545F4914F6CDD1Dull * (uint64_t)(w->id + 1);
    uint64_t end = cxlssd_now_ns() + RUN_NS;
    while (cxlssd_now_ns() < end) {
        for (int k = 0; k < 64; k++) {
            shadow_step(w, &rs);
        }
    }
    return NULL;
}

/* One configuration of the engine under NTHREADS shadow workers. */
struct conc_case {
    const char *name;
    enum cxlssd_delivery d;
    uint32_t handlers;
    const char *cpus;
    enum cxlssd_policy pol;
    enum cxlssd_eviction ev;
    uint32_t prefetch;
    bool defer;
};

static void one(struct env *e, const struct conc_case *c)
{
    memset(e->b, 0, e->len);
    struct cxlssd_config mc;
    test_model_config(&mc, NPAGES, FRAMES);
    mc.policy = c->pol;
    mc.eviction = c->ev;
    mc.prefetch = c->prefetch;
    mc.evict_low_pct = 20;
    mc.evict_high_pct = 40;
    struct cxlssd_model *m = test_model(&mc);
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, c->d, c->handlers);
    tc.handler_cpus = c->cpus;
    tc.defer_unmap = c->defer;
    struct cxlssd_trap *t = test_trap_new(m, e, &tc, NULL, c->name);
    if (!t) {
        return;
    }
    static uint64_t shadows[NTHREADS][NPAGES * OWN];
    memset(shadows, 0, sizeof(shadows));
    struct shadow_worker w[NTHREADS];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (struct shadow_worker){ .e = e, .id = (uint32_t)i,
                                       .nthreads = NTHREADS,
                                       .shadow = shadows[i] };
        pthread_create(&th[i], NULL, worker_fn, &w[i]);
    }
    uint64_t ops = 0, bad = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        ops += w[i].ops;
        bad += w[i].bad;
    }
    /* Final check through A (still trapped) and B. */
    uint64_t bada = 0, badb = 0;
    for (int i = 0; i < NTHREADS; i++) {
        bada += shadow_mismatches(e->a, &w[i]);
        badb += shadow_mismatches(e->b, &w[i]);
    }
    struct cxlssd_trap_stats ts;
    cxlssd_trap_get_stats(t, &ts);
    struct cxlssd_stats s;
    cxlssd_model_get_stats(m, &s);
    cxlssd_trap_free(t);
    tap_ok(bad == 0 && bada == 0 && badb == 0 && ops > 1000,
       "%s: %llu ops, mismatches in-run=%llu A=%llu B=%llu; faults=%llu "
       "dup=%llu wp=%llu misses=%llu loading_waits=%llu evictions=%llu+%llu",
       c->name, (unsigned long long)ops, (unsigned long long)bad,
       (unsigned long long)bada, (unsigned long long)badb,
       (unsigned long long)ts.faults,
       (unsigned long long)ts.duplicate_faults,
       (unsigned long long)ts.wp_faults, (unsigned long long)s.misses,
       (unsigned long long)s.loading_waits,
       (unsigned long long)s.evictions_clean,
       (unsigned long long)s.evictions_dirty);
    cxlssd_model_free(m);
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 90);
    static const struct conc_case cases[] = {
        { "poll, 2 handlers, fifo, sync", CXLSSD_DELIVERY_POLL, 2, "",
          CXLSSD_POLICY_FIFO, CXLSSD_EVICTION_SYNC, 0, false },
        { "poll, 2 handlers, fifo, sync, defer unmap", CXLSSD_DELIVERY_POLL,
          2, "", CXLSSD_POLICY_FIFO, CXLSSD_EVICTION_SYNC, 0, true },
        { "poll, 2 handlers pinned 0,1, clock, background, prefetch 2",
          CXLSSD_DELIVERY_POLL, 2, "0,1", CXLSSD_POLICY_CLOCK,
          CXLSSD_EVICTION_BACKGROUND, 2, false },
        { "busy, 1 handler, s3fifo, sync, prefetch 1", CXLSSD_DELIVERY_BUSY,
          1, "", CXLSSD_POLICY_S3FIFO, CXLSSD_EVICTION_SYNC, 1, false },
        { "poll, 3 handlers, lifo, background, defer unmap",
          CXLSSD_DELIVERY_POLL, 3, "", CXLSSD_POLICY_LIFO,
          CXLSSD_EVICTION_BACKGROUND, 0, true },
        { "poll, 2 handlers, clock, batch, prefetch 2", CXLSSD_DELIVERY_POLL,
          2, "", CXLSSD_POLICY_CLOCK, CXLSSD_EVICTION_BATCH, 2, false },
        { "sigbus, fifo, batch", CXLSSD_DELIVERY_SIGBUS, 1, "",
          CXLSSD_POLICY_FIFO, CXLSSD_EVICTION_BATCH, 0, false },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        one(&e, &cases[i]);
    }
    env_close(&e);
    return tap_done();
}
