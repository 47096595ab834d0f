/*
 * Waiting until a modeled NAND deadline (CLOCK_MONOTONIC ns).
 *
 * Short waits (< TRAP_SLEEP_MIN_NS) busy-wait on clock_gettime with a pause
 * hint: a sleep's wake-up latency on this class of machine is tens of us,
 * larger than a whole NAND read (6.2 us).  Long waits (GC, tPROG queues,
 * ms-scale) sleep with clock_nanosleep(TIMER_ABSTIME) until
 * TRAP_SPIN_TAIL_NS before the deadline, then spin the rest, so the
 * deadline is honoured to within the clock read cost without burning a CPU
 * for milliseconds.  A wait never returns before the deadline.
 */
#include <errno.h>
#include <time.h>

#include "trap_int.h"

#define TRAP_SLEEP_MIN_NS 200000ull    /* sleep only if >= 200 us away */
#define TRAP_SPIN_TAIL_NS 50000ull     /* spin the last 50 us */

void trap_sleep_coarse(uint64_t deadline_ns)
{
    uint64_t now = trap_now();
    if (deadline_ns <= now || deadline_ns - now < TRAP_SLEEP_MIN_NS) {
        return;
    }
    uint64_t wake = deadline_ns - TRAP_SPIN_TAIL_NS;
    struct timespec ts = {
        .tv_sec = (time_t)(wake / 1000000000ull),
        .tv_nsec = (long)(wake % 1000000000ull),
    };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
           EINTR) {
    }
}

uint64_t trap_wait_until(uint64_t deadline_ns)
{
    uint64_t now = trap_now();
    if (now >= deadline_ns) {
        return now;
    }
    trap_sleep_coarse(deadline_ns);
    while ((now = trap_now()) < deadline_ns) {
        cxlssd_cpu_relax();
    }
    return now;
}
