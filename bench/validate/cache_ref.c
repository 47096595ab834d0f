/* Reference simulations of the cache policies (cache_ref.h). */
#include "cache_ref.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define NIL UINT32_MAX

/* A FIFO of page ids (at most cap). */
struct ring {
    uint32_t *a;
    uint32_t cap, head, len;
};

static void ring_push(struct ring *r, uint32_t page)
{
    r->a[(r->head + r->len++) % r->cap] = page;
}

static uint32_t ring_pop(struct ring *r)
{
    uint32_t page = r->a[r->head];
    r->head = (r->head + 1) % r->cap;
    r->len--;
    return page;
}

/* The ghost queue: a FIFO of page ids, any of which can leave it (doubly
 * linked through per-page links). */
struct ghost {
    uint32_t *prev, *next;
    bool *member;
    uint32_t head, tail, len, cap;
};

static void ghost_remove(struct ghost *g, uint32_t page)
{
    uint32_t p = g->prev[page], n = g->next[page];
    if (p != NIL) {
        g->next[p] = n;
    } else {
        g->head = n;
    }
    if (n != NIL) {
        g->prev[n] = p;
    } else {
        g->tail = p;
    }
    g->member[page] = false;
    g->len--;
}

static void ghost_push(struct ghost *g, uint32_t page)
{
    if (g->cap == 0) {
        return;
    }
    if (g->len == g->cap) {
        ghost_remove(g, g->head);
    }
    g->prev[page] = g->tail;
    g->next[page] = NIL;
    if (g->tail != NIL) {
        g->next[g->tail] = page;
    } else {
        g->head = page;
    }
    g->tail = page;
    g->member[page] = true;
    g->len++;
}

struct sim {
    enum cxlssd_policy policy;
    uint32_t frames;
    uint8_t *cached;            /* per page: 1 while cached */
    uint8_t *freq;              /* per page (S3-FIFO) */
    uint32_t *frame_of;         /* per page (CLOCK) */
    uint32_t *frame_page;       /* per frame (CLOCK, LIFO stack) */
    uint8_t *ref;               /* per frame (CLOCK) */
    uint32_t used, hand;
    struct ring fifo, small, main;
    uint32_t small_target;
    struct ghost ghost;
};

static uint32_t s3_evict_main(struct sim *s)
{
    for (;;) {
        uint32_t t = ring_pop(&s->main);
        if (s->freq[t] > 0) {
            s->freq[t]--;
            ring_push(&s->main, t);
        } else {
            return t;
        }
    }
}

static uint32_t s3_evict(struct sim *s)
{
    if (s->small.len >= s->small_target || s->main.len == 0) {
        while (s->small.len > 0) {
            uint32_t t = ring_pop(&s->small);
            if (s->freq[t] >= 1) {
                s->freq[t] = 0;
                ring_push(&s->main, t);
            } else {
                ghost_push(&s->ghost, t);
                return t;
            }
        }
    }
    return s3_evict_main(s);
}

static void s3_miss(struct sim *s, uint32_t page)
{
    bool ghost = s->ghost.member[page];
    if (ghost) {
        ghost_remove(&s->ghost, page);
    }
    if (s->small.len + s->main.len == s->frames) {
        s->cached[s3_evict(s)] = 0;
    }
    s->freq[page] = 0;
    ring_push(ghost ? &s->main : &s->small, page);
    s->cached[page] = 1;
}

static void clock_miss(struct sim *s, uint32_t page)
{
    uint32_t slot;
    if (s->used < s->frames) {
        slot = s->used++;
    } else {
        while (s->ref[s->hand]) {
            s->ref[s->hand] = 0;
            s->hand = (s->hand + 1) % s->frames;
        }
        slot = s->hand;
        s->hand = (s->hand + 1) % s->frames;
        s->cached[s->frame_page[slot]] = 0;
    }
    s->frame_page[slot] = page;
    s->frame_of[page] = slot;
    s->ref[slot] = 0;
    s->cached[page] = 1;
}

static void queue_miss(struct sim *s, uint32_t page)
{
    if (s->policy == CXLSSD_POLICY_FIFO) {
        if (s->fifo.len == s->frames) {
            s->cached[ring_pop(&s->fifo)] = 0;
        }
        ring_push(&s->fifo, page);
    } else {                    /* LIFO: a stack */
        if (s->used == s->frames) {
            s->cached[s->frame_page[--s->used]] = 0;
        }
        s->frame_page[s->used++] = page;
    }
    s->cached[page] = 1;
}

static void hit(struct sim *s, uint32_t page)
{
    if (s->policy == CXLSSD_POLICY_CLOCK) {
        s->ref[s->frame_of[page]] = 1;
    } else if (s->policy == CXLSSD_POLICY_S3FIFO && s->freq[page] < 3) {
        s->freq[page]++;
    }
}

static void sim_free(struct sim *s)
{
    free(s->cached);
    free(s->freq);
    free(s->frame_of);
    free(s->frame_page);
    free(s->ref);
    free(s->fifo.a);
    free(s->small.a);
    free(s->main.a);
    free(s->ghost.prev);
    free(s->ghost.next);
    free(s->ghost.member);
}

int64_t ref_cache_misses(enum cxlssd_policy policy, const uint32_t *trace,
                         uint64_t n, uint64_t warm, uint32_t pages,
                         uint32_t frames)
{
    struct sim s = { .policy = policy, .frames = frames };
    s.cached = calloc(pages, 1);
    s.freq = calloc(pages, 1);
    s.frame_of = calloc(pages, sizeof(uint32_t));
    s.frame_page = calloc(frames, sizeof(uint32_t));
    s.ref = calloc(frames, 1);
    s.fifo = (struct ring) { calloc(frames, sizeof(uint32_t)), frames, 0, 0 };
    s.small = (struct ring) { calloc(frames, sizeof(uint32_t)), frames, 0, 0 };
    s.main = (struct ring) { calloc(frames, sizeof(uint32_t)), frames, 0, 0 };
    s.small_target = frames / 10 ? frames / 10 : 1;
    s.ghost = (struct ghost) {
        calloc(pages, sizeof(uint32_t)), calloc(pages, sizeof(uint32_t)),
        calloc(pages, sizeof(bool)), NIL, NIL, 0,
        frames - (s.small_target < frames ? s.small_target : frames),
    };
    if (!s.cached || !s.freq || !s.frame_of || !s.frame_page || !s.ref ||
        !s.fifo.a || !s.small.a || !s.main.a || !s.ghost.prev ||
        !s.ghost.next || !s.ghost.member) {
        sim_free(&s);
        return -1;
    }
    int64_t misses = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t page = trace[i];
        if (s.cached[page]) {
            hit(&s, page);
            continue;
        }
        misses += i >= warm;
        if (policy == CXLSSD_POLICY_S3FIFO) {
            s3_miss(&s, page);
        } else if (policy == CXLSSD_POLICY_CLOCK) {
            clock_miss(&s, page);
        } else {
            queue_miss(&s, page);
        }
    }
    sim_free(&s);
    return misses;
}

static double che_occupancy(const double *p, uint32_t n, double t)
{
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += p[i] * t / (1.0 + p[i] * t);
    }
    return sum;
}

double che_fifo_miss_ratio(const double *p, uint32_t n, uint32_t frames)
{
    double lo = 0.0, hi = 60.0;         /* log T */
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (che_occupancy(p, n, exp(mid)) < frames) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    double t = exp(0.5 * (lo + hi)), miss = 0;
    for (uint32_t i = 0; i < n; i++) {
        miss += p[i] / (1.0 + p[i] * t);
    }
    return miss;
}
