/*
 * Internal to the miss service (miss_*.c): its state and the helpers its
 * files share.  Not part of the interface (see miss_service.h).  Files, one
 * job each:
 *
 *   miss_service.c   the path a miss takes, top to bottom
 *                    (cxlssd_serve_miss), compensation, the record; the
 *                    service's life cycle
 *   miss_evict.c     a miss's victims leave: unmap, evict_done, and
 *                    eviction=batch's frames freed on the miss path
 *   miss_prefetch.c  prefetches queued, and completed when due
 *   miss_wait.c      waiting on another thread's fill or eviction
 *   miss_resident.c  a fault on a page the model holds resident (remap),
 *                    and the media store's wait for those remaps
 */
#ifndef CXLSSD_MODEL_MISS_SERVICE_INT_H
#define CXLSSD_MODEL_MISS_SERVICE_INT_H

#include <time.h>

#include "miss_service.h"
#include "prefetch_queue.h"

struct cxlssd_miss_service {
    struct cxlssd_model *model;
    struct cxlssd_miss_service_config cfg;
    const struct cxlssd_substrate *sub;     /* &cfg.substrate */
    _Atomic(struct cxlssd_record_ring *) ring;  /* cfg.ring, or as set */
    struct cxlssd_prefetch_queue *prefetches;
    _Atomic uint64_t ordinal;           /* served misses (cfg.record_ab) */
    _Atomic uint64_t st_duplicate, st_remaps, st_unclocked,
        st_serialize_wait_ns, st_late_waits;
    _Atomic uint32_t resident_remaps;   /* cxlssd_serve_resident_fault()s
                                         * between their state check and
                                         * their last unmap */
};

/* Trace hook @hook of the service, unless @quiet (in a signal handler). */
#define TRACE(svc, quiet, hook, ...)                                    \
    do {                                                                \
        if ((svc)->cfg.trace.hook && !(quiet)) {                        \
            (svc)->cfg.trace.hook((svc)->cfg.trace_opaque, __VA_ARGS__); \
        }                                                               \
    } while (0)

/* CLOCK_MONOTONIC ns (cxlssd_now_ns() without the call). */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline bool stopping(const struct cxlssd_miss_service *svc)
{
    return svc->cfg.stop &&
           atomic_load_explicit(svc->cfg.stop, memory_order_relaxed);
}

static inline void count(_Atomic uint64_t *c, uint64_t v)
{
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* Around a wait: the substrate drops its lock (returns whether it did). */
static inline bool wait_begin(struct cxlssd_miss_service *svc)
{
    return svc->sub->wait_begin && svc->sub->wait_begin(svc->sub->opaque);
}

static inline void wait_end(struct cxlssd_miss_service *svc, bool dropped)
{
    if (dropped) {
        svc->sub->wait_end(svc->sub->opaque);
    }
}

static inline void wake(struct cxlssd_miss_service *svc, uint64_t page)
{
    if (svc->sub->wake) {
        svc->sub->wake(svc->sub->opaque, page);
    }
}

/* ---- miss_evict.c ---- */

/* The miss's record counts @n victims (the first one's page, whether any
 * was dirty); their writebacks are traced. */
void miss_record_victims(struct cxlssd_miss_service *svc,
                         struct cxlssd_record *rec,
                         const struct cxlssd_victim *v, uint32_t n,
                         bool quiet);
/* Unmap @n victims, let them leave host memory (substrate evict), then
 * evict_done each. */
void miss_unmap_victims(struct cxlssd_miss_service *svc,
                        const struct cxlssd_victim *v, uint32_t n,
                        bool quiet);
/* eviction=batch: free frames up to the high watermark once the low one is
 * crossed, on this miss's path; the record counts them. */
void miss_evict_batch(struct cxlssd_miss_service *svc,
                      struct cxlssd_record *rec, bool quiet);

/* ---- miss_prefetch.c ---- */

/* Queue a decision's @n prefetches (those that do not fit complete now). */
void miss_queue_prefetches(struct cxlssd_miss_service *svc,
                           const struct cxlssd_prefetch *p, uint32_t n,
                           bool quiet);
/* Complete the queued prefetches due at @now (every one if @all); returns
 * how many. */
uint32_t miss_complete_queued(struct cxlssd_miss_service *svc, uint64_t now,
                              bool all, bool quiet);

/* The due ones, cheaply when none is (every turn of a wait loop). */
static inline uint32_t miss_complete_due(struct cxlssd_miss_service *svc,
                                         uint64_t now, bool quiet)
{
    if (now < cxlssd_prefetch_queue_next(svc->prefetches)) {
        return 0;
    }
    return miss_complete_queued(svc, now, false, quiet);
}

/* ---- miss_wait.c ---- */

/* Until @page leaves LOADING; @hint is its deadline. */
void miss_wait_while_loading(struct cxlssd_miss_service *svc, uint64_t page,
                             uint64_t hint, bool quiet);
/* Until @page's eviction finishes, or ~1 us when no frame of its set can
 * be had; @since is when the retries started. */
void miss_wait_while_evicting(struct cxlssd_miss_service *svc, uint64_t page,
                              uint64_t since, bool quiet);

#endif
