/* Model portability (kernel): stddef.h is in the kernel headers kport.h includes. */
#ifndef CXLSSD_KPORT_STDDEF_H
#define CXLSSD_KPORT_STDDEF_H
#include "kport.h"
#endif
