/* Model portability (kernel): strings.h is in the kernel headers kport.h includes. */
#ifndef CXLSSD_KPORT_STRINGS_H
#define CXLSSD_KPORT_STRINGS_H
#include "kport.h"
#endif
