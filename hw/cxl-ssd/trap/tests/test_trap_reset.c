/*
 * Trap engine, reset: worker threads fault on the registered view; they are
 * paused (as QEMU stops vCPUs), cxlssd_trap_reset() runs, and then every
 * page must be non-resident in the model, the data intact through both
 * views, and faults served again after resuming.  A second part resets
 * while a thread keeps faulting (QEMU's own threads may touch memory
 * during reset): no hang, no data loss.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "trap_test.h"

#define NPAGES 256
#define FRAMES 32
#define NTHREADS 2
#define WORDS (PG / 8)
#define OWN (WORDS / NTHREADS)
#define ROUNDS 6

static atomic_int pause_req, paused, stop;

static atomic_bool pausable[NTHREADS];

static void *worker_fn(void *arg)
{
    struct shadow_worker *w = arg;
    uint64_t rs = 0x9E3779B97F4A7C15ull * (uint64_t)(w->id + 7);
    while (!atomic_load(&stop)) {
        if (atomic_load(&pausable[w->id]) && atomic_load(&pause_req)) {
            atomic_fetch_add(&paused, 1);
            while (atomic_load(&pause_req) && !atomic_load(&stop)) {
                usleep(100);
            }
            atomic_fetch_sub(&paused, 1);
            continue;
        }
        shadow_step(w, &rs);
    }
    return NULL;
}

static uint64_t verify(const unsigned char *base,
                       const struct shadow_worker *w, int n)
{
    uint64_t bad = 0;
    for (int i = 0; i < n; i++) {
        bad += shadow_mismatches(base, &w[i]);
    }
    return bad;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 60);
    memset(e.b, 0, e.len);
    struct cxlssd_config mc;
    test_model_config(&mc, NPAGES, FRAMES);
    mc.prefetch = 2;
    mc.eviction = CXLSSD_EVICTION_BACKGROUND;
    struct cxlssd_model *m = test_model(&mc);
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, CXLSSD_DELIVERY_POLL, 2);
    struct cxlssd_trap *t = test_trap_new(m, &e, &tc, NULL, "setup");
    if (!t) {
        return tap_done();
    }

    static uint64_t shadows[NTHREADS][NPAGES * OWN];
    struct shadow_worker w[NTHREADS];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (struct shadow_worker){ .e = &e, .id = (uint32_t)i,
                                       .nthreads = NTHREADS,
                                       .shadow = shadows[i] };
        atomic_store(&pausable[i], true);
        pthread_create(&th[i], NULL, worker_fn, &w[i]);
    }
    bool all_nonres = true, all_intact = true, served_again = true;
    uint64_t badv = 0;
    for (int round = 0; round < ROUNDS; round++) {
        sleep_ms(150);
        atomic_store(&pause_req, 1);
        while (atomic_load(&paused) < NTHREADS) {
            usleep(100);
        }
        cxlssd_trap_reset(t);
        uint64_t resident = 0;
        for (uint64_t p = 0; p < NPAGES; p++) {
            resident += cxlssd_page_state(m, p) != CXLSSD_NOT_CACHED;
        }
        struct cxlssd_stats s;
        cxlssd_model_get_stats(m, &s);
        if (resident || s.resident_pages) {
            all_nonres = false;
            tap_diag("round %d: %llu pages resident after reset (model says "
                 "%llu)", round, (unsigned long long)resident,
                 (unsigned long long)s.resident_pages);
        }
        uint64_t b = verify(e.b, w, NTHREADS);
        if (b) {
            all_intact = false;
            badv += b;
        }
        uint64_t before = s.misses;
        atomic_store(&pause_req, 0);
        sleep_ms(20);
        cxlssd_model_get_stats(m, &s);
        if (s.misses <= before) {
            served_again = false;
        }
    }
    tap_ok(all_nonres, "after each of %d resets every page is non-resident",
       ROUNDS);
    tap_ok(all_intact, "data intact after every reset (%llu mismatches via B)",
       (unsigned long long)badv);
    tap_ok(served_again, "faults are served again after every reset");

    /* Reset while a thread keeps faulting (not paused). */
    for (int i = 0; i < NTHREADS; i++) {
        atomic_store(&pausable[i], false);
    }
    for (int round = 0; round < ROUNDS; round++) {
        sleep_ms(50);
        cxlssd_trap_reset(t);
    }
    sleep_ms(50);
    atomic_store(&stop, 1);
    uint64_t ops = 0, bad = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        ops += w[i].ops;
        bad += w[i].bad;
    }
    uint64_t bada = verify(e.a, w, NTHREADS);
    uint64_t badb = verify(e.b, w, NTHREADS);
    tap_ok(bad == 0 && bada == 0 && badb == 0,
       "resets under concurrent faults: %llu ops, mismatches in-run=%llu "
       "A=%llu B=%llu", (unsigned long long)ops, (unsigned long long)bad,
       (unsigned long long)bada, (unsigned long long)badb);
    cxlssd_trap_reset(t);
    cxlssd_trap_free(t);
    tap_ok(verify(e.a, w, NTHREADS) == 0, "data intact after free (view A now "
       "unregistered)");
    cxlssd_model_free(m);
    env_close(&e);
    return tap_done();
}
