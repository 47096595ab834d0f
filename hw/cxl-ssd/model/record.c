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
#include <string.h>

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
          "prefetch_hit,waited_loading,compensated,late_wait,nvictims,"
          "victim_page,"
          "t_fault_ns,t_bql_req_ns,t_bql_acq_ns,t_decision_start_ns,"
          "t_decision_end_ns,t_unmapped_ns,t_deadline_ns,"
          "t_deadline_model_ns,t_wait_end_ns,t_mapped_ns,t_bql_rel_ns,"
          "t_host_fault_ns\n",
          out);
}

/*
 * Rows are formatted by hand into one buffer, not with fprintf: the writer
 * thread formats every miss, and while it runs on another CPU each victim
 * unmap on the miss path must interrupt that CPU for a TLB shootdown, so
 * its CPU time is miss latency.  Measured with callgrind, 1M typical rows
 * (19-digit timestamps): ~12,700 instructions a row with one fprintf,
 * ~3,000 here.
 */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    char *q = tmp + sizeof(tmp);
    while (v >= 100) {
        const char *d = &digit_pairs[(v % 100) * 2];
        v /= 100;
        *--q = d[1];
        *--q = d[0];
    }
    if (v >= 10) {
        *--q = digit_pairs[v * 2 + 1];
        *--q = digit_pairs[v * 2];
    } else {
        *--q = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof(tmp) - q);
    memcpy(p, q, n);
    return p + n;
}

static char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

static char *put_field_u64(char *p, uint64_t v)
{
    p = put_u64(p, v);
    *p++ = ',';
    return p;
}

static char *put_flag(char *p, unsigned flags, unsigned bit)
{
    *p++ = (flags & bit) ? '1' : '0';
    *p++ = ',';
    return p;
}

/* A row's longest numeric fields: seq, page (21 with the comma), tid, vcpu
 * (12), seven flags (2), nvictims (11), victim_page and 12 timestamps (21,
 * the last with its newline). */
#define ROW_NUMBERS_MAX (2 * 21 + 2 * 12 + 7 * 2 + 11 + 13 * 21)

/* @mid: "MODE,ACCEL," of every row, @midlen bytes; @row has room for
 * ROW_NUMBERS_MAX + @midlen bytes. */
static void write_row(FILE *out, const struct cxlssd_record *x,
                      const char *mid, size_t midlen, char *row)
{
    char *p = row;
    unsigned f = x->flags;

    p = put_field_u64(p, x->seq);
    p = put_field_u64(p, x->page);
    p = put_i64(p, x->tid);
    *p++ = ',';
    p = put_i64(p, x->vcpu);
    *p++ = ',';
    memcpy(p, mid, midlen);
    p += midlen;
    p = put_flag(p, f, CXLSSD_REC_WRITE);
    p = put_flag(p, f, CXLSSD_REC_DIRTY_EVICT);
    p = put_flag(p, f, CXLSSD_REC_PREFETCH_ISSUED);
    p = put_flag(p, f, CXLSSD_REC_PREFETCH_HIT);
    p = put_flag(p, f, CXLSSD_REC_WAITED_LOADING);
    p = put_flag(p, f, CXLSSD_REC_COMPENSATED);
    p = put_flag(p, f, CXLSSD_REC_LATE_WAIT);
    p = put_field_u64(p, x->nvictims);
    if (x->victim_page != UINT64_MAX && x->nvictims > 0) {
        p = put_u64(p, x->victim_page);
    }
    *p++ = ',';
    /* the timestamps, in the header's order; the last ends the row */
    const uint64_t ts[] = {
        x->t_fault_ns, x->t_bql_req_ns, x->t_bql_acq_ns,
        x->t_decision_start_ns, x->t_decision_end_ns, x->t_unmapped_ns,
        x->t_deadline_ns, x->t_deadline_model_ns, x->t_wait_end_ns,
        x->t_mapped_ns, x->t_bql_rel_ns,
    };
    for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
        p = put_field_u64(p, ts[i]);
    }
    p = put_u64(p, x->t_host_fault_ns);
    *p++ = '\n';
    fwrite(row, 1, (size_t)(p - row), out);
}

uint64_t cxlssd_record_drain(struct cxlssd_record_ring *r, FILE *out,
                             const char *mode, const char *accel)
{
    if (!r) {
        return 0;
    }
    uint64_t n = 0;
    uint64_t pos = atomic_load_explicit(&r->deq, memory_order_relaxed);
    char *buf = NULL;
    size_t midlen = 0;
    if (out) {
        mode = mode ? mode : "";
        accel = accel ? accel : "";
        size_t ml = strlen(mode), al = strlen(accel);
        midlen = ml + al + 2;
        buf = malloc(midlen + ROW_NUMBERS_MAX);
        if (!buf) {
            return 0;   /* the records stay in the ring for the next drain */
        }
        memcpy(buf, mode, ml);
        buf[ml] = ',';
        memcpy(buf + ml + 1, accel, al);
        buf[ml + 1 + al] = ',';
    }
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
            write_row(out, &rec, buf, midlen, buf + midlen);
        }
        n++;
    }
    free(buf);
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
