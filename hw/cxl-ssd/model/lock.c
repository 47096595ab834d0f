/*
 * The per-thread tag of lock.h's holder tracking (debug builds).
 */
#include "lock.h"

#ifdef CXLSSD_DEBUG_LOCKS
_Thread_local char cxlssd_lock_thread_tag;
#endif
