/*
 * S3-FIFO (Yang et al., SOSP'23): a small FIFO S (10% of the set's frames),
 * a main FIFO M (the rest) and a ghost FIFO G of recently evicted page ids
 * (as many entries as M has frames).
 *
 *   insert: a page found in G goes to M, any other page to S.
 *   evict:  if |S| >= its target (or M is empty) evict from S, else from M.
 *     S: take the head; if it was referenced (freq >= 1) move it to M's
 *        tail with freq 0, else evict it and remember its id in G.
 *     M: take the head; if freq > 0, decrement it and reinsert at the tail
 *        (at most 3 times, freq saturates at 3), else evict it.
 *
 * The move-to-main threshold is 1 (the paper uses 2 over every access):
 * here references are trapped or sampled accessed bits, so one observed
 * reference already stands for many.  Frequencies live in the page byte
 * (2 bits), ghost membership in the page byte's ghost bit; G is a ring of
 * page ids with lazy removal: when an id falls off the ring its ghost bit
 * is cleared; an id that was re-admitted meanwhile has its bit cleared at
 * re-admission, so a stale entry only clears a bit that is already clear,
 * except for a page evicted to G twice within one ring turn (its older
 * entry then ages it out early -- a bounded, documented approximation).
 * LOADING pages are skipped (never victims).  Every step moves a page
 * closer to eviction (freq decrement or S->M), so O(1) amortised.
 */
#include "policy.h"

/* S: 10% of the set (at least one frame); G: as many ids as M has frames. */
static void s3_reset(struct pol_ctx *c, struct pol_set *s)
{
    (void)c;
    pol_list_reset(s);
    s->small_target = s->n / 10 ? s->n / 10 : 1;
    s->ghost_cap = s->n - (s->small_target < s->n ? s->small_target : s->n);
}

static void s3_insert(struct pol_ctx *c, struct pol_set *s, uint32_t slot,
                      uint32_t page, bool ghost)
{
    c->slot_page[slot] = page;
    pol_push_tail(c, s, ghost ? POL_Q_MAIN : POL_Q_SMALL, slot);
}

static void ghost_push(struct pol_ctx *c, struct pol_set *s, uint32_t page)
{
    if (s->ghost_cap == 0) {
        return;
    }
    if (s->ghost_len == s->ghost_cap) {
        /* oldest entry falls off: clear its ghost bit */
        uint32_t old = c->ghost[s->ghost_base + s->ghost_head];
        _Atomic uint8_t *p = &c->pst[old];
        uint8_t b = atomic_load_explicit(p, memory_order_acquire);
        while ((b & PS_GHOST) &&
               !atomic_compare_exchange_weak_explicit(
                   p, &b, (uint8_t)(b & ~PS_GHOST), memory_order_acq_rel,
                   memory_order_acquire)) {
        }
        if (++s->ghost_head == s->ghost_cap) {
            s->ghost_head = 0;
        }
        s->ghost_len--;
    }
    uint32_t pos = s->ghost_head + s->ghost_len;
    if (pos >= s->ghost_cap) {
        pos -= s->ghost_cap;
    }
    c->ghost[s->ghost_base + pos] = page;
    s->ghost_len++;
}

static uint32_t evict_small(struct pol_ctx *c, struct pol_set *s,
                            uint8_t extra, uint8_t *old)
{
    uint32_t t = s->head[POL_Q_SMALL];
    while (t != POL_NIL) {
        uint32_t nx = c->next[t];
        if (pol_state(c, t) != CXLSSD_CACHED) {
            t = nx;             /* LOADING: skip */
            continue;
        }
        if (pol_take_ref(c, t, true)) {
            pol_unlink(c, s, t);
            pol_push_tail(c, s, POL_Q_MAIN, t);
            t = nx;
            continue;
        }
        if (pol_try_evict(c, t, (uint8_t)(extra | PS_GHOST), old)) {
            pol_unlink(c, s, t);
            ghost_push(c, s, c->slot_page[t]);
            return t;
        }
        /* state changed under us (cannot happen: only we evict) */
        t = nx;
    }
    return POL_NIL;
}

static uint32_t evict_main(struct pol_ctx *c, struct pol_set *s,
                           uint8_t extra, uint8_t *old)
{
    /* Each pass either evicts or lowers a frequency; freq <= 3, so at most
     * 4 productive passes, plus one that only skips LOADING pages. */
    for (int pass = 0; pass < 5; pass++) {
        bool progress = false;
        uint32_t n = s->size[POL_Q_MAIN];
        uint32_t t = s->head[POL_Q_MAIN];
        for (uint32_t i = 0; i < n && t != POL_NIL; i++) {
            uint32_t nx = c->next[t];
            if (pol_state(c, t) != CXLSSD_CACHED) {
                t = nx;
                continue;
            }
            if (pol_take_ref(c, t, false)) {
                pol_unlink(c, s, t);
                pol_push_tail(c, s, POL_Q_MAIN, t);
                progress = true;
                if (nx == POL_NIL) {
                    break;
                }
                t = nx;
                continue;
            }
            if (pol_try_evict(c, t, extra, old)) {
                pol_unlink(c, s, t);
                return t;
            }
            t = nx;
        }
        if (!progress) {
            break;
        }
    }
    return POL_NIL;
}

static uint32_t s3_pick(struct pol_ctx *c, struct pol_set *s, uint8_t extra,
                        uint8_t *old)
{
    uint32_t v;
    bool small_first = s->size[POL_Q_SMALL] >= s->small_target ||
                       s->size[POL_Q_MAIN] == 0;
    if (small_first) {
        v = evict_small(c, s, extra, old);
        if (v != POL_NIL) {
            return v;
        }
    }
    v = evict_main(c, s, extra, old);
    if (v == POL_NIL && !small_first) {
        v = evict_small(c, s, extra, old);
    }
    return v;
}

static void s3_hint(struct pol_ctx *c, struct pol_set *s)
{
    pol_prefetch_slot(c, s->head[POL_Q_SMALL]);
    pol_prefetch_slot(c, s->head[POL_Q_MAIN]);
    if (s->ghost_cap && s->ghost_len == s->ghost_cap) {
        __builtin_prefetch(&c->pst[c->ghost[s->ghost_base + s->ghost_head]],
                           1, 3);
    }
}

const struct policy_ops cxlssd_policy_s3fifo = {
    .name = "s3fifo",
    .freq_max = 3,
    .ghosts = true,
    .reset = s3_reset,
    .insert = s3_insert,
    .pick = s3_pick,
    .hint = s3_hint,
};
