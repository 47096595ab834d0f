/*
 * Binary min-heap of (time, id) pairs: the event queue of the closed-loop
 * drivers (the earliest completion issues the next request).
 */
#ifndef CXLSSD_VALIDATE_HEAP_H
#define CXLSSD_VALIDATE_HEAP_H

#include <stdbool.h>
#include <stdint.h>

struct heap_item {
    uint64_t t;
    uint32_t id;
};

struct heap {
    struct heap_item *a;
    uint32_t n, cap;
};

bool heap_init(struct heap *h, uint32_t cap);
void heap_free(struct heap *h);
void heap_push(struct heap *h, uint64_t t, uint32_t id);   /* n < cap */
struct heap_item heap_pop(struct heap *h);                  /* n > 0 */
static inline uint64_t heap_min(const struct heap *h)
{
    return h->a[0].t;
}

#endif
