/* Model portability (kernel): stdint.h is in the kernel headers kport.h includes. */
#ifndef CXLSSD_KPORT_STDINT_H
#define CXLSSD_KPORT_STDINT_H
#include "kport.h"
#endif
