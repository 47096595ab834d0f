/*
 * FIFO and LIFO: one queue of slots in insertion order.
 *   FIFO evicts the page that started loading longest ago: pick() walks
 *        from the head;
 *   LIFO evicts the page inserted most recently: pick() walks from the
 *        tail.
 * Either walk takes the first CACHED page, skipping pages that are still
 * LOADING (never victims; for LIFO that includes the fill being decided),
 * so it only skips in-flight fills: O(1) amortised.
 */
#include "policy.h"

static void queue_insert(struct pol_ctx *c, struct pol_set *s, uint32_t slot,
                         uint32_t page, bool ghost)
{
    (void)ghost;
    c->slot_page[slot] = page;
    pol_push_tail(c, s, POL_Q_MAIN, slot);
}

/* Walk from @first along @link (next[] or prev[]). */
static uint32_t queue_pick(struct pol_ctx *c, struct pol_set *s,
                           uint32_t first, const uint32_t *link,
                           uint8_t extra, uint8_t *old)
{
    for (uint32_t t = first; t != POL_NIL; t = link[t]) {
        if (pol_try_evict(c, t, extra, old)) {
            pol_unlink(c, s, t);
            return t;
        }
    }
    return POL_NIL;
}

static uint32_t fifo_pick(struct pol_ctx *c, struct pol_set *s, uint8_t extra,
                          uint8_t *old)
{
    return queue_pick(c, s, s->head[POL_Q_MAIN], c->next, extra, old);
}

static uint32_t lifo_pick(struct pol_ctx *c, struct pol_set *s, uint8_t extra,
                          uint8_t *old)
{
    return queue_pick(c, s, s->tail[POL_Q_MAIN], c->prev, extra, old);
}

static void fifo_hint(struct pol_ctx *c, struct pol_set *s)
{
    pol_prefetch_slot(c, s->head[POL_Q_MAIN]);
}

const struct policy_ops cxlssd_policy_fifo = {
    .name = "fifo",
    .insert = queue_insert,
    .pick = fifo_pick,
    .hint = fifo_hint,
};

const struct policy_ops cxlssd_policy_lifo = {
    .name = "lifo",
    .insert = queue_insert,
    .pick = lifo_pick,
};
