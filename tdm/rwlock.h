/*
 * The inode's reader-writer lock: one atomic word (readers, a writer, a
 * writer waiting, sleepers) and futex waits.  Writers go first: a waiting
 * writer holds new readers back.  Its own (not pthread_rwlock_t) for fork:
 * glibc tells a write unlock by the owner's thread id, which a forked
 * child's thread does not have, while this word is simply reset in the
 * child (tdm_rwlock_reset).  Acquire and release orderings make it a lock
 * for ThreadSanitizer too.
 */
#ifndef TDM_RWLOCK_H
#define TDM_RWLOCK_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TDM_RW_WRITER 0x80000000u
#define TDM_RW_WAITING 0x40000000u  /* a writer waits for the readers */
#define TDM_RW_SLEEPERS 0x20000000u /* someone sleeps on the word */
#define TDM_RW_READERS 0x1fffffffu

struct tdm_rwlock {
    _Atomic uint32_t state;
};

static inline void tdm_rw_sleep(struct tdm_rwlock *l, uint32_t seen)
{
    syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static inline void tdm_rw_wake(struct tdm_rwlock *l)
{
    syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* sets TDM_RW_SLEEPERS on @s and sleeps while the word stays so */
static inline void tdm_rw_wait(struct tdm_rwlock *l, uint32_t s, uint32_t more)
{
    uint32_t want = s | TDM_RW_SLEEPERS | more;
    if (want == s || atomic_compare_exchange_weak_explicit(
                         &l->state, &s, want, memory_order_relaxed,
                         memory_order_relaxed)) {
        tdm_rw_sleep(l, want);
    }
}

static inline void tdm_rwlock_rdlock(struct tdm_rwlock *l)
{
    for (;;) {
        uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
        if (!(s & (TDM_RW_WRITER | TDM_RW_WAITING))) {
            if (atomic_compare_exchange_weak_explicit(
                    &l->state, &s, s + 1, memory_order_acquire,
                    memory_order_relaxed)) {
                return;
            }
            continue;
        }
        tdm_rw_wait(l, s, 0);
    }
}

static inline void tdm_rwlock_wrlock(struct tdm_rwlock *l)
{
    for (;;) {
        uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
        if (!(s & (TDM_RW_WRITER | TDM_RW_READERS))) {
            /* the sleepers stay marked: the unlock wakes them */
            if (atomic_compare_exchange_weak_explicit(
                    &l->state, &s, TDM_RW_WRITER | (s & TDM_RW_SLEEPERS),
                    memory_order_acquire, memory_order_relaxed)) {
                return;
            }
            continue;
        }
        tdm_rw_wait(l, s, TDM_RW_WAITING);
    }
}

static inline void tdm_rwlock_unlock(struct tdm_rwlock *l)
{
    uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
    if (s & TDM_RW_WRITER) {
        s = atomic_exchange_explicit(&l->state, 0, memory_order_release);
    } else {
        s = atomic_fetch_sub_explicit(&l->state, 1, memory_order_release) - 1;
        if (s & TDM_RW_READERS) {
            return;
        }
        s = atomic_fetch_and_explicit(&l->state, ~TDM_RW_SLEEPERS,
                                      memory_order_relaxed);
    }
    if (s & TDM_RW_SLEEPERS) {
        tdm_rw_wake(l);
    }
}

/* a forked child's copy, which no thread of the child holds */
static inline void tdm_rwlock_reset(struct tdm_rwlock *l)
{
    atomic_store_explicit(&l->state, 0, memory_order_relaxed);
}

#endif
