/*
 * Access-path delivery (CXLSSD_DELIVERY_TLB): the embedder (QEMU's TCG,
 * through a RAM block's TLB-fill hook) calls cxlssd_trap_tlb_fill() on the
 * accessing thread before it installs a translation of a page of the range.
 * A non-resident page is served right there as a miss, through the same
 * miss service and substrate as a uffd event, except that its mapping
 * (UFFDIO_CONTINUE) and write-protect clearing wake nobody: no thread
 * sleeps on the page (a host fault that raced with us is a uffd event the
 * handler threads serve and wake themselves).  A resident page costs one
 * atomic load.  Dirty tracking: a clean page's translation is made without
 * store permission, so the first store comes back here, marks the page
 * dirty and clears its write protection on the thread itself (no WP fault).
 *
 * Everything else stays as in POLL delivery: the handler threads serve the
 * host faults of QEMU's own accesses (DMA, monitor, gdbstub, dumps, page
 * table walks) and of translations that still point at an evicted page,
 * which the embedder drops in the unmapped() hook (evict.c calls it).
 * With keep_clean_mapped a victim evicted clean keeps its host mapping
 * (evict.c): a read there does not fault, a store write-protect faults
 * and is served as a write miss (handler.c), and a miss that maps it
 * again finds it mapped (EEXIST: uffd.c clears the write protection for a
 * write miss).
 */
#include "trap_int.h"

static _Thread_local bool in_access_path;

bool trap_in_access_path(void)
{
    return in_access_path;
}

bool cxlssd_trap_tlb_fill(struct cxlssd_trap *t, uint64_t offset,
                          bool write)
{
    if (offset >= t->len ||
        atomic_load_explicit(&t->stop, memory_order_relaxed)) {
        return true;    /* going away: the access faults, or never came */
    }
    uint64_t page = offset / t->page_size;
    bool dirty;
    in_access_path = true;
    for (;;) {
        if (cxlssd_page_state(t->model, page) != CXLSSD_CACHED) {
            atomic_fetch_add_explicit(&t->st_tlb_fill, 1,
                                      memory_order_relaxed);
            trap_serve_miss(t, page, write, trap_thread_id(),
                            cxlssd_now_ns(), false);
        }
        dirty = cxlssd_page_dirty(t->model, page);
        if (!write || dirty) {
            break;
        }
        if (cxlssd_mark_dirty_resident(t->model, page)) {
            if (t->wp) {
                atomic_fetch_add_explicit(&t->st_wp_faults, 1,
                                          memory_order_relaxed);
                trap_uffd_unprotect(t, page);
            }
            dirty = true;
            break;
        }
        /* chosen as a victim since it was found resident: a victim
         * evicted clean may stay mapped, and a store granted now could
         * land after its writeback; miss again once it is evicted */
        if (atomic_load_explicit(&t->stop, memory_order_relaxed)) {
            break;      /* going away: the store faults, or never came */
        }
    }
    in_access_path = false;
    return dirty || !t->wp;
}
