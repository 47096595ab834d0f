/*
 * LIFO: evict the page inserted most recently (that is no longer loading).
 * Same queue as FIFO; pick() walks from the tail past LOADING pages (the
 * fills in flight, including the one being decided), so O(1) amortised.
 */
#include "policy.h"

static void lifo_reset(struct pol_ctx *c, struct pol_set *s)
{
    (void)c;
    pol_list_reset(s);
}

static void lifo_insert(struct pol_ctx *c, struct pol_set *s, uint32_t slot,
                        uint32_t page, bool ghost)
{
    (void)ghost;
    c->slot_page[slot] = page;
    pol_push_tail(c, s, POL_Q_MAIN, slot);
}

static uint32_t lifo_pick(struct pol_ctx *c, struct pol_set *s, uint8_t extra,
                          uint8_t *old)
{
    for (uint32_t t = s->tail[POL_Q_MAIN]; t != POL_NIL; t = c->prev[t]) {
        if (pol_try_evict(c, t, extra, old)) {
            pol_unlink(c, s, t);
            return t;
        }
    }
    return POL_NIL;
}

const struct policy_ops cxlssd_policy_lifo = {
    .name = "lifo",
    .freq_max = 0,
    .reset = lifo_reset,
    .insert = lifo_insert,
    .pick = lifo_pick,
};
