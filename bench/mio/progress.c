/* progress.c: the main thread waits for the workers and, every interval,
 * prints "done/total" of the current phase to stderr.  Workers only bump
 * their own counters (one cache line each, relaxed stores); the current
 * phase is set by whichever worker leaves a barrier first. */
#include "mio.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static const char *const phase_names[MIO_PH_COUNT] = {
    "build", "warmup", "check", "measure", "write", "verify",
};

struct mio_progress {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned threads, finished;
    double interval_s, start_s;
    _Atomic int phase;
    _Atomic unsigned pass, passes;
    uint64_t total[MIO_PH_COUNT];
    const char *unit[MIO_PH_COUNT];
    struct mio_progress_slot *slots;
};

struct mio_progress *mio_progress_new(unsigned threads, double interval_s)
{
    struct mio_progress *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    if (posix_memalign((void **)&p->slots, 64,
                       threads * sizeof(*p->slots))) {
        free(p);
        return NULL;
    }
    for (unsigned t = 0; t < threads; t++)
        for (int ph = 0; ph < MIO_PH_COUNT; ph++)
            atomic_init(&p->slots[t].done[ph], 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->threads = threads;
    p->interval_s = interval_s;
    p->start_s = mio_now_s();
    atomic_init(&p->phase, MIO_PH_BUILD);
    atomic_init(&p->pass, 0);
    atomic_init(&p->passes, 0);
    return p;
}

struct mio_progress_slot *mio_progress_slot(struct mio_progress *p,
                                            unsigned t)
{
    return &p->slots[t];
}

void mio_progress_set_total(struct mio_progress *p, enum mio_phase ph,
                            uint64_t total, const char *unit)
{
    p->total[ph] = total;
    p->unit[ph] = unit;
}

void mio_progress_set_phase(struct mio_progress *p, enum mio_phase ph)
{
    atomic_store_explicit(&p->phase, (int)ph, memory_order_relaxed);
}

void mio_progress_pass(struct mio_progress *p, unsigned pass,
                       unsigned passes)
{
    atomic_store_explicit(&p->pass, pass, memory_order_relaxed);
    atomic_store_explicit(&p->passes, passes, memory_order_relaxed);
}

void mio_progress_thread_done(struct mio_progress *p)
{
    pthread_mutex_lock(&p->mu);
    p->finished++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void report(struct mio_progress *p)
{
    int ph = atomic_load_explicit(&p->phase, memory_order_relaxed);
    uint64_t done = 0;
    for (unsigned t = 0; t < p->threads; t++)
        done += atomic_load_explicit(&p->slots[t].done[ph],
                                     memory_order_relaxed);
    uint64_t total = p->total[ph];
    if (total && done > total)
        done = total;
    unsigned passes = atomic_load_explicit(&p->passes, memory_order_relaxed);
    char passbuf[48] = "";
    if (passes > 1)
        snprintf(passbuf, sizeof(passbuf), " pass %u/%u",
                 atomic_load_explicit(&p->pass, memory_order_relaxed) + 1,
                 passes);
    fprintf(stderr, "mio: progress: %s%s %llu/%llu %s (%.1f%%) %.0f s\n",
            phase_names[ph], passbuf, (unsigned long long)done,
            (unsigned long long)total, p->unit[ph] ? p->unit[ph] : "",
            total ? 100.0 * (double)done / (double)total : 0.0,
            mio_now_s() - p->start_s);
}

void mio_progress_wait(struct mio_progress *p)
{
    pthread_mutex_lock(&p->mu);
    double next = p->start_s + p->interval_s;
    while (p->finished < p->threads) {
        if (p->interval_s <= 0) {
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        struct timespec ts;
        ts.tv_sec = (time_t)next;
        ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
        int rc = pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        if (rc == ETIMEDOUT && p->finished < p->threads) {
            report(p);
            next += p->interval_s;
            double now = mio_now_s();
            if (next < now)
                next = now + p->interval_s;
        }
    }
    pthread_mutex_unlock(&p->mu);
}

void mio_progress_free(struct mio_progress *p)
{
    if (!p)
        return;
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->slots);
    free(p);
}
