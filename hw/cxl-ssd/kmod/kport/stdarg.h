/* Model portability (kernel): stdarg.h is in the kernel headers kport.h includes. */
#ifndef CXLSSD_KPORT_STDARG_H
#define CXLSSD_KPORT_STDARG_H
#include "kport.h"
#endif
