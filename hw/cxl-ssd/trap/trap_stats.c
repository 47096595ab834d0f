/*
 * cxl-ssd trap engine statistics (cxlssd_trap_get_stats): the trap's own
 * counters, the miss service's, the media store's and the record ring's,
 * in one struct cxlssd_trap_stats.
 */
#include <string.h>

#include "trap_int.h"

void cxlssd_trap_stats_set_media(struct cxlssd_trap_stats *out,
                                 const struct cxlssd_media_stats *ms,
                                 uint64_t metadata_bytes)
{
    out->media_fills = ms->fills;
    out->media_zero_fills = ms->zero_fills;
    out->media_writebacks = ms->writebacks;
    out->media_writeback_errors = ms->writeback_errors;
    out->media_stuck_pages = ms->stuck_pages;
    out->media_touched_pages = ms->touched_pages;
    out->media_file_allocated_bytes = ms->file_allocated_bytes;
    out->media_restored = ms->restored;
    out->media_recovered = ms->recovered;
    out->media_cache_recovered = ms->cache_recovered;
    out->media_cache_lost = ms->cache_lost;
    out->metadata_bytes = metadata_bytes;
    if (ms->touched_pages) {
        out->metadata_bytes_per_touched_page =
            (metadata_bytes + ms->touched_pages / 2) / ms->touched_pages;
    }
}

void cxlssd_trap_get_stats(struct cxlssd_trap *t, struct cxlssd_trap_stats *out)
{
    struct cxlssd_miss_service_stats ss;
    cxlssd_miss_service_get_stats(t->svc, &ss);
    memset(out, 0, sizeof(*out));
    out->faults = atomic_load(&t->st_faults);
    out->wp_faults = atomic_load(&t->st_wp_faults);
    out->duplicate_faults = atomic_load(&t->st_duplicate) +
                            ss.duplicate_faults;
    out->wakes = atomic_load(&t->st_wakes);
    out->madvise_calls = atomic_load(&t->st_madvise);
    out->pages_unmapped = atomic_load(&t->st_unmapped);
    out->bql_wait_ns = ss.serialize_wait_ns;
    out->sigbus_faults = atomic_load(&t->st_sigbus);
    out->tlb_fill_misses = atomic_load(&t->st_tlb_fill);
    out->host_route_misses = atomic_load(&t->st_host_route);
    out->tlb_invalidations = atomic_load(&t->st_tlb_inval);
    out->victims_kept_mapped = atomic_load(&t->st_kept_mapped);
    out->remaps = ss.remaps;
    out->unclocked_misses = ss.unclocked_misses;
    out->late_waits = ss.late_waits;
    struct cxlssd_media_stats ms;
    if (cxlssd_trap_media_stats(t, &ms)) {
        cxlssd_trap_stats_set_media(out, &ms, cxlssd_trap_metadata_bytes(t));
    }
    if (t->ring) {
        cxlssd_record_writer_sync(t->rec_writer);
        out->records_written = cxlssd_record_written(t->ring);
        out->records_dropped = cxlssd_record_dropped(t->ring);
    }
}
