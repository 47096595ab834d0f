/*
 * Trap engine, in-thread SIGBUS delivery (CXLSSD_DELIVERY_SIGBUS): the
 * faulting thread serves its own miss in the engine's signal handler.
 *
 * Data path: a memfd with a registered view A and a plain view B; for
 * policy {fifo, clock} x prefetch {0, 4} x eviction {sync, background}:
 * two threads read a pattern (written through B) through A over 16x the
 * cache, both walking the same pages (so one often waits on the other's
 * fill: the LOADING path), then write a new pattern through A in disjoint
 * halves (first writes to clean resident pages are write-protect faults,
 * served in the handler too), then verify through B and A.
 * Also: a SIGBUS outside every trap goes to the previous handler; a kernel
 * access (read() into a non-resident page) fails with EFAULT instead of
 * blocking; records are written with the faulting thread's id;
 * cxlssd_trap_access() serves an access made through view B.
 */
#include <pthread.h>
#include <setjmp.h>
#include <sys/syscall.h>

#include "trap_test.h"

#define NPAGES 512
#define FRAMES 32

struct job {
    struct env *e;
    int op;             /* 0 verify all, 1 write half @half */
    int half;
    uint64_t seed;
    uint64_t bad;
    pid_t tid;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    struct env *e = j->e;
    j->tid = (pid_t)syscall(SYS_gettid);
    if (j->op == 0) {
        for (uint64_t p = 0; p < e->npages; p++) {
            j->bad += check_page(e->a, p, j->seed);
        }
    } else {
        uint64_t lo = j->half ? e->npages / 2 : 0;
        uint64_t n = e->npages / 2;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t p = lo + (k * 37) % n;
            /* read first: the page is mapped clean, then the write is a
             * write-protect fault */
            (void)*(volatile uint64_t *)(e->a + p * PG);
            uint64_t *w = (uint64_t *)(e->a + p * PG);
            for (uint64_t i = 0; i < PG / 8; i++) {
                w[i] = pat(j->seed, p, i);
            }
        }
    }
    return NULL;
}

static uint64_t run2(struct env *e, int op, uint64_t seed, pid_t *tids)
{
    struct job j[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        j[i] = (struct job){ .e = e, .op = op, .half = i, .seed = seed };
        pthread_create(&th[i], NULL, worker, &j[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        if (tids) {
            tids[i] = j[i].tid;
        }
    }
    return j[0].bad + j[1].bad;
}

static void one(struct env *e, enum cxlssd_policy pol, uint32_t prefetch,
                enum cxlssd_eviction ev, const char *rec)
{
    char name[128];
    snprintf(name, sizeof(name), "sigbus %s prefetch=%u eviction=%s",
             cxlssd_policy_name(pol), prefetch, cxlssd_eviction_name(ev));
    struct cxlssd_model *m = test_policy_model(NPAGES, FRAMES, pol, prefetch,
                                               ev, name);
    if (!m) {
        return;
    }
    uint64_t seed1 = 0x5157 + (uint64_t)pol * 13 + prefetch + ev * 7;
    uint64_t seed2 = seed1 * 31 + 1;
    fill_pattern(e->b, NPAGES, seed1);
    struct cxlssd_trap *t = recorded_trap_new(m, e, CXLSSD_DELIVERY_SIGBUS,
                                              rec, name);
    if (!t) {
        return;
    }
    pid_t tids[6];
    uint64_t bad1 = run2(e, 0, seed1, tids);
    uint64_t bad2 = run2(e, 1, seed2, tids + 2);
    uint64_t badb = check_pages(e->b, NPAGES, seed2);
    uint64_t bad3 = run2(e, 0, seed2, tids + 4);
    struct cxlssd_stats s;
    struct cxlssd_trap_stats ts;
    bool wp = finish_trap(t, m, &s, &ts);
    tap_ok(bad1 == 0 && bad2 == 0 && badb == 0 && bad3 == 0 &&
       s.misses + s.prefetch_issued >= NPAGES &&
       s.evictions_dirty > 0 && ts.sigbus_faults >= s.misses &&
       ts.faults == ts.sigbus_faults && (!wp || ts.wp_faults > 0) &&
       ts.wakes == 0,
       "%s: mismatches read=%llu write=%llu viaB=%llu reread=%llu; "
       "misses=%llu prefetched=%llu loading_waits=%llu sigbus=%llu wp=%llu "
       "(tracking %s) dirty evictions=%llu wakes=%llu", name,
       (unsigned long long)bad1, (unsigned long long)bad2,
       (unsigned long long)badb, (unsigned long long)bad3,
       (unsigned long long)s.misses, (unsigned long long)s.prefetch_issued,
       (unsigned long long)s.loading_waits,
       (unsigned long long)ts.sigbus_faults,
       (unsigned long long)ts.wp_faults, wp ? "on" : "off",
       (unsigned long long)s.evictions_dirty,
       (unsigned long long)ts.wakes);
    if (rec) {
        /* every record carries one of the faulting threads' ids */
        FILE *f = fopen(rec, "r");
        char line[1024];
        uint64_t rows = 0, foreign = 0;
        while (f && fgets(line, sizeof(line), f)) {
            if (rows++ == 0) {
                continue;   /* header */
            }
            int tid = 0;
            char *c = strchr(line, ',');            /* seq, */
            c = c ? strchr(c + 1, ',') : NULL;      /* page, */
            if (c) {
                tid = atoi(c + 1);
            }
            bool known = false;
            for (int i = 0; i < 6; i++) {
                known = known || tid == tids[i];
            }
            foreign += !known;
        }
        if (f) {
            fclose(f);
        }
        tap_ok(rows > NPAGES && foreign == 0, "%s: %llu record rows, %llu not "
           "from the faulting threads", name, (unsigned long long)rows,
           (unsigned long long)foreign);
        unlink(rec);
    }
    cxlssd_model_free(m);
}

static sigjmp_buf chain_jmp;
static volatile sig_atomic_t chained;

static void prev_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    chained = 1;
    siglongjmp(chain_jmp, 1);
}

/* SIGBUS outside every trap: the previous handler runs. */
static void __attribute__((noinline)) check_chain(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/cxlssd-trap-sigbus-%d.bin",
             (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    unlink(path);
    char *x = fd >= 0 ? mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0)
                      : MAP_FAILED;
    chained = 0;
    if (x != MAP_FAILED && sigsetjmp(chain_jmp, 1) == 0) {
        (void)*(volatile char *)x;      /* beyond EOF: SIGBUS */
    }
    tap_ok(chained == 1, "a SIGBUS outside the trap goes to the previous "
       "handler");
    if (x != MAP_FAILED) {
        munmap(x, PG);
    }
    if (fd >= 0) {
        close(fd);
    }
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 120);

    /* A previous SIGBUS handler, for the chaining check below. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = prev_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);

    char rec[64];
    snprintf(rec, sizeof(rec), "/tmp/cxlssd-trap-sigbus-%d.csv",
             (int)getpid());
    bool first = true;
    enum cxlssd_policy pols[] = { CXLSSD_POLICY_FIFO, CXLSSD_POLICY_CLOCK };
    for (int pi = 0; pi < 2; pi++) {
        for (uint32_t pf = 0; pf <= 4; pf += 4) {
            for (int ev = 0; ev < CXLSSD_EVICTION_COUNT; ev++) {
                one(&e, pols[pi], pf, (enum cxlssd_eviction)ev,
                    first ? rec : NULL);
                first = false;
            }
        }
    }

    check_lost_mapping(&e, CXLSSD_DELIVERY_SIGBUS);

    /* Kernel access to a non-resident page: EFAULT, no hang. */
    {
        struct cxlssd_config mc;
        test_model_config(&mc, NPAGES, FRAMES);
        struct cxlssd_model *m = test_model(&mc);
        struct cxlssd_trap_config tc;
        char err[256];
        test_trap_config(&tc, CXLSSD_DELIVERY_SIGBUS, 1);
        struct cxlssd_trap *t = m ? cxlssd_trap_new(m, e.a, e.len, &tc, NULL,
                                                    err, sizeof(err)) : NULL;
        int fds[2];
        if (t && pipe(fds) == 0) {
            char buf[64] = "kernel access";
            ssize_t w = write(fds[1], buf, sizeof(buf));
            errno = 0;
            ssize_t r = read(fds[0], e.a + 7 * PG, sizeof(buf));
            int er = errno;
            tap_ok(w == (ssize_t)sizeof(buf) && r < 0 && er == EFAULT,
               "read() into a non-resident page fails with EFAULT "
               "(r=%zd: %s)", r, strerror(er));
            /* the same page touched from user mode is then served */
            volatile unsigned char *p = e.a + 7 * PG;
            unsigned char c = *p;
            tap_ok(c == e.b[7 * PG], "user-mode access after it is served");
            close(fds[0]);
            close(fds[1]);
        } else {
            tap_ok(0, "trap for the kernel-access check: %s", t ? "pipe" : err);
        }

        /* An access through another mapping (QEMU's own, in the device):
         * served in the calling thread, no signal; a write marks dirty. */
        if (t) {
            struct cxlssd_trap_stats t0, t1;
            struct cxlssd_stats s0, s1;
            cxlssd_trap_get_stats(t, &t0);
            cxlssd_model_get_stats(m, &s0);
            bool was_cached = cxlssd_page_state(m, 20) == CXLSSD_CACHED ||
                              cxlssd_page_state(m, 21) == CXLSSD_CACHED;
            cxlssd_trap_access(t, 20 * PG + PG - 8, 16, false);
            bool cached = cxlssd_page_state(m, 20) == CXLSSD_CACHED &&
                          cxlssd_page_state(m, 21) == CXLSSD_CACHED;
            bool clean = !cxlssd_page_dirty(m, 20);
            cxlssd_trap_access(t, 20 * PG, 8, true);
            cxlssd_trap_get_stats(t, &t1);
            cxlssd_model_get_stats(m, &s1);
            tap_ok(!was_cached && cached && clean && cxlssd_page_dirty(m, 20) &&
               s1.misses == s0.misses + 2 &&
               t1.sigbus_faults == t0.sigbus_faults,
               "cxlssd_trap_access over two non-resident pages: resident "
               "%d, misses +%llu, signals +%llu, written page dirty %d",
               cached, (unsigned long long)(s1.misses - s0.misses),
               (unsigned long long)(t1.sigbus_faults - t0.sigbus_faults),
               cxlssd_page_dirty(m, 20));
            /* resident now: the registered view reads without a signal */
            unsigned char c = *(volatile unsigned char *)(e.a + 21 * PG);
            struct cxlssd_trap_stats t2;
            cxlssd_trap_get_stats(t, &t2);
            tap_ok(c == e.b[21 * PG] && t2.sigbus_faults == t1.sigbus_faults,
               "page served by cxlssd_trap_access is mapped in the "
               "registered view");
        }

        check_chain();
        if (t) {
            cxlssd_trap_free(t);
        }
        cxlssd_model_free(m);
    }
    env_close(&e);
    return tap_done();
}
