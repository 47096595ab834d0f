/*
 * Trap engine, data path: a memfd with a registered view A and a plain
 * view B.  For every policy x prefetch {0,4} x eviction {sync,background} x
 * delivery {poll,busy} (victims unmapped before the wait for half the
 * policies, after the fill for the others): read everything through A (sequential then random)
 * from a worker thread with a 32-frame cache over 512 pages, write a new
 * pattern through A, verify through B and A after many evictions.
 */
#include <pthread.h>

#include "csv_read.h"
#include "trap_test.h"

#define NPAGES 512
#define FRAMES 32

struct job {
    struct env *e;
    int op;             /* 0 = verify seq + random, 1 = write (random
                         * order), 2 = verify seq */
    uint64_t seed;
    uint64_t bad;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    struct env *e = j->e;
    uint64_t rs = 0x1234567 + j->seed;
    if (j->op == 0 || j->op == 2) {
        j->bad += check_pages(e->a, e->npages, j->seed);
        for (uint64_t k = 0; j->op == 0 && k < e->npages; k++) {
            j->bad += check_page(e->a, rng_next(&rs) % e->npages, j->seed);
        }
    } else {
        for (uint64_t k = 0; k < e->npages; k++) {
            /* random order, every page once: stride by an odd number */
            uint64_t p = (k * 389) % e->npages;
            uint64_t *w = (uint64_t *)(e->a + p * PG);
            for (uint64_t i = 0; i < PG / 8; i++) {
                w[i] = pat(j->seed, p, i);
            }
        }
    }
    return NULL;
}

static uint64_t run_job(struct env *e, int op, uint64_t seed)
{
    struct job j = { .e = e, .op = op, .seed = seed };
    pthread_t th;
    pthread_create(&th, NULL, worker, &j);
    pthread_join(th, NULL);
    return j.bad;
}

static void one(struct env *e, enum cxlssd_policy pol, uint32_t prefetch,
                enum cxlssd_eviction ev, enum cxlssd_delivery d,
                const char *record_path)
{
    char name[128];
    /* half the policies unmap victims before the wait (default), half
     * after the faulter was woken (defer_unmap) */
    bool defer = pol == CXLSSD_POLICY_LIFO || pol == CXLSSD_POLICY_S3FIFO;
    snprintf(name, sizeof(name), "%s prefetch=%u eviction=%s delivery=%s "
             "unmap=%s", cxlssd_policy_name(pol), prefetch,
             cxlssd_eviction_name(ev), cxlssd_delivery_name(d),
             defer ? "deferred" : "inline");
    struct cxlssd_model *m = test_policy_model(NPAGES, FRAMES, pol, prefetch,
                                               ev, name);
    if (!m) {
        return;
    }
    uint64_t seed1 = 0x1000 + (uint64_t)pol * 97 + prefetch * 7 + ev * 3 + d;
    uint64_t seed2 = seed1 * 31 + 5;
    fill_pattern(e->b, NPAGES, seed1);

    struct cxlssd_trap_config tc;
    test_trap_config(&tc, d, 1);
    tc.record_path = record_path;
    tc.defer_unmap = defer;
    struct cxlssd_trap *t = test_trap_new(m, e, &tc, NULL, name);
    if (!t) {
        return;
    }
    uint64_t bad1 = run_job(e, 0, seed1);
    struct cxlssd_stats s1;
    cxlssd_model_get_stats(m, &s1);
    struct cxlssd_trap_stats ts1;
    cxlssd_trap_get_stats(t, &ts1);
    uint64_t bad2 = run_job(e, 1, seed2);
    uint64_t badb = check_pages(e->b, NPAGES, seed2);
    uint64_t bad3 = run_job(e, 2, seed2);
    struct cxlssd_stats s;
    struct cxlssd_trap_stats ts;
    finish_trap(t, m, &s, &ts);
    uint64_t badb2 = check_pages(e->b, NPAGES, seed2);
    /* First sequential pass touches NPAGES pages: each is a demand miss, a
     * prefetched page (prefetch_issued), or a wait on one. */
    bool misses_ok = s1.misses + s1.prefetch_issued >= NPAGES &&
                     s1.misses <= 2 * NPAGES + NPAGES;
    if (prefetch == 0) {
        misses_ok = misses_ok && s1.misses >= NPAGES;
    }
    tap_ok(bad1 == 0 && bad2 == 0 && badb == 0 && bad3 == 0 && badb2 == 0 &&
       misses_ok && s.evictions_clean + s.evictions_dirty > 0 &&
       s.evictions_dirty > 0 && ts.faults >= s.misses,
       "%s: mismatches read=%llu write=%llu viaB=%llu reread=%llu "
       "after-free=%llu; pass1 misses=%llu prefetched=%llu faults=%llu; "
       "evictions clean=%llu dirty=%llu; madvise=%llu unmapped=%llu "
       "wp=%llu dup=%llu", name,
       (unsigned long long)bad1, (unsigned long long)bad2,
       (unsigned long long)badb, (unsigned long long)bad3,
       (unsigned long long)badb2, (unsigned long long)s1.misses,
       (unsigned long long)s1.prefetch_issued,
       (unsigned long long)ts1.faults,
       (unsigned long long)s.evictions_clean,
       (unsigned long long)s.evictions_dirty,
       (unsigned long long)ts.madvise_calls,
       (unsigned long long)ts.pages_unmapped,
       (unsigned long long)ts.wp_faults,
       (unsigned long long)ts.duplicate_faults);
    cxlssd_model_free(m);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Busy delivery: an idle trap (no faults for a while) stops spinning, and
 * the next miss is still served. */
static void check_busy_idle(struct env *e)
{
    struct cxlssd_model *m;
    struct cxlssd_trap *t = open_small_trap(e, CXLSSD_DELIVERY_BUSY, FRAMES,
                                            &m, "busy idle");
    if (!t) {
        return;
    }
    fill_pattern(e->b, 8, 0x1d1e);
    uint64_t bad = check_page(e->a, 1, 0x1d1e);
    usleep(100000);                 /* well past the 10 ms idle limit */
    double c0 = cpu_seconds();
    usleep(300000);
    double idle_cpu = cpu_seconds() - c0;
    bad += check_page(e->a, 5, 0x1d1e);     /* served after sleeping */
    cxlssd_trap_free(t);
    cxlssd_model_free(m);
    tap_ok(bad == 0 && idle_cpu < 0.1,
       "busy delivery sleeps when idle: %.3f s CPU over 0.3 s without "
       "faults; the next miss is served (mismatches=%llu)", idle_cpu,
       (unsigned long long)bad);
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 120);

    /* Probe: can we create a trap at all? */
    {
        struct cxlssd_config mc;
        test_model_config(&mc, NPAGES, FRAMES);
        struct cxlssd_model *m = test_model(&mc);
        struct cxlssd_trap_config tc;
        test_trap_config(&tc, CXLSSD_DELIVERY_POLL, 1);
        char err[256];
        struct cxlssd_trap *t = m ? cxlssd_trap_new(m, e.a, e.len, &tc, NULL,
                                                    err, sizeof(err)) : NULL;
        if (!t) {
            if (m && strstr(err, "userfaultfd:")) {
                cxlssd_model_free(m);
                tap_skip_all(err);
            }
            tap_ok(0, "trap_new: %s", m ? err : "model");
            return tap_done();
        }
        tap_diag("dirty mechanism: %s", cxlssd_trap_dirty_mechanism(t));
        tap_ok(cxlssd_trap_dirty_tracking(t), "dirty tracking active on this "
           "kernel (%s)", cxlssd_trap_dirty_mechanism(t));
        cxlssd_trap_free(t);

        /* Bad arguments are reported, not fatal. */
        tc.handler_cpus = "0,banana";
        check_refused(m, &e, &tc, "handler-cpus",
                      "invalid handler-cpus is rejected naming the property");
        tc.handler_cpus = "4096";
        check_refused(m, &e, &tc, "handler-cpus",
                      "nonexistent CPU is rejected");
        tc.handler_cpus = "0";
        tc.handler_threads = 0;
        check_refused(m, &e, &tc, "handler-threads",
                      "handler-threads=0 is rejected");
        tc.handler_threads = 1;
        enum cxlssd_delivery d, ds;
        tap_ok(cxlssd_delivery_from_name("busy", &d) == 0 &&
           d == CXLSSD_DELIVERY_BUSY &&
           cxlssd_delivery_from_name("x", &d) < 0 &&
           strcmp(cxlssd_delivery_name(CXLSSD_DELIVERY_POLL), "poll") == 0 &&
           cxlssd_delivery_from_name_any("sigbus", &ds) == 0 &&
           ds == CXLSSD_DELIVERY_SIGBUS &&
           cxlssd_delivery_from_name("sigbus", &d) < 0 &&
           strcmp(cxlssd_delivery_name(CXLSSD_DELIVERY_SIGBUS), "sigbus") == 0,
           "delivery names (sigbus only through "
           "cxlssd_delivery_from_name_any)");
        cxlssd_model_free(m);
    }

    check_lost_mapping(&e, CXLSSD_DELIVERY_POLL);
    check_lost_mapping(&e, CXLSSD_DELIVERY_BUSY);
    check_busy_idle(&e);

    int fds0 = count_dir("/proc/self/fd"), tasks0 = count_dir("/proc/self/task");
    char rec[64];
    snprintf(rec, sizeof(rec), "/tmp/cxlssd-trap-basic-%d.csv", (int)getpid());
    bool first = true;
    for (int pol = 0; pol < CXLSSD_POLICY_COUNT; pol++) {
        for (uint32_t pf = 0; pf <= 4; pf += 4) {
            for (int ev = 0; ev < CXLSSD_EVICTION_COUNT; ev++) {
                for (int d = 0; d < CXLSSD_DELIVERY_COUNT; d++) {
                    one(&e, (enum cxlssd_policy)pol, pf,
                        (enum cxlssd_eviction)ev, (enum cxlssd_delivery)d,
                        first ? rec : NULL);
                    if (first) {
                        uint64_t lines = csv_count_lines(rec);
                        tap_ok(lines > NPAGES, "record CSV %s has a header and "
                           "one row per miss (%llu lines)", rec,
                           (unsigned long long)lines);
                        unlink(rec);
                        first = false;
                    }
                }
            }
        }
    }
    int fds1 = count_dir("/proc/self/fd"), tasks1 = count_dir("/proc/self/task");
    tap_ok(fds1 == fds0 && tasks1 == tasks0, "no leaked fds (%d -> %d) or "
       "threads (%d -> %d) after %d traps", fds0, fds1, tasks0, tasks1,
       4 * 2 * 2 * 2);
    env_close(&e);
    return tap_done();
}
