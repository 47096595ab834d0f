/*
 * Quiescing the trap's threads for a reset: every handler and the
 * background eviction worker parks between events (faults raised meanwhile
 * stay queued in the uffd), the reset runs, and they resume.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trap_int.h"

bool trap_park_if_paused(struct cxlssd_trap *t)
{
    if (!atomic_load_explicit(&t->pause_req, memory_order_acquire)) {
        return atomic_load_explicit(&t->stop, memory_order_relaxed);
    }
    pthread_mutex_lock(&t->ctl_lock);
    t->parked++;
    pthread_cond_broadcast(&t->ctl_cond);
    while (atomic_load(&t->pause_req) && !atomic_load(&t->stop)) {
        pthread_cond_wait(&t->ctl_cond, &t->ctl_lock);
    }
    t->parked--;
    pthread_mutex_unlock(&t->ctl_lock);
    return atomic_load(&t->stop);
}

void trap_wake_pollers(struct cxlssd_trap *t)
{
    uint64_t one = 1;
    if (t->stop_efd >= 0 && write(t->stop_efd, &one, sizeof(one)) < 0 &&
        errno != EAGAIN) {
        trap_error(t, "eventfd write: %s", strerror(errno));
    }
}

static void efd_clear(struct cxlssd_trap *t)
{
    uint64_t v;
    if (t->stop_efd >= 0 && read(t->stop_efd, &v, sizeof(v)) < 0 &&
        errno != EAGAIN) {
        trap_error(t, "eventfd read: %s", strerror(errno));
    }
}

void cxlssd_trap_reset(struct cxlssd_trap *t)
{
    pthread_mutex_lock(&t->reset_lock);
    /* Quiesce: every handler and the eviction worker parks between events;
     * faults raised meanwhile stay queued in the uffd. */
    atomic_store(&t->pause_req, true);
    trap_wake_pollers(t);
    pthread_mutex_lock(&t->evict_lock);
    pthread_cond_broadcast(&t->evict_cond);
    pthread_mutex_unlock(&t->evict_lock);
    pthread_mutex_lock(&t->ctl_lock);
    while (t->parked < t->parties) {
        pthread_cond_wait(&t->ctl_cond, &t->ctl_lock);
    }
    pthread_mutex_unlock(&t->ctl_lock);

    /* No fill or eviction in flight now, except queued prefetches. */
    cxlssd_complete_all_prefetches(t->svc);
    if (t->media) {
        trap_media_flush(t, true);  /* the cache starts cold, data kept */
    }
    if (madvise(t->base, t->len, MADV_DONTNEED) < 0) {
        trap_error(t, "madvise(DONTNEED) at reset: %s", strerror(errno));
    }
    atomic_fetch_add_explicit(&t->st_madvise, 1, memory_order_relaxed);
    cxlssd_model_reset_residency(t->model);

    efd_clear(t);
    pthread_mutex_lock(&t->ctl_lock);
    atomic_store(&t->pause_req, false);
    pthread_cond_broadcast(&t->ctl_cond);
    pthread_mutex_unlock(&t->ctl_lock);
    pthread_mutex_unlock(&t->reset_lock);
}
