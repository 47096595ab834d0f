/*
 * Model portability (kernel): model/lazy_array.h in place of
 * model/lazy_array.c.  vmalloc memory is allocated whole, so a lazy array
 * here costs its full size; zeroing is a memset.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "lazy_array.h"

void *lazy_array_new(size_t bytes)
{
    return kvzalloc(bytes, GFP_KERNEL);
}

void lazy_array_free(void *p, size_t bytes)
{
    kvfree(p);
}

void lazy_array_zero(void *p, size_t bytes)
{
    memset(p, 0, bytes);
}
