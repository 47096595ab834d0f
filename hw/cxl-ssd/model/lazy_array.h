/*
 * Zeroed arrays sized by the device's capacity, whose pages cost memory
 * only once written (the page-state array, the media bitmaps).
 * Userspace: a private anonymous mapping of their own (lazy_array.c),
 * zeroed again by dropping its pages.  The kernel module: kvzalloc'd
 * (kmod/kmod_lazy_array.c).
 */
#ifndef CXLSSD_LAZY_ARRAY_H
#define CXLSSD_LAZY_ARRAY_H

#include <stddef.h>

/* @bytes of zeros, NULL if out of memory. */
void *lazy_array_new(size_t bytes);
void lazy_array_free(void *p, size_t bytes);
/* All of [p, p + bytes) back to zero; the caller holds off every writer. */
void lazy_array_zero(void *p, size_t bytes);

#endif
