/*
 * Eviction: unmapping victims, and the background eviction worker.
 *
 * Victims are unmapped with MADV_DONTNEED on the registered mapping (the
 * data stays in the memfd page cache; the next access raises a MINOR
 * fault), then the caller calls cxlssd_evict_done() (the miss service for
 * a miss's victims, the worker below for its own).  Contiguous victim
 * pages are coalesced into one range, and a batch's ranges go to the
 * kernel in one process_madvise call (unmap_runs; see there).  The
 * cost of a call varies a lot by host: ~1 us for one page on an idle
 * host, 10-16 us while another CPU runs the process (TLB shootdown IPI),
 * 40-50 us per call on the shadow-paging (PVM) project machines under
 * load.  A miss unmaps its own victims before
 * it waits for its absolute NAND deadline, so an unmap shorter than the
 * NAND read is free (see defer_unmap in trap.h for the alternative).
 * With keep_clean_mapped (delivery=tlb: the embedder drops its own
 * translations) a clean victim skips the host unmap: only the unmapped()
 * hook runs (keep_or_collect).
 *
 * Background mode (model eviction=background): a worker thread sleeps on
 * a condvar, is kicked by handlers when cxlssd_evict_needed(), and calls
 * cxlssd_evict_background() in batches until it returns 0 (so a miss
 * usually finds a free frame and has no victim to unmap); a 10 ms timed
 * wait re-checks the watermark in case a kick is lost.  It parks for
 * resets between batches, like the handlers.  eviction=batch has no
 * worker: the miss that crosses the low watermark frees the same batches
 * on its own path (model/miss_evict.c, miss_evict_batch) through the
 * substrate's unmap, i.e. trap_unmap_victims() below.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "trap_int.h"

#define EVICT_BATCH 64

static int cmp_page(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The embedder drops its cached translations of the pages (trap.h). */
static void unmapped(struct cxlssd_trap *t, uint64_t first, uint64_t n)
{
    if (t->hooks.unmapped && !trap_in_signal_handler()) {
        t->hooks.unmapped(t->hooks.opaque, first, n);
        atomic_fetch_add_explicit(&t->st_tlb_inval, 1, memory_order_relaxed);
    }
}

void trap_unmap_range(struct cxlssd_trap *t, uint64_t first, uint64_t n)
{
    if (madvise(t->base + first * t->page_size, n * t->page_size,
                MADV_DONTNEED) < 0) {
        trap_error(t, "madvise(DONTNEED, page %llu, %llu pages): %s",
                   (unsigned long long)first, (unsigned long long)n,
                   strerror(errno));
    }
    atomic_fetch_add_explicit(&t->st_madvise, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->st_unmapped, n, memory_order_relaxed);
    unmapped(t, first, n);
}

#define UNMAP_CHUNK (CXLSSD_MAX_VICTIMS > EVICT_BATCH ? CXLSSD_MAX_VICTIMS \
                                                       : EVICT_BATCH)

#define TRAP_PIDFD_SELF_PROCESS (-10001)    /* linux/pidfd.h, 6.14+ */

/* All runs of a batch in one process_madvise(MADV_DONTNEED) on this
 * process: one system call, and a kernel that batches the TLB flush
 * (6.16+) sends one shootdown IPI to the CPUs running the process instead
 * of one per run.  Measured on a 6.18 host with another thread running: a
 * call for 33 scattered pages cost ~570 us, about what 33 single unmaps
 * cost (bench/floor/README.md), so do not count on it.  The process is
 * named by PIDFD_SELF_PROCESS (6.14+; no file descriptor to keep).  Older kernels
 * refuse it (ENOSYS, EBADF, or EINVAL for DONTNEED): one madvise per run,
 * as before. */
static void unmap_runs(struct cxlssd_trap *t, const struct iovec *iov,
                       uint32_t n)
{
    if (n > 1 &&
        !atomic_load_explicit(&t->madvise_per_run, memory_order_relaxed)) {
        size_t total = 0;
        for (uint32_t i = 0; i < n; i++) {
            total += iov[i].iov_len;
        }
        ssize_t r = syscall(SYS_process_madvise, TRAP_PIDFD_SELF_PROCESS,
                            iov, (size_t)n, MADV_DONTNEED, 0u);
        if (r == (ssize_t)total) {
            atomic_fetch_add_explicit(&t->st_madvise, 1,
                                      memory_order_relaxed);
            atomic_fetch_add_explicit(&t->st_unmapped,
                                      total / t->page_size,
                                      memory_order_relaxed);
            for (uint32_t i = 0; i < n; i++) {
                unmapped(t, (uint64_t)((char *)iov[i].iov_base - t->base) /
                                t->page_size,
                         iov[i].iov_len / t->page_size);
            }
            return;
        }
        if (r < 0 && (errno == ENOSYS || errno == EINVAL ||
                      errno == EPERM || errno == EBADF || errno == ESRCH)) {
            atomic_store(&t->madvise_per_run, true);
        }
        /* else partly done: redo every run (DONTNEED is idempotent) */
    }
    for (uint32_t i = 0; i < n; i++) {
        trap_unmap_range(t, (uint64_t)((char *)iov[i].iov_base - t->base) /
                                t->page_size,
                         iov[i].iov_len / t->page_size);
    }
}

/* Collects into @pages the victims of @v[0, @k) to unmap on the host, and
 * returns their count.  With keep_clean a victim that is clean now (the
 * model's bit, not only the choice's: a write-protect fault may have
 * landed since) stays mapped: the embedder drops its translations, and its
 * write-protected PTE still catches any other store. */
static uint32_t keep_or_collect(struct cxlssd_trap *t,
                                const struct cxlssd_victim *v, uint32_t k,
                                uint64_t *pages)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (t->keep_clean && !v[i].dirty &&
            !cxlssd_page_dirty(t->model, v[i].page)) {
            atomic_fetch_add_explicit(&t->st_kept_mapped, 1,
                                      memory_order_relaxed);
            unmapped(t, v[i].page, 1);
        } else {
            pages[m++] = v[i].page;
        }
    }
    return m;
}

void trap_unmap_victims(struct cxlssd_trap *t, const struct cxlssd_victim *v,
                        uint32_t n)
{
    uint64_t pages[UNMAP_CHUNK];
    while (n > 0) {
        uint32_t k = n < UNMAP_CHUNK ? n : UNMAP_CHUNK;
        uint32_t m = keep_or_collect(t, v, k, pages);
        v += k;
        n -= k;
        if (m == 0) {
            continue;
        }
        qsort(pages, m, sizeof(*pages), cmp_page);
        struct iovec iov[UNMAP_CHUNK];
        uint32_t nr = 0;
        uint64_t start = pages[0], len = 1;
        for (uint32_t i = 1; i <= m; i++) {
            if (i < m && pages[i] == start + len) {
                len++;
            } else if (i == m || pages[i] != start + len - 1) {
                /* a run ends (duplicates skipped) */
                iov[nr].iov_base = t->base + start * t->page_size;
                iov[nr++].iov_len = len * t->page_size;
                if (i < m) {
                    start = pages[i];
                    len = 1;
                }
            }
        }
        unmap_runs(t, iov, nr);
    }
}

static void *evict_main(void *arg)
{
    struct cxlssd_trap *t = arg;
    struct cxlssd_victim v[EVICT_BATCH];

    for (;;) {
        if (trap_park_if_paused(t)) {
            break;
        }
        pthread_mutex_lock(&t->evict_lock);
        while (!atomic_load(&t->evict_kicked) && !atomic_load(&t->stop) &&
               !atomic_load(&t->pause_req)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 10000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            if (pthread_cond_timedwait(&t->evict_cond, &t->evict_lock,
                                       &ts) == ETIMEDOUT &&
                cxlssd_evict_needed(t->model)) {
                break;
            }
        }
        atomic_store(&t->evict_kicked, false);
        pthread_mutex_unlock(&t->evict_lock);
        if (atomic_load(&t->stop)) {
            break;
        }
        while (!atomic_load(&t->stop) && !atomic_load(&t->pause_req)) {
            uint32_t n = cxlssd_evict_background(t->model, cxlssd_now_ns(), v,
                                                 EVICT_BATCH);
            if (n == 0) {
                break;
            }
            trap_unmap_victims(t, v, n);
            if (t->media) {
                trap_media_evict(t, v, n);
            }
            for (uint32_t i = 0; i < n; i++) {
                cxlssd_evict_done(t->model, v[i].page);
            }
        }
    }
    return NULL;
}

void trap_evict_kick(struct cxlssd_trap *t)
{
    if (!t->evict_started ||
        atomic_load_explicit(&t->evict_kicked, memory_order_relaxed) ||
        !cxlssd_evict_needed(t->model)) {
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
    if (!t->background) {
        return 0;
    }
    int r = pthread_create(&t->evict_thread, NULL, evict_main, t);
    if (r != 0) {
        snprintf(err, errlen, "cxl-ssd trap: eviction thread: %s",
                 strerror(r));
        return -1;
    }
    pthread_setname_np(t->evict_thread, "cxlssd-evict");
    t->evict_started = true;
    pthread_mutex_lock(&t->ctl_lock);
    t->parties++;
    pthread_mutex_unlock(&t->ctl_lock);
    return 0;
}

void trap_evict_stop(struct cxlssd_trap *t)
{
    if (!t->evict_started) {
        return;
    }
    /* t->stop is already set by the caller */
    pthread_mutex_lock(&t->evict_lock);
    pthread_cond_broadcast(&t->evict_cond);
    pthread_mutex_unlock(&t->evict_lock);
    pthread_join(t->evict_thread, NULL);
    t->evict_started = false;
}
