/*
 * Internal: a small futex mutex (U. Drepper, "Futexes Are Tricky", mutex
 * #3) for the cache engine's policy lock.  Uncontended lock = one CAS,
 * unlock = one exchange; contended waiters spin briefly, then sleep in the
 * kernel, so a preempted holder never makes others burn CPU.  About a third
 * of the instructions of pthread_mutex_lock/unlock on the miss path.
 * Header-only (static functions; included by model.c alone), so the QEMU
 * meson source list needs no new file.
 */
#ifndef CXLSSD_MODEL_LOCK_H
#define CXLSSD_MODEL_LOCK_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct cxlssd_lock {
    _Atomic uint32_t v;         /* 0 free, 1 held, 2 held with waiters */
};

static inline void cxlssd_lock_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static __attribute__((noinline, unused))
void cxlssd_lock_slow(struct cxlssd_lock *l)
{
    /* spin a little: the holder only computes (~100 ns) */
    for (int i = 0; i < 200; i++) {
        cxlssd_lock_relax();
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
}

static inline void cxlssd_lock(struct cxlssd_lock *l)
{
    uint32_t c = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->v, &c, 1,
                                                 memory_order_acquire,
                                                 memory_order_relaxed)) {
        cxlssd_lock_slow(l);
    }
}

static inline void cxlssd_unlock(struct cxlssd_lock *l)
{
    if (atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2) {
        cxlssd_unlock_wake(l);
    }
}

#endif
