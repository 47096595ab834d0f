/*
 * Model portability (kernel): model/lock.h's cxlssd_lock on a kernel
 * mutex (adaptive: spins while the holder runs, then sleeps, as the
 * futex lock does in user space), so lockdep checks the model's lock too.
 */
#ifndef CXLSSD_KPORT_LOCK_H
#define CXLSSD_KPORT_LOCK_H
#include "kport.h"

struct cxlssd_lock {
    struct mutex m;
};

#define CXLSSD_LOCK_ASSERT_HELD(l) lockdep_assert_held(&(l)->m)

static inline void cxlssd_lock_init(struct cxlssd_lock *l)
{
    mutex_init(&l->m);
}

static inline void cxlssd_lock(struct cxlssd_lock *l)
{
    mutex_lock(&l->m);
}

static inline void cxlssd_unlock(struct cxlssd_lock *l)
{
    mutex_unlock(&l->m);
}
#endif
