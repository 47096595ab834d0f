/*
 * Queries (page state, sizes) and statistics of the cache engine, and its
 * metadata footprint.
 */
#include <string.h>

#include "model_int.h"

enum cxlssd_page_state cxlssd_page_state(const struct cxlssd_model *m,
                                         uint64_t page)
{
    if (page >= m->pages) {
        return CXLSSD_NOT_CACHED;
    }
    return (enum cxlssd_page_state)ps_state(
        atomic_load_explicit(&m->pc.pst[page], memory_order_acquire));
}

bool cxlssd_page_dirty(const struct cxlssd_model *m, uint64_t page)
{
    if (page >= m->pages) {
        return false;
    }
    uint8_t b = atomic_load_explicit(&m->pc.pst[page], memory_order_acquire);
    return ps_state(b) != CXLSSD_NOT_CACHED && (b & PS_DIRTY);
}

uint64_t cxlssd_model_pages(const struct cxlssd_model *m)
{
    return m->pages;
}

uint64_t cxlssd_model_frames(const struct cxlssd_model *m)
{
    return m->frames;
}

void cxlssd_model_get_counters(struct cxlssd_model *m,
                                struct cxlssd_stats *out)
{
    memset(out, 0, sizeof(*out));
    cxlssd_lock(&m->lock);
    out->misses = m->st_misses;
    out->loading_waits = m->st_loading_waits;
    out->evictions_clean = m->st_ev_clean;
    out->evictions_dirty = m->st_ev_dirty;
    out->prefetch_issued = m->st_pf_issued;
    out->prefetch_late = m->st_pf_late;
    cxlssd_unlock(&m->lock);
    out->trapped_hits = atomic_load_explicit(&m->st_trapped_hits, RLX);
    out->write_hits = atomic_load_explicit(&m->st_write_hits, RLX);
    out->prefetch_used = atomic_load_explicit(&m->st_pf_used, RLX);
    /* every LOADING, CACHED or EVICTING page holds a frame (taken at
     * the miss, freed at evict_done): no scan of the page states, whose
     * untouched parts a large device never reads */
    out->free_frames = atomic_load_explicit(&m->free_total, RLX);
    out->resident_pages = m->frames - out->free_frames;

    struct ftl_stats fs;
    ftl_get_stats(m->ftl, &fs);
    out->gc_runs = fs.gc_runs;
    out->gc_pages_moved = fs.gc_pages_moved;
    out->erases = fs.erases;
    out->nand_reads = fs.reads;
    out->nand_writes = fs.nand_writes;
    out->host_writes = fs.host_writes;
    uint32_t ch = ftl_channels(m->ftl);
    if (ch > 256) {
        ch = 256;
    }
    out->channels = ch;
    for (uint32_t i = 0; i < ch; i++) {
        out->channel_busy_ns[i] = ftl_channel_busy_ns(m->ftl, i);
    }
}

uint64_t cxlssd_model_cache_metadata_bytes(const struct cxlssd_model *m)
{
    uint64_t b = m->pages * sizeof(uint8_t);                    /* pst */
    b += (uint64_t)m->frames * (3 * sizeof(uint32_t) + 1);      /* slots */
    b += (uint64_t)(m->ld_mask + 1 + LD_HOT) * sizeof(struct ld_entry);
    b += (uint64_t)m->ghost_total * sizeof(uint32_t);           /* ghosts */
    b += (uint64_t)m->nsets * sizeof(struct pol_set);
    b += sizeof(*m);
    return b;
}

uint32_t cxlssd_model_lazy_arrays(const struct cxlssd_model *m,
                                  const void *p[2], uint64_t len[2])
{
    p[0] = (const void *)m->pc.pst;
    len[0] = m->pages * sizeof(*m->pc.pst);
    p[1] = (const void *)m->ld;
    len[1] = (uint64_t)(m->ld_mask + 1) * sizeof(*m->ld);
    return 2;
}

struct ftl *cxlssd_model_ftl(struct cxlssd_model *m)
{
    return m->ftl;
}
