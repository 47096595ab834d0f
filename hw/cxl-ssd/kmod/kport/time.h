/* Model portability (kernel): CLOCK_MONOTONIC is ktime_get (the clock
 * user space's clock_gettime(CLOCK_MONOTONIC) reads, so module records
 * join with MIO's timestamps). */
#ifndef CXLSSD_KPORT_TIME_H
#define CXLSSD_KPORT_TIME_H
#include "kport.h"

struct timespec {
    time64_t tv_sec;
    long tv_nsec;
};

static inline int clock_gettime(int clk, struct timespec *ts)
{
    struct timespec64 t;

    WARN_ON_ONCE(clk != CLOCK_MONOTONIC);
    ktime_get_ts64(&t);
    ts->tv_sec = t.tv_sec;
    ts->tv_nsec = t.tv_nsec;
    return 0;
}
#endif
