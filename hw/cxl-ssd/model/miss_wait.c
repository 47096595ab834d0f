/*
 * The miss service's waits on another thread's work: a page LOADING for
 * someone else's fill (a duplicate fault, or a prefetched page), and a
 * page being evicted or a set with no frame to give.  Both complete due
 * prefetches while they spin, and both go through wait_begin/wait_end, so
 * a substrate that holds a lock the other thread needs (mmio's BQL) drops
 * it meanwhile.
 */
#include "miss_service_int.h"

#include <sched.h>

#include "relax.h"
#include "wait.h"

#define SPIN_YIELD_AFTER_NS 50000ull   /* past the hint: start yielding */
#define EVICTING_BACKOFF_NS 1000ull

/* Until @page leaves LOADING; @hint is its deadline. */
void miss_wait_while_loading(struct cxlssd_miss_service *svc, uint64_t page,
                             uint64_t hint, bool quiet)
{
    bool dropped = wait_begin(svc);
    for (;;) {
        uint64_t now = now_ns();
        miss_complete_due(svc, now, quiet);
        if (cxlssd_page_state(svc->model, page) != CXLSSD_LOADING ||
            stopping(svc)) {
            break;
        }
        uint64_t next = cxlssd_prefetch_queue_next(svc->prefetches);
        if (hint < next) {
            next = hint;
        }
        if (now < next) {
            cxlssd_sleep_coarse(next);      /* only if far away */
            cxlssd_cpu_relax();
        } else if (now - next > SPIN_YIELD_AFTER_NS) {
            sched_yield();  /* the owner may be preempted (2-CPU hosts) */
        } else {
            cxlssd_cpu_relax();
        }
    }
    wait_end(svc, dropped);
}

/*
 * EVICTING outcome: the page itself is being evicted (wait until its
 * evict_done), or no frame could be had because every frame of its set is
 * loading or being evicted (the page is NOT_CACHED: back off ~1 us before
 * deciding again).  @since is when the retries started: after 50 us, yield
 * the CPU to the threads that will finish those fills and evictions.
 */
void miss_wait_while_evicting(struct cxlssd_miss_service *svc, uint64_t page,
                              uint64_t since, bool quiet)
{
    bool dropped = wait_begin(svc);
    uint64_t start = now_ns();
    for (;;) {
        uint64_t now = now_ns();
        miss_complete_due(svc, now, quiet);
        if (stopping(svc) ||
            (cxlssd_page_state(svc->model, page) != CXLSSD_EVICTING &&
             now - start > EVICTING_BACKOFF_NS)) {
            break;
        }
        if (now - since > SPIN_YIELD_AFTER_NS) {
            sched_yield();
        } else {
            cxlssd_cpu_relax();
        }
    }
    wait_end(svc, dropped);
}
