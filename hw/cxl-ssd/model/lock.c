/*
 * The per-thread tag of lock.h's holder tracking (debug builds).
 */
#include "lock.h"

#ifndef NDEBUG
_Thread_local char cxlssd_lock_thread_tag;
#endif
