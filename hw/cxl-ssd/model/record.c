/*
 * Per-miss record ring: a bounded multi-producer ring with sequence-numbered
 * slots (D. Vyukov's bounded MPMC queue).  A producer claims a slot by CAS
 * on the enqueue position, copies the record in and publishes it by storing
 * the slot's sequence number; it never waits: if the slot at the position
 * still holds an unconsumed record, the ring is full and the record is
 * counted as dropped.  The single consumer takes published slots in order
 * and hands each back by advancing its sequence by the capacity.
 */
#include "record.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

struct slot {
    _Atomic uint64_t seq;
    struct cxlssd_record rec;
};

struct cxlssd_record_ring {
    uint64_t mask;
    struct slot *slots;
    _Alignas(64) _Atomic uint64_t enq;
    _Alignas(64) _Atomic uint64_t deq;  /* consumer only (atomic for reads) */
    _Atomic uint64_t written;
    _Alignas(64) _Atomic uint64_t dropped;
};

struct cxlssd_record_ring *cxlssd_record_ring_new(uint32_t capacity)
{
    uint64_t cap = 2;
    if (capacity > (1u << 31)) {
        return NULL;
    }
    while (cap < capacity) {
        cap <<= 1;
    }
    struct cxlssd_record_ring *r = calloc(1, sizeof(*r));
    if (!r) {
        return NULL;
    }
    r->slots = calloc(cap, sizeof(*r->slots));
    if (!r->slots) {
        free(r);
        return NULL;
    }
    r->mask = cap - 1;
    for (uint64_t i = 0; i < cap; i++) {
        atomic_init(&r->slots[i].seq, i);
    }
    atomic_init(&r->enq, 0);
    atomic_init(&r->deq, 0);
    atomic_init(&r->written, 0);
    atomic_init(&r->dropped, 0);
    return r;
}

void cxlssd_record_ring_free(struct cxlssd_record_ring *r)
{
    if (r) {
        free(r->slots);
        free(r);
    }
}

bool cxlssd_record_push(struct cxlssd_record_ring *r,
                        const struct cxlssd_record *rec)
{
    if (!r || !rec) {
        return false;
    }
    uint64_t pos = atomic_load_explicit(&r->enq, memory_order_relaxed);
    for (;;) {
        struct slot *s = &r->slots[pos & r->mask];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(
                    &r->enq, &pos, pos + 1, memory_order_relaxed,
                    memory_order_relaxed)) {
                s->rec = *rec;
                s->rec.seq = pos;
                atomic_store_explicit(&s->seq, pos + 1,
                                      memory_order_release);
                return true;
            }
            /* pos reloaded by the failed CAS */
        } else if (dif < 0) {
            /* slot still holds the record from one lap ago: full */
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return false;
        } else {
            pos = atomic_load_explicit(&r->enq, memory_order_relaxed);
        }
    }
}

void cxlssd_record_write_header(FILE *out)
{
    fputs("seq,page,tid,vcpu,mode,accel,write,dirty_evict,prefetch_issued,"
          "prefetch_hit,waited_loading,compensated,nvictims,victim_page,"
          "t_fault_ns,t_bql_req_ns,t_bql_acq_ns,t_decision_start_ns,"
          "t_decision_end_ns,t_unmapped_ns,t_deadline_ns,"
          "t_deadline_model_ns,t_wait_end_ns,t_mapped_ns,t_bql_rel_ns,"
          "t_host_fault_ns\n",
          out);
}

static void write_row(FILE *out, const struct cxlssd_record *x,
                      const char *mode, const char *accel)
{
    char victim[24] = "";
    if (x->victim_page != UINT64_MAX && x->nvictims > 0) {
        snprintf(victim, sizeof(victim), "%" PRIu64, x->victim_page);
    }
    unsigned f = x->flags;
    fprintf(out,
            "%" PRIu64 ",%" PRIu64 ",%" PRId32 ",%" PRId32 ",%s,%s,"
            "%u,%u,%u,%u,%u,%u,%" PRIu32 ",%s,"
            "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ","
            "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ","
            "%" PRIu64 ",%" PRIu64 "\n",
            x->seq, x->page, x->tid, x->vcpu, mode ? mode : "",
            accel ? accel : "",
            !!(f & CXLSSD_REC_WRITE), !!(f & CXLSSD_REC_DIRTY_EVICT),
            !!(f & CXLSSD_REC_PREFETCH_ISSUED), !!(f & CXLSSD_REC_PREFETCH_HIT),
            !!(f & CXLSSD_REC_WAITED_LOADING), !!(f & CXLSSD_REC_COMPENSATED),
            x->nvictims, victim,
            x->t_fault_ns, x->t_bql_req_ns, x->t_bql_acq_ns,
            x->t_decision_start_ns, x->t_decision_end_ns, x->t_unmapped_ns,
            x->t_deadline_ns, x->t_deadline_model_ns, x->t_wait_end_ns,
            x->t_mapped_ns, x->t_bql_rel_ns, x->t_host_fault_ns);
}

uint64_t cxlssd_record_drain(struct cxlssd_record_ring *r, FILE *out,
                             const char *mode, const char *accel)
{
    if (!r) {
        return 0;
    }
    uint64_t n = 0;
    uint64_t pos = atomic_load_explicit(&r->deq, memory_order_relaxed);
    for (;;) {
        struct slot *s = &r->slots[pos & r->mask];
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq != pos + 1) {
            break;      /* empty, or the next record is not published yet */
        }
        struct cxlssd_record rec = s->rec;
        atomic_store_explicit(&s->seq, pos + r->mask + 1,
                              memory_order_release);
        pos++;
        atomic_store_explicit(&r->deq, pos, memory_order_relaxed);
        if (out) {
            write_row(out, &rec, mode, accel);
        }
        n++;
    }
    if (n) {
        atomic_fetch_add_explicit(&r->written, n, memory_order_relaxed);
    }
    return n;
}

uint64_t cxlssd_record_written(const struct cxlssd_record_ring *r)
{
    return r ? atomic_load_explicit(&r->written, memory_order_relaxed) : 0;
}

uint64_t cxlssd_record_dropped(const struct cxlssd_record_ring *r)
{
    return r ? atomic_load_explicit(&r->dropped, memory_order_relaxed) : 0;
}
