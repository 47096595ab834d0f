#include "wait.h"

#include <errno.h>
#include <time.h>

#include "model.h"
#include "relax.h"

#define SLEEP_MIN_NS 200000ull
#define SPIN_TAIL_NS 50000ull

/* Sleep until 50 us before @deadline_ns (which is >= 200 us after @now). */
static void sleep_before(uint64_t deadline_ns)
{
    uint64_t wake = deadline_ns - SPIN_TAIL_NS;
    struct timespec ts = {
        .tv_sec = (time_t)(wake / 1000000000ull),
        .tv_nsec = (long)(wake % 1000000000ull),
    };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
           EINTR) {
    }
}

void cxlssd_sleep_coarse(uint64_t deadline_ns)
{
    uint64_t now = cxlssd_now_ns();

    if (deadline_ns > now && deadline_ns - now >= SLEEP_MIN_NS) {
        sleep_before(deadline_ns);
    }
}

uint64_t cxlssd_wait_until(uint64_t deadline_ns)
{
    uint64_t now = cxlssd_now_ns();

    if (now >= deadline_ns) {
        return now;
    }
    if (deadline_ns - now >= SLEEP_MIN_NS) {
        sleep_before(deadline_ns);
    }
    while ((now = cxlssd_now_ns()) < deadline_ns) {
        cxlssd_cpu_relax();
    }
    return now;
}
