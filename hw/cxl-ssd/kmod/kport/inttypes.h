/* Model portability (kernel): printf formats of the fixed-width types
 * (u64 is unsigned long long on every kernel architecture). */
#ifndef CXLSSD_KPORT_INTTYPES_H
#define CXLSSD_KPORT_INTTYPES_H
#include "kport.h"
#define PRIu64 "llu"
#define PRId64 "lld"
#define PRIx64 "llx"
#define PRIu32 "u"
#define PRId32 "d"
#define PRIx32 "x"
#endif
