/* Model portability (kernel): ctype.h is in the kernel headers kport.h includes. */
#ifndef CXLSSD_KPORT_CTYPE_H
#define CXLSSD_KPORT_CTYPE_H
#include "kport.h"
#endif
