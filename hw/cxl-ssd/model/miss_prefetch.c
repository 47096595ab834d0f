/*
 * The miss service's prefetches: cxlssd_miss() hands back pages now
 * LOADING on the caller's behalf, each with its own deadline.  They wait
 * in one queue per device (prefetch_queue.c); any thread serving misses
 * completes the due ones (fill, map, fill_done), and the trap's sleeping
 * handlers bound their sleep by the earliest deadline.  An access to a
 * still-LOADING prefetched page takes the LOADING path (miss_wait.c).
 */
#include "miss_service_int.h"

#define PREFETCH_BATCH 32

static void complete_prefetch(struct cxlssd_miss_service *svc, uint64_t page,
                              bool quiet)
{
    if (svc->sub->fill) {
        svc->sub->fill(svc->sub->opaque, page);
    }
    if (svc->sub->map) {
        svc->sub->map(svc->sub->opaque, page, false);
    }
    cxlssd_fill_done(svc->model, page);
    TRACE(svc, quiet, prefetch_complete, page);
}

void miss_queue_prefetches(struct cxlssd_miss_service *svc,
                             const struct cxlssd_prefetch *p, uint32_t n,
                             bool quiet)
{
    uint64_t overflow[CXLSSD_MAX_PREFETCH];
    for (uint32_t i = 0; i < n; i++) {
        TRACE(svc, quiet, prefetch_issue, p[i].page, p[i].deadline_ns);
    }
    uint32_t nover = cxlssd_prefetch_queue_push(svc->prefetches, p, n,
                                                overflow);
    for (uint32_t i = 0; i < nover; i++) {
        complete_prefetch(svc, overflow[i], quiet);
    }
}

uint32_t miss_complete_queued(struct cxlssd_miss_service *svc, uint64_t now,
                              bool all, bool quiet)
{
    uint32_t done = 0;
    for (;;) {
        uint64_t pages[PREFETCH_BATCH];
        uint32_t n = cxlssd_prefetch_queue_pop_due(svc->prefetches, now, all,
                                                   pages, PREFETCH_BATCH);
        for (uint32_t i = 0; i < n; i++) {
            complete_prefetch(svc, pages[i], quiet);
        }
        done += n;
        if (n < PREFETCH_BATCH) {
            return done;
        }
    }
}

uint32_t cxlssd_complete_prefetches(struct cxlssd_miss_service *svc,
                                    uint64_t now)
{
    return miss_complete_due(svc, now, false);
}

uint64_t cxlssd_next_prefetch(const struct cxlssd_miss_service *svc)
{
    return cxlssd_prefetch_queue_next(svc->prefetches);
}

void cxlssd_complete_all_prefetches(struct cxlssd_miss_service *svc)
{
    miss_complete_queued(svc, 0, true, false);
}
