#include "wait.h"

#include <errno.h>
#include <stdatomic.h>
#include <time.h>

#include "model.h"

#define SLEEP_MIN_NS 200000ull
#define SPIN_TAIL_NS 50000ull

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

uint64_t cxlssd_wait_until(uint64_t deadline_ns)
{
    uint64_t now = cxlssd_now_ns();

    if (now >= deadline_ns) {
        return now;
    }
    if (deadline_ns - now >= SLEEP_MIN_NS) {
        uint64_t wake = deadline_ns - SPIN_TAIL_NS;
        struct timespec ts = {
            .tv_sec = (time_t)(wake / 1000000000ull),
            .tv_nsec = (long)(wake % 1000000000ull),
        };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
               EINTR) {
        }
    }
    while ((now = cxlssd_now_ns()) < deadline_ns) {
        cpu_relax();
    }
    return now;
}
