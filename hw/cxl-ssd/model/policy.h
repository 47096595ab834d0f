/*
 * Internal interface between the cache engine (model.c) and the replacement
 * policies (policy_*.c).  Not part of the public API.
 *
 * A policy orders the frames ("slots") of one set.  Slots are indices into
 * arrays shared by all sets (struct pol_ctx); set s owns slots
 * [base, base + n).  Every call is made with the model's policy mutex held;
 * page-state bytes are still changed only by CAS because hits, fills and
 * evict_done() change them without that mutex.
 *
 *   insert(slot, page, ghost)  @page starts loading into @slot (LOADING);
 *                              @ghost: it was in S3-FIFO's ghost queue
 *   pick(extra)                choose a CACHED page, CAS it CACHED->EVICTING
 *                              (or'ing @extra into the byte), take its slot
 *                              out of the order and return the slot, or
 *                              POL_NIL if every page is LOADING/EVICTING.
 *                              *old receives the byte before the CAS.
 *   reset()                    optional: empty order (slots are re-added by
 *                              insert) and size the set's queues; without
 *                              it the model calls pol_list_reset()
 *   hint()                     optional: prefetch the next candidate's byte
 *
 * References (cxlssd_hit(), sampled accessed bits) do not call the policy:
 * they bump the page byte's frequency field (CLOCK: reference bit, 0..1;
 * S3-FIFO: 0..3; FIFO/LIFO: unused), which pick() reads and clears.
 */
#ifndef CXLSSD_MODEL_POLICY_H
#define CXLSSD_MODEL_POLICY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "model.h"

#define POL_NIL UINT32_MAX

/* Page-state byte (one per device page). */
#define PS_STATE        0x03u   /* enum cxlssd_page_state */
#define PS_DIRTY        0x04u   /* written since it was last programmed */
#define PS_FREQ_SHIFT   3
#define PS_FREQ         0x18u   /* reference count 0..3 (CLOCK: 0..1) */
#define PS_PREFETCHED   0x20u   /* loaded by prefetch, not used yet */
#define PS_GHOST        0x40u   /* S3-FIFO ghost queue member */
#define PS_HANDOVER     0x80u   /* EVICTING; its frame went to a fill */

static inline unsigned ps_state(uint8_t b) { return b & PS_STATE; }
static inline unsigned ps_freq(uint8_t b)
{
    return (b & PS_FREQ) >> PS_FREQ_SHIFT;
}
static inline uint8_t ps_with_freq(uint8_t b, unsigned f)
{
    return (uint8_t)((b & ~PS_FREQ) | (f << PS_FREQ_SHIFT));
}

/* Queue ids in pol_ctx.q[] */
#define POL_Q_MAIN  0   /* FIFO/LIFO queue, S3-FIFO main, CLOCK occupied */
#define POL_Q_SMALL 1   /* S3-FIFO small queue */
#define POL_Q_FREE  0xff

struct pol_ctx {
    _Atomic uint8_t *pst;       /* page -> state byte */
    uint32_t *slot_page;        /* slot -> page */
    uint32_t *prev, *next;      /* slot links (free list uses next) */
    uint8_t *q;                 /* slot -> queue id */
    uint32_t *ghost;            /* S3-FIFO ghost rings (all sets) */
};

struct pol_set {
    uint32_t base, n;           /* slots [base, base + n) */
    uint32_t free_head;         /* slots not in the order (through next[]) */
    _Atomic uint32_t nfree;     /* free frames (capacity accounting) */
    _Atomic uint32_t pending;   /* background victims not yet evict_done */
    uint32_t head[2], tail[2], size[2];     /* per queue id */
    uint32_t hand;              /* CLOCK hand, 0..n-1 */
    uint32_t small_target;      /* S3-FIFO small queue size (10%) */
    uint32_t ghost_base, ghost_cap, ghost_head, ghost_len;
};

struct policy_ops {
    const char *name;
    unsigned freq_max;          /* reference counter saturates here */
    bool ghosts;                /* keeps a ghost ring of evicted page ids,
                                 * reset() sizes it (at most one entry per
                                 * frame) */
    void (*reset)(struct pol_ctx *c, struct pol_set *s);
    void (*insert)(struct pol_ctx *c, struct pol_set *s, uint32_t slot,
                   uint32_t page, bool ghost);
    uint32_t (*pick)(struct pol_ctx *c, struct pol_set *s, uint8_t extra,
                     uint8_t *old);
    /* optional: prefetch the state byte of the page pick() will probably
     * look at next (overlaps that cache miss with the caller's work) */
    void (*hint)(struct pol_ctx *c, struct pol_set *s);
};

static inline void pol_prefetch_slot(struct pol_ctx *c, uint32_t slot)
{
    if (slot != POL_NIL) {
        __builtin_prefetch(&c->pst[c->slot_page[slot]], 1, 3);
    }
}

extern const struct policy_ops cxlssd_policy_fifo;
extern const struct policy_ops cxlssd_policy_lifo;
extern const struct policy_ops cxlssd_policy_clock;
extern const struct policy_ops cxlssd_policy_s3fifo;

/* ---- helpers shared by the policies ---- */

static inline void pol_list_reset(struct pol_set *s)
{
    for (int i = 0; i < 2; i++) {
        s->head[i] = s->tail[i] = POL_NIL;
        s->size[i] = 0;
    }
    s->hand = 0;
    s->ghost_head = s->ghost_len = 0;
}

static inline void pol_push_tail(struct pol_ctx *c, struct pol_set *s,
                                 unsigned qid, uint32_t slot)
{
    c->q[slot] = (uint8_t)qid;
    c->next[slot] = POL_NIL;
    c->prev[slot] = s->tail[qid];
    if (s->tail[qid] != POL_NIL) {
        c->next[s->tail[qid]] = slot;
    } else {
        s->head[qid] = slot;
    }
    s->tail[qid] = slot;
    s->size[qid]++;
}

static inline void pol_unlink(struct pol_ctx *c, struct pol_set *s,
                              uint32_t slot)
{
    unsigned qid = c->q[slot];
    uint32_t p = c->prev[slot], n = c->next[slot];
    if (p != POL_NIL) {
        c->next[p] = n;
    } else {
        s->head[qid] = n;
    }
    if (n != POL_NIL) {
        c->prev[n] = p;
    } else {
        s->tail[qid] = p;
    }
    s->size[qid]--;
    c->q[slot] = POL_Q_FREE;
}

/*
 * Try to make the page in @slot the victim: CACHED -> EVICTING by CAS,
 * keeping DIRTY and GHOST, clearing the frequency and prefetch bits, or'ing
 * @extra.  Returns true on success (byte before in *old).  Returns false if
 * the page is not CACHED (LOADING pages are never victims).
 */
static inline bool pol_try_evict(struct pol_ctx *c, uint32_t slot,
                                 uint8_t extra, uint8_t *old)
{
    _Atomic uint8_t *p = &c->pst[c->slot_page[slot]];
    uint8_t b = atomic_load_explicit(p, memory_order_acquire);
    for (;;) {
        if (ps_state(b) != CXLSSD_CACHED) {
            return false;
        }
        uint8_t nb = (uint8_t)((b & (PS_DIRTY | PS_GHOST)) | CXLSSD_EVICTING
                               | extra);
        if (atomic_compare_exchange_weak_explicit(p, &b, nb,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *old = b;
            return true;
        }
    }
}

/*
 * If the CACHED page in @slot has a non-zero frequency, decrement it (or
 * clear it when @clear) by CAS and return true ("second chance").  Returns
 * false if the frequency is zero.  Non-CACHED pages return false too.
 */
static inline bool pol_take_ref(struct pol_ctx *c, uint32_t slot, bool clear)
{
    _Atomic uint8_t *p = &c->pst[c->slot_page[slot]];
    uint8_t b = atomic_load_explicit(p, memory_order_acquire);
    for (;;) {
        unsigned f = ps_freq(b);
        if (ps_state(b) != CXLSSD_CACHED || f == 0) {
            return false;
        }
        uint8_t nb = ps_with_freq(b, clear ? 0 : f - 1);
        if (atomic_compare_exchange_weak_explicit(p, &b, nb,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            return true;
        }
    }
}

static inline unsigned pol_state(struct pol_ctx *c, uint32_t slot)
{
    return ps_state(atomic_load_explicit(&c->pst[c->slot_page[slot]],
                                         memory_order_acquire));
}

#endif
