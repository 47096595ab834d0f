/* Model portability (kernel): stdbool.h is in the kernel headers kport.h includes. */
#ifndef CXLSSD_KPORT_STDBOOL_H
#define CXLSSD_KPORT_STDBOOL_H
#include "kport.h"
#endif
