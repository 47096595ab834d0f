/*
 * Two-level tables made on demand (the fd table, the policy's regions): a
 * top array of chunk pointers, each chunk allocated, zeroed, on its first
 * use.  Header-only.
 */
#ifndef TDM_CHUNK_H
#define TDM_CHUNK_H

#include <stdatomic.h>
#include <stdlib.h>

/* The chunk in @slot, made of @n zeroed elements of @size where there is
 * none yet (of two threads racing to make it, one chunk wins and the
 * other is freed); NULL if it cannot be allocated. */
static inline void *tdm_chunk_get(_Atomic(void *) *slot, size_t n,
                                  size_t size)
{
    void *c = atomic_load_explicit(slot, memory_order_acquire);
    if (!c) {
        void *fresh = calloc(n, size);
        if (!fresh) {
            return NULL;
        }
        if (atomic_compare_exchange_strong(slot, &c, fresh)) {
            c = fresh;
        } else {
            free(fresh);
        }
    }
    return c;
}

#endif
