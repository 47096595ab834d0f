/*
 * Trap engine, the embedder's hooks on the miss path: every trace hook of
 * the miss service (fault, decision, evict, writeback, prefetch
 * issue/complete, map, miss done) fires once per event the model counts,
 * under handler-thread delivery; under SIGBUS delivery the hooks of misses
 * served in the signal handler stay silent (they may lock) while the
 * model still counts them.  A clean run reports nothing through the
 * error hook.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "trap_test.h"

#define NPAGES 256
#define FRAMES 16
#define PREFETCH 2

static _Atomic uint64_t n_fault, n_decision, n_evict, n_writeback,
    n_pf_issue, n_pf_complete, n_map, n_miss_done, n_error;

/* Counting hooks: only the calls matter, not their arguments. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void on_fault(void *o, uint64_t p, bool w, int32_t t, int32_t v)
{ n_fault++; }
static void on_decision(void *o, const struct cxlssd_miss *m)
{ n_decision++; }
static void on_evict(void *o, uint64_t p, bool dirty) { n_evict++; }
static void on_writeback(void *o, uint64_t p) { n_writeback++; }
static void on_pf_issue(void *o, uint64_t p, uint64_t dl) { n_pf_issue++; }
static void on_pf_complete(void *o, uint64_t p) { n_pf_complete++; }
static void on_map(void *o, uint64_t p, uint64_t dl, uint64_t at)
{ n_map++; }
static void on_miss_done(void *o, const struct cxlssd_record *r)
{ n_miss_done++; }
static void on_error(void *o, const char *msg) { n_error++; }
#pragma GCC diagnostic pop

static const struct cxlssd_trap_hooks hooks = {
    .error = on_error,
    .trace = { .fault = on_fault, .decision = on_decision,
               .evict = on_evict, .writeback = on_writeback,
               .prefetch_issue = on_pf_issue,
               .prefetch_complete = on_pf_complete, .map = on_map,
               .miss_done = on_miss_done },
};

static void reset_counts(void)
{
    _Atomic uint64_t *c[] = { &n_fault, &n_decision, &n_evict, &n_writeback,
                              &n_pf_issue, &n_pf_complete, &n_map,
                              &n_miss_done, &n_error };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        atomic_store(c[i], 0);
    }
}

static struct env *touch_env;

/* Write one word of every page, 4x the cache: misses with dirty victims
 * and prefetches. */
static void *writer(void *arg)
{
    (void)arg;
    for (uint64_t p = 0; p < NPAGES; p++) {
        ((volatile uint64_t *)(touch_env->a + p * PG))[0] = p;
    }
    return NULL;
}

static void run(struct env *e, enum cxlssd_delivery d)
{
    const char *dn = cxlssd_delivery_name(d);
    struct cxlssd_model *m;
    struct cxlssd_trap *t = open_trap(e, d, FRAMES, PREFETCH, &hooks, &m,
                                      "hooks");
    if (!t) {
        return;
    }
    reset_counts();
    touch_env = e;
    pthread_t th;
    pthread_create(&th, NULL, writer, NULL);
    pthread_join(th, NULL);
    cxlssd_trap_free(t);        /* completes the prefetches still queued */
    struct cxlssd_stats s;
    cxlssd_model_get_stats(m, &s);
    uint64_t misses = s.misses, evictions = s.evictions_clean +
                                            s.evictions_dirty;
    tap_diag("%s: misses=%llu evictions=%llu dirty=%llu prefetch=%llu; hooks "
         "fault=%llu decision=%llu evict=%llu writeback=%llu pf=%llu/%llu "
         "map=%llu done=%llu", dn, (unsigned long long)misses,
         (unsigned long long)evictions,
         (unsigned long long)s.evictions_dirty,
         (unsigned long long)s.prefetch_issued,
         (unsigned long long)n_fault, (unsigned long long)n_decision,
         (unsigned long long)n_evict, (unsigned long long)n_writeback,
         (unsigned long long)n_pf_issue, (unsigned long long)n_pf_complete,
         (unsigned long long)n_map, (unsigned long long)n_miss_done);
    if (d != CXLSSD_DELIVERY_SIGBUS) {
        tap_ok(misses > FRAMES && n_map == misses && n_fault >= misses &&
           n_decision >= n_fault && n_miss_done >= misses,
           "%s: fault, decision, map and miss-done hooks per miss", dn);
        tap_ok(evictions > 0 && n_evict == evictions &&
           n_writeback == s.evictions_dirty && s.evictions_dirty > 0,
           "%s: evict and writeback hooks per victim", dn);
        tap_ok(s.prefetch_issued > 0 && n_pf_issue == s.prefetch_issued &&
           n_pf_complete == s.prefetch_issued,
           "%s: prefetch issue and complete hooks per prefetch", dn);
    } else {
        tap_ok(misses > FRAMES && n_fault == 0 && n_decision == 0 &&
           n_map == 0 && n_evict == 0 && n_miss_done == 0,
           "%s: no trace hook inside the signal handler", dn);
    }
    tap_ok(n_error == 0, "%s: no error reported", dn);
    cxlssd_model_free(m);
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 120);
    run(&e, CXLSSD_DELIVERY_POLL);
    run(&e, CXLSSD_DELIVERY_BUSY);
    run(&e, CXLSSD_DELIVERY_SIGBUS);
    env_close(&e);
    return tap_done();
}
