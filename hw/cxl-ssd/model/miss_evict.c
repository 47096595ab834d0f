/*
 * The miss service's evictions: a miss's victims leave the mapping and
 * host memory (substrate unmap, then evict), then the model frees their
 * frames (evict_done).  With eviction=batch the fill that finds the
 * model's free frames below the low watermark also frees them up to the
 * high one before its own NAND wait, in unmap calls of BATCH_VICTIMS (one
 * TLB shootdown each): no worker thread, and one miss in (high - low)
 * frames pays for the others.  The page being filled is LOADING
 * meanwhile, so the batch never evicts it.
 */
#include "miss_service_int.h"

#define BATCH_VICTIMS 32    /* victims per unmap call of a batch (stack) */

void miss_record_victims(struct cxlssd_miss_service *svc,
                         struct cxlssd_record *rec,
                         const struct cxlssd_victim *v, uint32_t n,
                         bool quiet)
{
    if (rec->victim_page == UINT64_MAX) {
        rec->victim_page = v[0].page;
    }
    rec->nvictims += n;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].dirty) {
            rec->flags |= CXLSSD_REC_DIRTY_EVICT;
            TRACE(svc, quiet, writeback, v[i].page);
        }
    }
}

void miss_unmap_victims(struct cxlssd_miss_service *svc,
                        const struct cxlssd_victim *v, uint32_t n,
                        bool quiet)
{
    if (svc->sub->unmap) {
        svc->sub->unmap(svc->sub->opaque, v, n);
    }
    if (svc->sub->evict) {
        svc->sub->evict(svc->sub->opaque, v, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        cxlssd_evict_done(svc->model, v[i].page);
        TRACE(svc, quiet, evict, v[i].page, v[i].dirty);
    }
}

void miss_evict_batch(struct cxlssd_miss_service *svc,
                      struct cxlssd_record *rec, bool quiet)
{
    struct cxlssd_victim v[BATCH_VICTIMS];
    uint32_t n;

    if (!svc->cfg.batch_evict || !cxlssd_evict_needed(svc->model)) {
        return;
    }
    while (!stopping(svc) &&
           (n = cxlssd_evict_background(svc->model, now_ns(), v,
                                        BATCH_VICTIMS)) > 0) {
        miss_record_victims(svc, rec, v, n, quiet);
        miss_unmap_victims(svc, v, n, quiet);
        rec->t_unmapped_ns = now_ns();
    }
}
