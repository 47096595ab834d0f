/*
 * The trap's side of a miss.  A fault (a uffd event on a handler thread, a
 * SIGBUS on the faulting thread, QEMU's own access in sigbus mode) becomes
 * a request for the miss service (model/miss_service.c, where the miss
 * path is): the faulting thread, its vCPU, and when the kernel took the
 * fault (the host fault clock).  The service works on the registered
 * mapping through the substrate below:
 *   map    UFFDIO_CONTINUE, MODE_WP for a clean page when tracking dirty
 *          (EEXIST: UFFDIO_WAKE, as CONTINUE then wakes nobody)
 *   unmap  MADV_DONTNEED, contiguous victims coalesced (evict.c)
 *   wake   UFFDIO_WAKE (nothing under SIGBUS delivery: the faulter retries)
 *   after  kick the background evictor
 *   fill, evict  with a media store only (media.c): the page's data into
 *          the memfd before the NAND wait; victims written back, and
 *          punched out of the memfd after the miss (after_miss)
 * The serialisation hooks are handler.c's (trap.c adds them).
 */
#include <string.h>

#include "trap_int.h"

static int uffd_map(void *trap, uint64_t page, bool write)
{
    struct cxlssd_trap *t = trap;
    bool wp = !write && !cxlssd_page_dirty(t->model, page);
    int r = trap_uffd_continue(t, page, 1, wp);
    if (r < 0) {
        trap_error(t, "UFFDIO_CONTINUE(page %llu): %s",
                   (unsigned long long)page, strerror(-r));
    }
    return r;
}

static void uffd_unmap(void *trap, const struct cxlssd_victim *v, uint32_t n)
{
    trap_unmap_victims(trap, v, n);
}

static void uffd_wake(void *trap, uint64_t page)
{
    trap_uffd_wake(trap, page, 1);
}

static void media_fill(void *trap, uint64_t page)
{
    trap_media_fill(trap, page);
}

static void media_evict(void *trap, const struct cxlssd_victim *v,
                        uint32_t n)
{
    trap_media_evict_deferred(trap, v, n);
}

static void media_after_miss(void *trap)
{
    trap_media_drops(trap);
    trap_evict_kick(trap);
}

static void kick_evictor(void *trap)
{
    trap_evict_kick(trap);
}

void trap_substrate(struct cxlssd_trap *t, struct cxlssd_substrate *sub)
{
    *sub = (struct cxlssd_substrate) {
        .opaque = t,
        .unmap = uffd_unmap,
        .map = uffd_map,
        .wake = uffd_wake,
        .after_miss = kick_evictor,
    };
    if (t->media) {
        sub->fill = media_fill;
        sub->evict = media_evict;
        sub->after_miss = media_after_miss;
    }
}

/*
 * Only vCPU threads get a fault clock buffer when the embedder tells vCPUs
 * apart (QEMU): its other threads that touch the range (I/O workers come
 * and go) are not the guest's timing path and would only use up buffers
 * and fds.
 */
void trap_serve_miss(struct cxlssd_trap *t, uint64_t page, bool write,
                     pid_t tid, uint64_t t_fault, bool fault)
{
    struct cxlssd_miss_request req = {
        .page = page,
        .write = write,
        .tid = (int32_t)tid,
        .vcpu = t->hooks.vcpu_index ? t->hooks.vcpu_index(t->hooks.opaque, tid)
                                    : -1,
        .t_fault_ns = t_fault,
        .in_signal_handler = trap_in_signal_handler(),
        .map_in_wait = trap_in_access_path(),
    };
    if (!fault) {
        req.t_host_fault_ns = t_fault;
    } else if (req.vcpu >= 0 || !t->hooks.vcpu_index) {
        req.t_host_fault_ns = trap_fault_clock_read(
            t->fault_clock, tid, (uint64_t)(uintptr_t)t->base +
            page * t->page_size, t_fault);
    }
    cxlssd_serve_miss(t->svc, &req);
}
