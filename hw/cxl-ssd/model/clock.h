/*
 * The model's clock: CLOCK_MONOTONIC in ns, the clock QEMU's
 * QEMU_CLOCK_REALTIME, bpftrace's nsecs and the kernel's tracepoints use,
 * so records join with host traces.  Inline: the miss path reads it at
 * every stage.
 */
#ifndef CXLSSD_CLOCK_H
#define CXLSSD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t cxlssd_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
