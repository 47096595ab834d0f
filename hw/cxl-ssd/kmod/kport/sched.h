/* Model portability (kernel): sched_yield lets a preempted fill owner run. */
#ifndef CXLSSD_KPORT_SCHED_H
#define CXLSSD_KPORT_SCHED_H
#include "kport.h"
static inline int sched_yield(void)
{
    yield();
    return 0;
}
#endif
