/* timing.h: timer reads used around each sample (inlined into the hot
 * loop).  x86-64 only for the TSC; elsewhere everything uses the clock. */
#ifndef MIO_TIMING_H
#define MIO_TIMING_H

#include <stdint.h>

/* cxlssd_now_ns(): CLOCK_MONOTONIC ns, the device's clock (its records
 * join with MIO's samples). */
#include "../../hw/cxl-ssd/model/clock.h"

#if defined(__x86_64__) || defined(__i386__)
#define MIO_HAVE_TSC 1
static inline void mio_lfence(void)
{
    __asm__ __volatile__("lfence" ::: "memory");
}

/* rdtsc ordered on both sides: earlier instructions complete first, later
 * ones start after. */
static inline uint64_t mio_rdtsc_fenced(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence"
                         : "=a"(lo), "=d"(hi) :: "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* rdtscp waits for earlier instructions (and their loads); the lfence
 * keeps later ones from starting early.  aux = IA32_TSC_AUX (CPU id). */
static inline uint64_t mio_rdtscp_fenced(uint32_t *aux)
{
    uint32_t lo, hi, c;
    __asm__ __volatile__("rdtscp\n\tlfence"
                         : "=a"(lo), "=d"(hi), "=c"(c) :: "memory");
    *aux = c;
    return ((uint64_t)hi << 32) | lo;
}
#else
#define MIO_HAVE_TSC 0
static inline void mio_lfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline uint64_t mio_rdtsc_fenced(void) { return cxlssd_now_ns(); }
static inline uint64_t mio_rdtscp_fenced(uint32_t *aux)
{
    *aux = 0;
    return cxlssd_now_ns();
}
#endif

#endif
