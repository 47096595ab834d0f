/*
 * Internal: a small futex mutex (U. Drepper, "Futexes Are Tricky", mutex
 * #3) for the cache engine's policy lock.  Uncontended lock = one CAS,
 * unlock = one exchange; contended waiters spin briefly, then sleep in the
 * kernel, so a preempted holder never makes others burn CPU.  About a third
 * of the instructions of pthread_mutex_lock/unlock on the miss path.
 * Static inline functions; lock.c holds only the debug builds' per-thread
 * tag.
 *
 * Debug builds (CXLSSD_DEBUG_LOCKS defined: the sanitizer test builds)
 * also record the holder, so that code documented as "mutex held" can say
 * so with CXLSSD_LOCK_ASSERT_HELD() (cf. Linux's lockdep_assert_held(),
 * QEMU's assert(bql_locked())): one relaxed store per lock and unlock.
 * QEMU, the native tool and the benchmarks build without it (about 30
 * instructions per miss).
 */
#ifndef CXLSSD_MODEL_LOCK_H
#define CXLSSD_MODEL_LOCK_H

#ifdef __KERNEL__
/* The kernel module's: the same API on a kernel mutex (hw/cxl-ssd/kmod). */
#include "kport_lock.h"
#else

#include <assert.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "relax.h"

struct cxlssd_lock {
    _Atomic uint32_t v;         /* 0 free, 1 held, 2 held with waiters */
#ifdef CXLSSD_DEBUG_LOCKS
    _Atomic uintptr_t owner;    /* the holder's cxlssd_lock_self(), 0 if
                                 * free */
#endif
};

#ifdef CXLSSD_DEBUG_LOCKS
/* One byte per thread (lock.c); its address names the thread in two
 * instructions, where pthread_self() is a call. */
extern _Thread_local char cxlssd_lock_thread_tag;

static inline uintptr_t cxlssd_lock_self(void)
{
    return (uintptr_t)&cxlssd_lock_thread_tag;
}

static inline void cxlssd_lock_set_owner(struct cxlssd_lock *l, uintptr_t o)
{
    atomic_store_explicit(&l->owner, o, memory_order_relaxed);
}

/* The calling thread holds @l (debug builds; nothing otherwise). */
#define CXLSSD_LOCK_ASSERT_HELD(l) \
    assert(atomic_load_explicit(&(l)->owner, memory_order_relaxed) == \
           cxlssd_lock_self())
#else
#define cxlssd_lock_set_owner(l, o) ((void)0)
#define CXLSSD_LOCK_ASSERT_HELD(l) ((void)0)
#endif

static __attribute__((noinline, unused))
void cxlssd_lock_slow(struct cxlssd_lock *l)
{
    /* spin a little: the holder only computes (~100 ns) */
    for (int i = 0; i < 200; i++) {
        cxlssd_cpu_relax();
        uint32_t c = 0;
        if (atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->v, &c, 1,
                                                  memory_order_acquire,
                                                  memory_order_relaxed)) {
            return;
        }
    }
    /* mark contended and sleep until woken with the lock free */
    while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0) {
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    }
}

static __attribute__((noinline, unused))
void cxlssd_unlock_wake(struct cxlssd_lock *l)
{
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void cxlssd_lock_init(struct cxlssd_lock *l)
{
    atomic_init(&l->v, 0);
#ifdef CXLSSD_DEBUG_LOCKS
    atomic_init(&l->owner, 0);
#endif
}

static inline void cxlssd_lock(struct cxlssd_lock *l)
{
    uint32_t c = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->v, &c, 1,
                                                 memory_order_acquire,
                                                 memory_order_relaxed)) {
        cxlssd_lock_slow(l);
    }
    cxlssd_lock_set_owner(l, cxlssd_lock_self());
}

static inline void cxlssd_unlock(struct cxlssd_lock *l)
{
    CXLSSD_LOCK_ASSERT_HELD(l);
    cxlssd_lock_set_owner(l, 0);
    if (atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2) {
        cxlssd_unlock_wake(l);
    }
}

#endif /* !__KERNEL__ */
#endif
