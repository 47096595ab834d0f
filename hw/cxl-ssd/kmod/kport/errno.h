/* Model portability (kernel): errno for the one libc call that sets it
 * (strtoull, see stdlib.h); parsing runs only at module load, from one
 * thread, so one variable is enough. */
#ifndef CXLSSD_KPORT_ERRNO_H
#define CXLSSD_KPORT_ERRNO_H
#include "kport.h"
extern int cxlssd_kport_errno;
#define errno cxlssd_kport_errno
#endif
