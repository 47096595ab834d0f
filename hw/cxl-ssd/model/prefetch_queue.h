/*
 * Prefetched pages waiting for their NAND deadlines: a min-heap on the
 * deadline behind one lock, shared by every thread that serves misses of
 * one device (not per thread: a thread blocked elsewhere, e.g. in the BQL,
 * must not hold up a page another thread waits for).  The miss service
 * (miss_prefetch.c) fills it and completes what is due.
 *
 * It never holds more entries than the cache has frames (a LOADING page
 * holds a frame), so it is sized once; pages beyond its capacity (never
 * expected) are handed back to be completed at once.
 */
#ifndef CXLSSD_MODEL_PREFETCH_QUEUE_H
#define CXLSSD_MODEL_PREFETCH_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

struct cxlssd_prefetch_queue;

/* NULL if out of memory. */
struct cxlssd_prefetch_queue *cxlssd_prefetch_queue_new(uint32_t capacity);
void cxlssd_prefetch_queue_free(struct cxlssd_prefetch_queue *q);

/* Queue @n prefetches.  Pages that do not fit are written to @overflow
 * (room for CXLSSD_MAX_PREFETCH); returns how many. */
uint32_t cxlssd_prefetch_queue_push(struct cxlssd_prefetch_queue *q,
                                    const struct cxlssd_prefetch *p,
                                    uint32_t n, uint64_t *overflow);

/* Take up to @max pages whose deadline is <= @now (every page if @all),
 * earliest first, into @pages; returns how many. */
uint32_t cxlssd_prefetch_queue_pop_due(struct cxlssd_prefetch_queue *q,
                                       uint64_t now, bool all,
                                       uint64_t *pages, uint32_t max);

/* Earliest queued deadline, UINT64_MAX if none (one atomic load). */
uint64_t cxlssd_prefetch_queue_next(const struct cxlssd_prefetch_queue *q);

#endif
