/*
 * Background eviction (eviction=background): the trap's worker keeps free
 * frames between the low and high watermarks, so that a miss usually finds
 * a free frame and has no victim to unmap on its own path.
 */
#include "model_int.h"

bool cxlssd_evict_needed(const struct cxlssd_model *m)
{
    return atomic_load_explicit(&m->free_total, memory_order_acquire) <
           m->low_frames;
}

uint32_t cxlssd_evict_background(struct cxlssd_model *m, uint64_t now_ns,
                                 struct cxlssd_victim *victims, uint32_t max)
{
    uint32_t n = 0;
    if (max == 0 || !victims) {
        return 0;
    }
    cxlssd_lock(&m->lock);
    uint64_t avail = atomic_load(&m->free_total) +
                     atomic_load(&m->pending_total);
    uint32_t idle = 0;          /* consecutive sets without a victim */
    while (n < max && avail + n < m->high_frames && idle < m->nsets) {
        struct pol_set *ps = &m->sets[m->bg_cursor];
        if (++m->bg_cursor == m->nsets) {
            m->bg_cursor = 0;
        }
        if (m->nsets > 1 &&
            atomic_load(&ps->nfree) + atomic_load(&ps->pending) >=
            m->set_high) {
            idle++;
            continue;
        }
        uint8_t old;
        uint32_t slot = m->pol->pick(&m->pc, ps, 0, &old);
        if (slot == POL_NIL) {
            idle++;
            continue;
        }
        idle = 0;
        victims[n].page = m->pc.slot_page[slot];
        victims[n].dirty = (old & PS_DIRTY) != 0;
        if (victims[n].dirty) {
            m->st_ev_dirty++;
        } else {
            m->st_ev_clean++;
        }
        n++;
        /* the slot leaves the order now; its frame is freed at evict_done */
        m->pc.q[slot] = POL_Q_FREE;
        m->pc.next[slot] = ps->free_head;
        ps->free_head = slot;
        atomic_fetch_add(&ps->pending, 1);
        atomic_fetch_add(&m->pending_total, 1);
    }
    cxlssd_unlock(&m->lock);
    model_charge_writebacks(m, victims, n, now_ns);
    return n;
}
