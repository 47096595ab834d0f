/*
 * The spin-wait pause hint, for every busy-wait in the model and the trap
 * engine (lock spinning, deadline waits, handler loops).  Header-only.
 */
#ifndef CXLSSD_MODEL_RELAX_H
#define CXLSSD_MODEL_RELAX_H

#include <stdatomic.h>

static inline void cxlssd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif
