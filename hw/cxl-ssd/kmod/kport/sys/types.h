/* Model portability (kernel): sys/types.h is in the kernel headers kport.h includes. */
#ifndef CXLSSD_KPORT_SYS_TYPES_H
#define CXLSSD_KPORT_SYS_TYPES_H
#include "../kport.h"
#endif
