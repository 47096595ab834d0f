/* Binary min-heap (heap.h). */
#include "heap.h"

#include <stdlib.h>

bool heap_init(struct heap *h, uint32_t cap)
{
    h->a = malloc((size_t)cap * sizeof(*h->a));
    h->n = 0;
    h->cap = cap;
    return h->a != NULL;
}

void heap_free(struct heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

void heap_push(struct heap *h, uint64_t t, uint32_t id)
{
    uint32_t i = h->n++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h->a[p].t <= t) {
            break;
        }
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = (struct heap_item) { t, id };
}

struct heap_item heap_pop(struct heap *h)
{
    struct heap_item top = h->a[0];
    struct heap_item last = h->a[--h->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n) {
            break;
        }
        if (c + 1 < h->n && h->a[c + 1].t < h->a[c].t) {
            c++;
        }
        if (last.t <= h->a[c].t) {
            break;
        }
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0) {
        h->a[i] = last;
    }
    return top;
}
