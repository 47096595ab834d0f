/*
 * Eviction: unmapping victims, and the eviction worker.
 *
 * Victims are unmapped with MADV_DONTNEED on the registered mapping (the
 * data stays in the memfd page cache; the next access raises a MINOR
 * fault), then cxlssd_evict_done().  Contiguous victim pages are coalesced
 * into one madvise call.  The cost of a call varies a lot by host: ~1 us
 * for one page on an idle bare-metal-like host, 10-16 us while another CPU
 * runs the process (TLB shootdown IPI), 40-50 us per call on the
 * shadow-paging (PVM) project machines under load, where it dwarfs the
 * 6.2 us NAND read.
 *
 * The worker thread therefore does two jobs:
 *  - deferred unmapping (cfg->unmap_inline off, the default): a miss
 *    queues its victims here instead of unmapping them itself, so the
 *    unmap overlaps the NAND wait and the faulter's resumption; the worker
 *    drains the queue in batches (sorted and coalesced across misses).  A
 *    queued victim stays EVICTING, i.e. mapped: an access to it in that
 *    window is a hit, and a fault on it after the unmap waits on the
 *    EVICTING path until evict_done.
 *  - background eviction (model eviction=background): kicked by handlers
 *    when cxlssd_evict_needed(), it calls cxlssd_evict_background() in
 *    batches until it returns 0; a 10 ms timed wait re-checks the
 *    watermark in case a kick is lost.
 * The queue never holds more than the cache's frames (each entry is an
 * EVICTING page holding a frame); if it is full (not expected), the miss
 * unmaps inline.  Before parking for a reset and before exiting, the
 * worker drains the queue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trap_int.h"

#define EVICT_BATCH 64
#define UNMAP_BATCH 256

static int cmp_page(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void unmap_run(struct cxlssd_trap *t, uint64_t first, uint64_t n)
{
    if (madvise(t->base + first * t->page_size, n * t->page_size,
                MADV_DONTNEED) < 0) {
        fprintf(stderr, "cxl-ssd trap: madvise(DONTNEED, page %llu, %llu "
                "pages): %s\n", (unsigned long long)first,
                (unsigned long long)n, strerror(errno));
    }
    atomic_fetch_add_explicit(&t->st_madvise, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->st_unmapped, n, memory_order_relaxed);
}

/* Unmap @n pages (sorted in place, coalesced), then evict_done each. */
static void unmap_pages(struct cxlssd_trap *t, uint64_t *pages, uint32_t n)
{
    if (n == 0) {
        return;
    }
    qsort(pages, n, sizeof(*pages), cmp_page);
    uint64_t start = pages[0], len = 1;
    for (uint32_t i = 1; i < n; i++) {
        if (pages[i] == start + len) {
            len++;
        } else if (pages[i] != start + len - 1) {   /* skip duplicates */
            unmap_run(t, start, len);
            start = pages[i];
            len = 1;
        }
    }
    unmap_run(t, start, len);
    for (uint32_t i = 0; i < n; i++) {
        cxlssd_evict_done(t->model, pages[i]);
    }
}

void trap_unmap_victims(struct cxlssd_trap *t, const struct cxlssd_victim *v,
                        uint32_t n)
{
    uint64_t pages[UNMAP_BATCH];
    while (n > 0) {
        uint32_t k = n < UNMAP_BATCH ? n : UNMAP_BATCH;
        for (uint32_t i = 0; i < k; i++) {
            pages[i] = v[i].page;
        }
        unmap_pages(t, pages, k);
        v += k;
        n -= k;
    }
}

void trap_evict_defer(struct cxlssd_trap *t, const struct cxlssd_victim *v,
                      uint32_t n)
{
    if (n == 0) {
        return;
    }
    pthread_mutex_lock(&t->evict_lock);
    if (!t->evict_started || t->uq_len + n > t->uq_cap) {
        pthread_mutex_unlock(&t->evict_lock);
        trap_unmap_victims(t, v, n);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        t->uq[(t->uq_head + t->uq_len++) % t->uq_cap] = v[i].page;
    }
    if (t->evict_waiting) {
        pthread_cond_signal(&t->evict_cond);
    }
    pthread_mutex_unlock(&t->evict_lock);
}

void trap_evict_forget_queue(struct cxlssd_trap *t)
{
    pthread_mutex_lock(&t->evict_lock);
    t->uq_head = t->uq_len = 0;
    pthread_mutex_unlock(&t->evict_lock);
}

/* evict_lock held: take up to @max queued pages. */
static uint32_t take_queued(struct cxlssd_trap *t, uint64_t *out, uint32_t max)
{
    uint32_t n = 0;
    while (t->uq_len > 0 && n < max) {
        out[n++] = t->uq[t->uq_head];
        t->uq_head = (t->uq_head + 1) % t->uq_cap;
        t->uq_len--;
    }
    return n;
}

static void *evict_main(void *arg)
{
    struct cxlssd_trap *t = arg;
    struct cxlssd_victim v[EVICT_BATCH];
    uint64_t pages[UNMAP_BATCH];

    for (;;) {
        pthread_mutex_lock(&t->evict_lock);
        while (t->uq_len == 0 && !atomic_load(&t->evict_kicked) &&
               !atomic_load(&t->stop) && !atomic_load(&t->pause_req)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 10000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            t->evict_waiting = true;
            int r = pthread_cond_timedwait(&t->evict_cond, &t->evict_lock,
                                           &ts);
            t->evict_waiting = false;
            if (r == ETIMEDOUT && t->background &&
                cxlssd_evict_needed(t->model)) {
                break;
            }
        }
        uint32_t n = take_queued(t, pages, UNMAP_BATCH);
        pthread_mutex_unlock(&t->evict_lock);
        if (n > 0) {
            unmap_pages(t, pages, n);
            continue;       /* drain the queue before anything else */
        }
        if (atomic_load(&t->stop)) {
            break;
        }
        if (atomic_load(&t->pause_req)) {
            if (trap_park_if_paused(t)) {
                break;
            }
            continue;
        }
        atomic_store(&t->evict_kicked, false);
        while (t->background && !atomic_load(&t->stop) &&
               !atomic_load(&t->pause_req)) {
            uint32_t k = cxlssd_evict_background(t->model, trap_now(), v,
                                                 EVICT_BATCH);
            if (k == 0) {
                break;
            }
            trap_unmap_victims(t, v, k);
        }
    }
    return NULL;
}

void trap_evict_kick(struct cxlssd_trap *t)
{
    if (!t->background || !t->evict_started ||
        atomic_load_explicit(&t->evict_kicked, memory_order_relaxed)) {
        return;
    }
    if (!cxlssd_evict_needed(t->model)) {
        return;
    }
    if (!atomic_exchange(&t->evict_kicked, true)) {
        pthread_mutex_lock(&t->evict_lock);
        pthread_cond_signal(&t->evict_cond);
        pthread_mutex_unlock(&t->evict_lock);
    }
}

int trap_evict_start(struct cxlssd_trap *t, char *err, size_t errlen)
{
    if (!t->background && t->cfg.unmap_inline) {
        return 0;   /* nothing for a worker to do */
    }
    uint64_t cap = cxlssd_model_frames(t->model) + CXLSSD_MAX_VICTIMS;
    if (cap > UINT32_MAX / 2) {
        cap = UINT32_MAX / 2;
    }
    t->uq = calloc(cap, sizeof(*t->uq));
    if (!t->uq) {
        snprintf(err, errlen, "cxl-ssd trap: out of memory (unmap queue)");
        return -1;
    }
    t->uq_cap = (uint32_t)cap;
    int r = pthread_create(&t->evict_thread, NULL, evict_main, t);
    if (r != 0) {
        snprintf(err, errlen, "cxl-ssd trap: eviction thread: %s",
                 strerror(r));
        return -1;
    }
    pthread_setname_np(t->evict_thread, "cxlssd-evict");
    pthread_mutex_lock(&t->evict_lock);
    t->evict_started = true;
    pthread_mutex_unlock(&t->evict_lock);
    t->parties++;
    return 0;
}

void trap_evict_stop(struct cxlssd_trap *t)
{
    if (t->evict_started) {
        /* t->stop is already set by the caller; the worker drains the
         * queue before it exits */
        pthread_mutex_lock(&t->evict_lock);
        pthread_cond_broadcast(&t->evict_cond);
        pthread_mutex_unlock(&t->evict_lock);
        pthread_join(t->evict_thread, NULL);
        pthread_mutex_lock(&t->evict_lock);
        t->evict_started = false;
        pthread_mutex_unlock(&t->evict_lock);
    }
    free(t->uq);
    t->uq = NULL;
    t->uq_cap = t->uq_len = t->uq_head = 0;
}
