/*
 * The record tests' producer threads: each pushes @count records into one
 * ring (producer id's pages from id * 1000000 in order, tid and vcpu id)
 * and counts the pushes the ring took.  Header-only.
 */
#ifndef CXLSSD_RECORD_PRODUCERS_H
#define CXLSSD_RECORD_PRODUCERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../record.h"

struct record_producers {
    struct cxlssd_record_ring *ring;
    uint64_t count;                     /* records per producer */
    _Atomic int producers_left;
    _Atomic uint64_t pushed_ok;
};

struct record_producer {
    struct record_producers *s;
    int id;
};

static void *record_producer_main(void *arg)
{
    struct record_producer *p = arg;
    for (uint64_t i = 0; i < p->s->count; i++) {
        struct cxlssd_record rec = { 0 };
        rec.page = (uint64_t)p->id * 1000000 + i;
        rec.tid = p->id;
        rec.vcpu = p->id;
        rec.victim_page = UINT64_MAX;
        rec.t_fault_ns = i + 1;
        if (cxlssd_record_push(p->s->ring, &rec)) {
            atomic_fetch_add(&p->s->pushed_ok, 1);
        }
    }
    atomic_fetch_sub(&p->s->producers_left, 1);
    return NULL;
}

/* @n producers of @count records each for @ring, none started yet. */
static inline void record_producers_init(struct record_producers *s,
                                         struct cxlssd_record_ring *ring,
                                         int n, uint64_t count)
{
    s->ring = ring;
    s->count = count;
    atomic_init(&s->producers_left, n);
    atomic_init(&s->pushed_ok, 0);
}

/* Starts @s's producers as threads @th, with @p (@n of each). */
static inline void record_producers_start(struct record_producers *s, int n,
                                          struct record_producer *p,
                                          pthread_t *th)
{
    for (int i = 0; i < n; i++) {
        p[i].s = s;
        p[i].id = i;
        pthread_create(&th[i], NULL, record_producer_main, &p[i]);
    }
}

#endif
