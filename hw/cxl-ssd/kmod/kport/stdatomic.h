/*
 * Model portability (kernel): the C11 atomics the model uses, on the
 * compiler's __atomic builtins (what <stdatomic.h> itself expands to; the
 * kernel build has no compiler headers).  On x86-64 these are the same
 * instructions as the kernel's atomic_t operations.  Only the names the
 * model uses are defined; atomic_fetch_add shadows the kernel function of
 * that name from here on, which kport.h has declared already.
 */
#ifndef CXLSSD_KPORT_STDATOMIC_H
#define CXLSSD_KPORT_STDATOMIC_H
#include "kport.h"

typedef enum {
    memory_order_relaxed = __ATOMIC_RELAXED,
    memory_order_consume = __ATOMIC_CONSUME,
    memory_order_acquire = __ATOMIC_ACQUIRE,
    memory_order_release = __ATOMIC_RELEASE,
    memory_order_acq_rel = __ATOMIC_ACQ_REL,
    memory_order_seq_cst = __ATOMIC_SEQ_CST,
} memory_order;

typedef _Atomic bool atomic_bool;

#define atomic_init(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define atomic_load_explicit(p, o) __atomic_load_n((p), (o))
#define atomic_store_explicit(p, v, o) __atomic_store_n((p), (v), (o))
#define atomic_exchange_explicit(p, v, o) __atomic_exchange_n((p), (v), (o))
#define atomic_compare_exchange_strong_explicit(p, e, v, s, f) \
    __atomic_compare_exchange_n((p), (e), (v), false, (s), (f))
#define atomic_compare_exchange_weak_explicit(p, e, v, s, f) \
    __atomic_compare_exchange_n((p), (e), (v), true, (s), (f))
#define atomic_fetch_add_explicit(p, v, o) __atomic_fetch_add((p), (v), (o))
#define atomic_fetch_sub_explicit(p, v, o) __atomic_fetch_sub((p), (v), (o))
#define atomic_fetch_or_explicit(p, v, o) __atomic_fetch_or((p), (v), (o))
#define atomic_fetch_and_explicit(p, v, o) __atomic_fetch_and((p), (v), (o))
#define atomic_load(p) atomic_load_explicit((p), __ATOMIC_SEQ_CST)
#define atomic_store(p, v) atomic_store_explicit((p), (v), __ATOMIC_SEQ_CST)
#define atomic_fetch_add(p, v) \
    atomic_fetch_add_explicit((p), (v), __ATOMIC_SEQ_CST)
#define atomic_signal_fence(o) __atomic_signal_fence(o)
#endif
