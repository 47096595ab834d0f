/* Model portability (kernel): <linux/string.h>, plus strdup. */
#ifndef CXLSSD_KPORT_STRING_H
#define CXLSSD_KPORT_STRING_H
#include "kport.h"
#define strdup(s) kstrdup((s), GFP_KERNEL)
#endif
