/*
 * The cache engine's creation, destruction and residency reset: sizing the
 * frames, sets and LOADING table, and emptying them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lazy_array.h"
#include "model_int.h"

static const struct policy_ops *policy_ops_of(enum cxlssd_policy p)
{
    switch (p) {
    case CXLSSD_POLICY_FIFO: return &cxlssd_policy_fifo;
    case CXLSSD_POLICY_LIFO: return &cxlssd_policy_lifo;
    case CXLSSD_POLICY_CLOCK: return &cxlssd_policy_clock;
    case CXLSSD_POLICY_S3FIFO: return &cxlssd_policy_s3fifo;
    default: return NULL;
    }
}

void model_sets_reset(struct cxlssd_model *m)
{
    uint32_t ghost_base = 0;
    for (uint32_t s = 0; s < m->nsets; s++) {
        struct pol_set *ps = &m->sets[s];
        ps->base = s * m->ways;
        ps->n = m->ways;
        ps->ghost_cap = 0;
        if (m->pol->reset) {
            m->pol->reset(&m->pc, ps);     /* sizes S3-FIFO's queues */
        } else {
            pol_list_reset(ps);
        }
        /* free slot list: base, base+1, ... */
        ps->free_head = POL_NIL;
        for (uint32_t i = ps->n; i-- > 0;) {
            uint32_t slot = ps->base + i;
            m->pc.q[slot] = POL_Q_FREE;
            m->pc.next[slot] = ps->free_head;
            m->pc.prev[slot] = POL_NIL;
            m->pc.slot_page[slot] = 0;
            ps->free_head = slot;
        }
        atomic_store(&ps->nfree, ps->n);
        atomic_store(&ps->pending, 0);
        ps->ghost_base = ghost_base;
        ghost_base += ps->ghost_cap;
    }
    atomic_store(&m->free_total, m->frames);
    atomic_store(&m->pending_total, 0);

    m->bg_cursor = 0;
    /* empty = 0 (model_int.h); stores only where an entry was used */
    for (uint32_t i = 0; i <= m->ld_mask; i++) {
        if (atomic_load_explicit(&m->ld[i].page, RLX)) {
            atomic_store_explicit(&m->ld[i].page, 0, RLX);
        }
    }
    for (uint32_t i = 0; i < LD_HOT; i++) {
        if (atomic_load_explicit(&m->ld_hot[i].page, RLX)) {
            atomic_store_explicit(&m->ld_hot[i].page, 0, RLX);
        }
    }
}

/* The page-state array is a lazy array (lazy_array.h): a large device's
 * pages that no access reaches cost no memory, and a reset drops it. */
static size_t pst_bytes(const struct cxlssd_model *m)
{
    return (size_t)m->pages * sizeof(*m->pc.pst);
}

struct cxlssd_model *cxlssd_model_new(const struct cxlssd_config *cfg,
                                      char *err, size_t errlen)
{
    if (cxlssd_config_validate(cfg, err, errlen) < 0) {
        return NULL;
    }
    uint64_t frames = cxlssd_config_cache_frames(cfg);
    if (frames > UINT32_MAX / 2) {
        snprintf(err, errlen, "cache-size=%llu: at most %u frames supported",
                 (unsigned long long)cfg->cache_size, UINT32_MAX / 2);
        return NULL;
    }
    struct cxlssd_model *m = calloc(1, sizeof(*m));
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->cfg = *cfg;
    m->pages = cxlssd_config_pages(cfg);
    m->frames = (uint32_t)frames;
    m->ways = cfg->cache_ways ? cfg->cache_ways : m->frames;
    m->nsets = m->frames / m->ways;
    m->pol = policy_ops_of(cfg->policy);
    cxlssd_lock_init(&m->lock);

    m->ftl = ftl_new(cfg, err, errlen);
    if (!m->ftl) {
        free(m);
        return NULL;
    }

    uint32_t ldn = 16;
    while (ldn <= m->frames) {
        ldn <<= 1;
    }
    m->ld_mask = ldn - 1;

    m->pc.pst = lazy_array_new(pst_bytes(m));
    m->pc.slot_page = calloc(m->frames, sizeof(uint32_t));
    m->pc.prev = calloc(m->frames, sizeof(uint32_t));
    m->pc.next = calloc(m->frames, sizeof(uint32_t));
    m->pc.q = calloc(m->frames, 1);
    m->sets = calloc(m->nsets, sizeof(*m->sets));
    m->ld = calloc(ldn, sizeof(*m->ld));
    m->ld_hot = calloc(LD_HOT, sizeof(*m->ld_hot));
    m->ghost_total = m->pol->ghosts ? m->frames : 0;
    m->pc.ghost = calloc(m->ghost_total ? m->ghost_total : 1,
                         sizeof(uint32_t));
    if (!m->pc.pst || !m->pc.slot_page || !m->pc.prev || !m->pc.next ||
        !m->pc.q || !m->sets || !m->ld || !m->ld_hot || !m->pc.ghost) {
        snprintf(err, errlen, "out of memory for %llu pages / %u frames",
                 (unsigned long long)m->pages, m->frames);
        cxlssd_model_free(m);
        return NULL;
    }
    /* pst comes zeroed (NOT_CACHED, clean) from its own mapping and is
     * not written here: the pages of a large device's state array that no
     * access reaches are never touched and cost no memory. */

    m->low_frames = (uint32_t)((uint64_t)m->frames * cfg->evict_low_pct
                               / 100);
    m->high_frames = (uint32_t)(((uint64_t)m->frames * cfg->evict_high_pct
                                 + 99) / 100);
    if (m->high_frames == 0) {
        m->high_frames = 1;
    }
    if (m->low_frames >= m->high_frames) {
        m->low_frames = m->high_frames - 1;
    }
    m->set_high = (uint32_t)(((uint64_t)m->ways * cfg->evict_high_pct + 99)
                             / 100);
    if (m->set_high == 0) {
        m->set_high = 1;
    }
    model_sets_reset(m);
    return m;
}

void cxlssd_model_free(struct cxlssd_model *m)
{
    if (!m) {
        return;
    }
    if (m->ftl) {
        ftl_free(m->ftl);
    }
    lazy_array_free((void *)m->pc.pst, pst_bytes(m));
    free(m->pc.slot_page);
    free(m->pc.prev);
    free(m->pc.next);
    free(m->pc.q);
    free(m->pc.ghost);
    free(m->sets);
    free(m->ld);
    free(m->ld_hot);
    free(m);
}

const struct cxlssd_config *cxlssd_model_config(const struct cxlssd_model *m)
{
    return &m->cfg;
}

void cxlssd_model_reset_residency(struct cxlssd_model *m)
{
    cxlssd_lock(&m->lock);
    /* every state back to 0 without reading the entries (lazy_array.c) */
    lazy_array_zero((void *)m->pc.pst, pst_bytes(m));
    model_sets_reset(m);
    cxlssd_unlock(&m->lock);
}
