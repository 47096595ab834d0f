/*
 * The device's background worker: with eviction=background it keeps free
 * frames above the model's watermarks (kicked after a miss that left them
 * low; each batch of victims is unmapped with one TLB flush, cxlssd_mms.c), and in every mode it completes prefetches whose NAND time is over
 * when no faulter does (it sleeps until the earliest deadline), and
 * with young_scan_ms it scans the PTEs' accessed bits (cxlssd_young.c).
 */
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/wait.h>

#include "cxlssd_kmod.h"
#include "clock.h"

#define EVICT_BATCH 64

void cxlssd_evictor_kick(struct cxlssd_dev *d)
{
    WRITE_ONCE(d->evictor_kick, true);
    wake_up(&d->evictor_wq);
}

static void evict_batch(struct cxlssd_dev *d)
{
    struct cxlssd_victim v[EVICT_BATCH];
    uint32_t n;

    while ((n = cxlssd_evict_background(d->model, cxlssd_now_ns(), v,
                                        EVICT_BATCH)) > 0) {
        if (!cxlssd_mms_zap(d, v, n)) {
            for (uint32_t i = 0; i < n; i++) {
                cxlssd_vm_unmap_pages(d, v[i].page, 1);
            }
        }
        for (uint32_t i = 0; i < n; i++) {
            cxlssd_evict_done(d->model, v[i].page);
        }
        cond_resched();
    }
}

static int evictor_main(void *arg)
{
    struct cxlssd_dev *d = arg;

    while (!kthread_should_stop()) {
        uint64_t next;
        uint64_t now = cxlssd_now_ns();

        WRITE_ONCE(d->evictor_kick, false);
        cxlssd_complete_prefetches(d->svc, now);
        if (d->young_scan_ms &&
            now - d->young_last_ns >= d->young_scan_ms * 1000000ull) {
            cxlssd_young_scan(d);
            d->young_last_ns = now;
        }
        if (d->cfg.eviction == CXLSSD_EVICTION_BACKGROUND &&
            cxlssd_evict_needed(d->model)) {
            evict_batch(d);
        }
        next = cxlssd_next_prefetch(d->svc);
        if (next != UINT64_MAX) {
            ktime_t t = ns_to_ktime(next);

            set_current_state(TASK_INTERRUPTIBLE);
            if (!READ_ONCE(d->evictor_kick) && !kthread_should_stop()) {
                schedule_hrtimeout_range_clock(&t, 10000, HRTIMER_MODE_ABS,
                                               CLOCK_MONOTONIC);
            }
            __set_current_state(TASK_RUNNING);
        } else {
            /* the bounded timeout catches prefetches queued without a
             * kick (a faulter that completes its own is the common case) */
            wait_event_interruptible_timeout(
                d->evictor_wq,
                READ_ONCE(d->evictor_kick) || kthread_should_stop(),
                msecs_to_jiffies(1));
        }
    }
    return 0;
}

int cxlssd_evictor_start(struct cxlssd_dev *d)
{
    struct task_struct *t;

    init_waitqueue_head(&d->evictor_wq);
    t = kthread_run(evictor_main, d, "cxlssd-evict");
    if (IS_ERR(t)) {
        return PTR_ERR(t);
    }
    /* the device's worker runs beside the vCPUs; here it shares the CPUs
     * with the faulting threads, which busy-wait in the kernel: at their
     * priority a kick waits for a timeslice and misses find no free frame
     * (they then evict synchronously, one TLB flush each) */
    sched_set_fifo_low(t);
    d->evictor = t;
    return 0;
}

void cxlssd_evictor_stop(struct cxlssd_dev *d)
{
    if (d->evictor) {
        kthread_stop(d->evictor);
        d->evictor = NULL;
    }
}
