#include "prefetch_queue.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "lock.h"

struct pf_entry {
    uint64_t deadline_ns;
    uint64_t page;
};

struct cxlssd_prefetch_queue {
    struct cxlssd_lock lock;
    struct pf_entry *heap;      /* min-heap on deadline_ns, under lock */
    uint32_t len, cap;
    _Atomic uint64_t next;      /* earliest deadline, UINT64_MAX if empty */
};

struct cxlssd_prefetch_queue *cxlssd_prefetch_queue_new(uint32_t capacity)
{
    struct cxlssd_prefetch_queue *q = calloc(1, sizeof(*q));
    if (!q) {
        return NULL;
    }
    q->heap = calloc(capacity ? capacity : 1, sizeof(*q->heap));
    if (!q->heap) {
        free(q);
        return NULL;
    }
    q->cap = capacity;
    cxlssd_lock_init(&q->lock);
    atomic_init(&q->next, UINT64_MAX);
    return q;
}

void cxlssd_prefetch_queue_free(struct cxlssd_prefetch_queue *q)
{
    if (q) {
        free(q->heap);
        free(q);
    }
}

/* Lock held. */
static void heap_push(struct cxlssd_prefetch_queue *q, struct pf_entry e)
{
    CXLSSD_LOCK_ASSERT_HELD(&q->lock);
    uint32_t i = q->len++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (q->heap[p].deadline_ns <= e.deadline_ns) {
            break;
        }
        q->heap[i] = q->heap[p];
        i = p;
    }
    q->heap[i] = e;
}

/* Lock held; the heap is not empty. */
static struct pf_entry heap_pop(struct cxlssd_prefetch_queue *q)
{
    CXLSSD_LOCK_ASSERT_HELD(&q->lock);
    struct pf_entry top = q->heap[0];
    struct pf_entry last = q->heap[--q->len];
    uint32_t i = 0, n = q->len;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) {
            break;
        }
        if (c + 1 < n && q->heap[c + 1].deadline_ns < q->heap[c].deadline_ns) {
            c++;
        }
        if (last.deadline_ns <= q->heap[c].deadline_ns) {
            break;
        }
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n > 0) {
        q->heap[i] = last;
    }
    return top;
}

/* Lock held. */
static void update_next(struct cxlssd_prefetch_queue *q)
{
    CXLSSD_LOCK_ASSERT_HELD(&q->lock);
    atomic_store_explicit(&q->next,
                          q->len ? q->heap[0].deadline_ns : UINT64_MAX,
                          memory_order_release);
}

uint32_t cxlssd_prefetch_queue_push(struct cxlssd_prefetch_queue *q,
                                    const struct cxlssd_prefetch *p,
                                    uint32_t n, uint64_t *overflow)
{
    uint32_t nover = 0;
    cxlssd_lock(&q->lock);
    for (uint32_t i = 0; i < n; i++) {
        if (q->len < q->cap) {
            heap_push(q, (struct pf_entry){ p[i].deadline_ns, p[i].page });
        } else if (nover < CXLSSD_MAX_PREFETCH) {
            overflow[nover++] = p[i].page;
        }
    }
    update_next(q);
    cxlssd_unlock(&q->lock);
    return nover;
}

uint32_t cxlssd_prefetch_queue_pop_due(struct cxlssd_prefetch_queue *q,
                                       uint64_t now, bool all,
                                       uint64_t *pages, uint32_t max)
{
    uint32_t n = 0;
    cxlssd_lock(&q->lock);
    while (q->len > 0 && n < max && (all || q->heap[0].deadline_ns <= now)) {
        pages[n++] = heap_pop(q).page;
    }
    update_next(q);
    cxlssd_unlock(&q->lock);
    return n;
}

uint64_t cxlssd_prefetch_queue_next(const struct cxlssd_prefetch_queue *q)
{
    return atomic_load_explicit(&q->next, memory_order_acquire);
}
