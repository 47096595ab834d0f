/*
 * Model portability (kernel): allocation through kvmalloc (large tables
 * fall back to vmalloc; kvfree frees both, and kstrdup's too), strtoull on
 * the kernel's parser with C's overflow report, abort as BUG.
 */
#ifndef CXLSSD_KPORT_STDLIB_H
#define CXLSSD_KPORT_STDLIB_H
#include "kport.h"
#include "errno.h"

#define malloc(n) kvmalloc((n), GFP_KERNEL)
#define calloc(n, s) kvcalloc((n), (s), GFP_KERNEL)
#define free(p) kvfree(p)
#define abort() BUG()

void *cxlssd_kport_realloc(void *p, size_t n);
#define realloc(p, n) cxlssd_kport_realloc((p), (n))

unsigned long long cxlssd_kport_strtoull(const char *s, char **end, int base);
#define strtoull(s, e, b) cxlssd_kport_strtoull((s), (e), (b))
#define strtoul(s, e, b) ((unsigned long)cxlssd_kport_strtoull((s), (e), (b)))
#endif
