/*
 * Model portability (kernel): model/wait.h's deadline waits, in place of
 * model/wait.c.  wait_mode=busy (default) spins with the pause hint, as
 * the device's handlers do, sleeping first through waits of 200 us or more
 * (GC stalls); wait_mode=sleep sleeps on an hrtimer until the deadline
 * (then spins out the timer's slack), freeing the CPU for other faulters
 * at the cost of the wake-up latency.  A wait never returns before its
 * deadline.
 */
#include <linux/hrtimer.h>
#include <linux/sched.h>

#include "cxlssd_kmod.h"
#include "relax.h"
#include "wait.h"

#define SLEEP_MIN_NS 200000ull
#define SPIN_TAIL_NS 50000ull

bool cxlssd_kmod_wait_sleep;

static void sleep_until(uint64_t wake_ns)
{
    ktime_t t = ns_to_ktime(wake_ns);

    set_current_state(TASK_UNINTERRUPTIBLE);
    schedule_hrtimeout_range_clock(&t, 0, HRTIMER_MODE_ABS, CLOCK_MONOTONIC);
}

void cxlssd_sleep_coarse(uint64_t deadline_ns)
{
    uint64_t now = cxlssd_now_ns();

    if (deadline_ns > now && deadline_ns - now >= SLEEP_MIN_NS) {
        sleep_until(deadline_ns - SPIN_TAIL_NS);
    }
}

uint64_t cxlssd_wait_until(uint64_t deadline_ns)
{
    uint64_t now = cxlssd_now_ns();

    if (now >= deadline_ns) {
        return now;
    }
    if (READ_ONCE(cxlssd_kmod_wait_sleep)) {
        sleep_until(deadline_ns);
    } else {
        cxlssd_sleep_coarse(deadline_ns);
    }
    while ((now = cxlssd_now_ns()) < deadline_ns) {
        cxlssd_cpu_relax();
    }
    return now;
}
