/*
 * FIFO: evict the page that started loading longest ago.  One queue of
 * slots in insertion order; pick() walks from the head past pages that are
 * still LOADING (never victims) and takes the first CACHED one.  The walk
 * only skips in-flight fills, so it is O(1) amortised.
 */
#include "policy.h"

static void fifo_reset(struct pol_ctx *c, struct pol_set *s)
{
    (void)c;
    pol_list_reset(s);
}

static void fifo_insert(struct pol_ctx *c, struct pol_set *s, uint32_t slot,
                        uint32_t page, bool ghost)
{
    (void)ghost;
    c->slot_page[slot] = page;
    pol_push_tail(c, s, POL_Q_MAIN, slot);
}

static uint32_t fifo_pick(struct pol_ctx *c, struct pol_set *s, uint8_t extra,
                          uint8_t *old)
{
    for (uint32_t t = s->head[POL_Q_MAIN]; t != POL_NIL; t = c->next[t]) {
        if (pol_try_evict(c, t, extra, old)) {
            pol_unlink(c, s, t);
            return t;
        }
    }
    return POL_NIL;
}

static void fifo_hint(struct pol_ctx *c, struct pol_set *s)
{
    pol_prefetch_slot(c, s->head[POL_Q_MAIN]);
}

const struct policy_ops cxlssd_policy_fifo = {
    .name = "fifo",
    .freq_max = 0,
    .reset = fifo_reset,
    .insert = fifo_insert,
    .pick = fifo_pick,
    .hint = fifo_hint,
};
