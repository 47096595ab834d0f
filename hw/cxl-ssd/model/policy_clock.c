/*
 * CLOCK (second chance): the set's slots form a ring swept by a hand.  A
 * page's reference bit (the page byte's frequency field, saturating at 1)
 * is set by cxlssd_hit() -- trapped accesses or sampled accessed bits --
 * and by accesses that find the page resident or loading.  pick() advances
 * the hand: free slots and LOADING pages are skipped, a referenced page
 * loses its bit and survives, the first unreferenced CACHED page is the
 * victim.  New pages enter with the bit clear.  Each sweep step either
 * clears a bit set by an earlier reference or skips an in-flight fill, so
 * the cost is O(1) amortised; a sweep gives up after two full turns.
 */
#include "policy.h"

static void clock_insert(struct pol_ctx *c, struct pol_set *s, uint32_t slot,
                         uint32_t page, bool ghost)
{
    (void)ghost;
    c->slot_page[slot] = page;
    c->q[slot] = POL_Q_MAIN;
    s->size[POL_Q_MAIN]++;
}

static uint32_t clock_pick(struct pol_ctx *c, struct pol_set *s,
                           uint8_t extra, uint8_t *old)
{
    uint64_t limit = 2ull * s->n + 1;
    for (uint64_t i = 0; i < limit; i++) {
        uint32_t slot = s->base + s->hand;
        if (++s->hand == s->n) {
            s->hand = 0;
        }
        if (c->q[slot] == POL_Q_FREE) {
            continue;
        }
        if (pol_take_ref(c, slot, true)) {
            continue;           /* second chance */
        }
        if (pol_try_evict(c, slot, extra, old)) {
            c->q[slot] = POL_Q_FREE;
            s->size[POL_Q_MAIN]--;
            return slot;
        }
        /* LOADING: skip */
    }
    return POL_NIL;
}

static void clock_hint(struct pol_ctx *c, struct pol_set *s)
{
    uint32_t slot = s->base + s->hand;
    if (c->q[slot] != POL_Q_FREE) {
        pol_prefetch_slot(c, slot);
    }
}

const struct policy_ops cxlssd_policy_clock = {
    .name = "clock",
    .freq_max = 1,
    .insert = clock_insert,
    .pick = clock_pick,
    .hint = clock_hint,
};
