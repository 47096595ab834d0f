/*
 * Completing prefetched pages at their deadlines.
 *
 * cxlssd_miss() may return prefetch pages that are now LOADING on the
 * caller's behalf, each with its own NAND completion deadline.  They go
 * into one min-heap per trap (not per handler: a handler blocked in the
 * serialize hook must not hold up a page another handler waits for).  Any
 * handler completes due entries: between events, while waiting on a
 * LOADING page, and a poll()-sleeping handler bounds its sleep by the
 * earliest deadline.  Completion = UFFDIO_CONTINUE (MODE_WP when tracking
 * dirty, as the page is clean) then cxlssd_fill_done().  A guest access to
 * a still-LOADING prefetched page faults and waits on the LOADING path.
 *
 * The heap never holds more entries than the cache has frames (a LOADING
 * page holds a frame), so it is sized once; an overflow (never expected)
 * completes the page immediately.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trap_int.h"

int trap_prefetch_init(struct cxlssd_trap *t, char *err, size_t errlen)
{
    uint64_t cap = cxlssd_model_frames(t->model);
    if (cap > t->npages) {
        cap = t->npages;
    }
    cap += CXLSSD_MAX_PREFETCH;
    if (cap > UINT32_MAX) {
        cap = UINT32_MAX;
    }
    t->pf_heap = calloc(cap, sizeof(*t->pf_heap));
    if (!t->pf_heap) {
        snprintf(err, errlen, "cxl-ssd trap: out of memory (prefetch queue)");
        return -1;
    }
    t->pf_cap = (uint32_t)cap;
    t->pf_len = 0;
    atomic_store(&t->pf_next, UINT64_MAX);
    return 0;
}

void trap_prefetch_destroy(struct cxlssd_trap *t)
{
    free(t->pf_heap);
    t->pf_heap = NULL;
    t->pf_cap = t->pf_len = 0;
}

static void heap_push(struct cxlssd_trap *t, struct trap_pf_entry e)
{
    uint32_t i = t->pf_len++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (t->pf_heap[p].deadline_ns <= e.deadline_ns) {
            break;
        }
        t->pf_heap[i] = t->pf_heap[p];
        i = p;
    }
    t->pf_heap[i] = e;
}

static struct trap_pf_entry heap_pop(struct cxlssd_trap *t)
{
    struct trap_pf_entry top = t->pf_heap[0];
    struct trap_pf_entry last = t->pf_heap[--t->pf_len];
    uint32_t i = 0, n = t->pf_len;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) {
            break;
        }
        if (c + 1 < n && t->pf_heap[c + 1].deadline_ns <
                         t->pf_heap[c].deadline_ns) {
            c++;
        }
        if (last.deadline_ns <= t->pf_heap[c].deadline_ns) {
            break;
        }
        t->pf_heap[i] = t->pf_heap[c];
        i = c;
    }
    if (n > 0) {
        t->pf_heap[i] = last;
    }
    return top;
}

static void update_next(struct cxlssd_trap *t)
{
    atomic_store_explicit(&t->pf_next,
                          t->pf_len ? t->pf_heap[0].deadline_ns : UINT64_MAX,
                          memory_order_release);
}

static void complete(struct cxlssd_trap *t, uint64_t page)
{
    bool wp = t->wp && !cxlssd_page_dirty(t->model, page);
    int r = trap_uffd_continue(t, page, 1, wp);
    if (r < 0) {
        fprintf(stderr, "cxl-ssd trap: UFFDIO_CONTINUE(prefetch page %llu): "
                "%s\n", (unsigned long long)page, strerror(-r));
    }
    cxlssd_fill_done(t->model, page);
}

void trap_prefetch_push(struct cxlssd_trap *t, const struct cxlssd_prefetch *p,
                        uint32_t n)
{
    uint64_t overflow[CXLSSD_MAX_PREFETCH];
    uint32_t nover = 0;
    pthread_mutex_lock(&t->pf_lock);
    for (uint32_t i = 0; i < n; i++) {
        if (t->pf_len < t->pf_cap) {
            heap_push(t, (struct trap_pf_entry){ p[i].deadline_ns,
                                                 p[i].page });
        } else if (nover < CXLSSD_MAX_PREFETCH) {
            overflow[nover++] = p[i].page;
        }
    }
    update_next(t);
    pthread_mutex_unlock(&t->pf_lock);
    for (uint32_t i = 0; i < nover; i++) {
        complete(t, overflow[i]);
    }
}

uint64_t trap_prefetch_next(struct cxlssd_trap *t)
{
    return atomic_load_explicit(&t->pf_next, memory_order_acquire);
}

#define PF_SERVICE_BATCH 32

static uint32_t service(struct cxlssd_trap *t, uint64_t now, bool all)
{
    uint32_t done = 0;
    for (;;) {
        uint64_t pages[PF_SERVICE_BATCH];
        uint32_t n = 0;
        pthread_mutex_lock(&t->pf_lock);
        while (t->pf_len > 0 && n < PF_SERVICE_BATCH &&
               (all || t->pf_heap[0].deadline_ns <= now)) {
            pages[n++] = heap_pop(t).page;
        }
        update_next(t);
        pthread_mutex_unlock(&t->pf_lock);
        for (uint32_t i = 0; i < n; i++) {
            complete(t, pages[i]);
        }
        done += n;
        if (n < PF_SERVICE_BATCH) {
            return done;
        }
    }
}

uint32_t trap_prefetch_service(struct cxlssd_trap *t, uint64_t now)
{
    if (now < atomic_load_explicit(&t->pf_next, memory_order_acquire)) {
        return 0;
    }
    return service(t, now, false);
}

void trap_prefetch_flush(struct cxlssd_trap *t)
{
    service(t, 0, true);
}
