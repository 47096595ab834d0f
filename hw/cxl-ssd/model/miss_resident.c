/*
 * The miss service's resident faults: a fault on a page the model holds
 * resident is mapped again if its mapping was lost, and the media store's
 * evictors wait for such remaps before they copy a victim's data out.
 */
#include "miss_service_int.h"

#include "relax.h"

/*
 * A fault on a page the model holds resident.  Usually a duplicate: the
 * page was mapped after the fault was raised (two vCPUs, or a prefetch
 * completing), and the map finds it mapped and wakes the faulter.  But if
 * the page table lost the mapping while the model kept the page CACHED,
 * only mapping it again ends the fault (a wake alone would make the
 * faulter fault again, forever).
 *
 * The page may be picked for eviction at any point of this.  A page that
 * is no longer CACHED when the count below is up is not mapped: the
 * faulter is woken and faults again, into the miss path.  One picked after
 * that check may have had its evictor's unmap run before this map: it is
 * unmapped again, so a page the model does not hold never stays mapped.
 * Until then the faulter may write through the new mapping, so an
 * evictor that copies the page's data out and then drops it (the media
 * store) waits for the count to fall first (cxlssd_wait_resident_remaps):
 * a write landing between its copy and its drop would be lost.  The count
 * and the state are read seq_cst on both sides (the evictor changes the
 * state before its unmap, and reads the count after it).
 */
void cxlssd_serve_resident_fault(struct cxlssd_miss_service *svc,
                                 uint64_t page)
{
    if (!svc->sub->map) {
        return;
    }
    atomic_fetch_add(&svc->resident_remaps, 1);
    if (cxlssd_page_state(svc->model, page) != CXLSSD_CACHED) {
        atomic_fetch_sub_explicit(&svc->resident_remaps, 1,
                                  memory_order_seq_cst);
        wake(svc, page);
        return;
    }
    if (svc->sub->map(svc->sub->opaque, page, false) == 0) {
        count(&svc->st_remaps, 1);
        enum cxlssd_page_state s = cxlssd_page_state(svc->model, page);
        if ((s == CXLSSD_NOT_CACHED || s == CXLSSD_EVICTING) &&
            svc->sub->unmap) {
            struct cxlssd_victim v = { .page = page };
            svc->sub->unmap(svc->sub->opaque, &v, 1);
        }
    }   /* else mapped already (woken), or an error (reported) */
    atomic_fetch_sub_explicit(&svc->resident_remaps, 1,
                              memory_order_seq_cst);
}

void cxlssd_wait_resident_remaps(struct cxlssd_miss_service *svc)
{
    while (atomic_load(&svc->resident_remaps) != 0) {
        cxlssd_cpu_relax();
    }
}
