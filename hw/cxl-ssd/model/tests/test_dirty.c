/*
 * Dirty state: a write miss marks the page dirty; evicting a dirty page
 * charges a NAND program (transfer + tPROG) on the LUN the FTL writes it to
 * (a read issued there right after is delayed by >= tPROG) and updates the
 * FTL map; a clean eviction costs no NAND time.  Times are explicit
 * now_ns values, so every deadline is exact.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "config.h"
#include "ftl.h"
#include "model.h"
#include "model_test.h"
#include "tap.h"

#define T_R 3000
#define T_X 3200
#define T_P 100000
#define BLOCKS 16
#define PPB 16

static struct cxlssd_model *mk(void)
{
    struct cxlssd_config cfg;
    cxlssd_config_defaults(&cfg, 256 * 4096);
    cfg.cache_size = 2 * 4096;          /* 2 frames, FIFO */
    cfg.channels = 2;
    cfg.luns_per_channel = 1;           /* LUN l is on channel l */
    cfg.blocks_per_lun = BLOCKS;
    cfg.pages_per_block = PPB;
    cfg.t_read_ns = T_R;
    cfg.t_xfer_ns = T_X;
    cfg.t_prog_ns = T_P;
    cfg.precondition = true;            /* unwritten page p: LUN p % 2 */
    return test_model_new(&cfg, "model_new");
}

static uint32_t lun_of_written(struct cxlssd_model *m, uint64_t lpn)
{
    cxlssd_ppa ppa = ftl_lookup(cxlssd_model_ftl(m), lpn);
    return ppa == UINT32_MAX ? UINT32_MAX : ppa / (BLOCKS * PPB);
}

int main(void)
{
    struct cxlssd_model *m = mk();
    if (!tap_ok(m != NULL, "model created")) {
        return tap_done();
    }
    struct cxlssd_miss x;
    struct cxlssd_stats st;
    const uint64_t t1 = 1000000, t2 = 2000000, t3 = 3000000;

    /* 1. write miss on page 0 (LUN 0) */
    cxlssd_miss(m, 0, true, 0, &x);
    tap_ok(x.outcome == CXLSSD_MISS_FILL && x.deadline_ns == T_R + T_X,
           "write miss: fill, deadline tR + xfer = %d (got %" PRIu64 ")",
           T_R + T_X, x.deadline_ns);
    tap_ok(cxlssd_page_dirty(m, 0), "write miss marks the page dirty");
    cxlssd_fill_done(m, 0);
    tap_ok(cxlssd_page_dirty(m, 0), "still dirty once CACHED");

    /* 2. read miss on page 1 (LUN 1): clean */
    cxlssd_miss(m, 1, false, t1, &x);
    cxlssd_fill_done(m, 1);
    tap_ok(!cxlssd_page_dirty(m, 1), "read miss leaves the page clean");

    /* 3. page 2 (LUN 0) evicts page 0 (FIFO): dirty writeback */
    cxlssd_miss(m, 2, false, t2, &x);
    tap_ok(x.nvictims == 1 && x.victims[0].page == 0 && x.victims[0].dirty,
           "victim 0 reported dirty");
    tap_ok(x.deadline_ns == t2 + T_R + T_X,
           "the demand read is issued before the writeback (deadline "
           "t + %d, got +%" PRIu64 ")", T_R + T_X, x.deadline_ns - t2);
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.evictions_dirty == 1 && st.evictions_clean == 0 &&
           st.host_writes == 1, "one dirty eviction, one host write");
    uint32_t lun = lun_of_written(m, 0);
    tap_ok(lun < 2, "FTL now maps page 0 (to LUN %u)", lun);
    cxlssd_evict_done(m, 0);
    cxlssd_fill_done(m, 2);
    tap_ok(!cxlssd_page_dirty(m, 0) &&
           cxlssd_page_state(m, 0) == CXLSSD_NOT_CACHED,
           "evicted page is NOT_CACHED and clean");

    /* 4. at the same instant, read an unwritten page on that LUN: it queues
     * behind the program.  Its victim (page 1) is clean. */
    uint64_t q = 4 + lun;               /* q % 2 == lun */
    cxlssd_miss(m, q, false, t2, &x);
    tap_ok(x.nvictims == 1 && x.victims[0].page == 1 && !x.victims[0].dirty,
           "victim 1 is clean");
    tap_ok(x.deadline_ns >= t2 + T_P + T_R + T_X,
           "read on the programmed LUN %u delayed by the writeback: +%"
           PRIu64 " ns >= tPROG + tR + xfer", lun, x.deadline_ns - t2);
    cxlssd_evict_done(m, 1);
    cxlssd_fill_done(m, q);

    /* 5. the other LUN was not charged anything by the writeback */
    uint64_t r = 6 + (1 - lun);
    cxlssd_miss(m, r, false, t2, &x);
    tap_ok(x.nvictims == 1 && x.victims[0].page == 2 && !x.victims[0].dirty,
           "victim 2 is clean");
    uint64_t other_extra = x.deadline_ns - t2;
    cxlssd_evict_done(m, 2);
    cxlssd_fill_done(m, r);
    /* LUN 1-lun saw only page 1's read at t1 and, if lun == 1, page 2's
     * read ... page 2 is on LUN 0: if 1-lun == 0, page 2's read at t2 is
     * still in flight, so allow that one read. */
    uint64_t allowed = (1 - lun) == 0 ? 2 * (T_R + T_X) : T_R + T_X;
    tap_ok(other_extra <= allowed,
           "other LUN: +%" PRIu64 " ns, no program charged (<= %" PRIu64 ")",
           other_extra, allowed);

    /* 6. clean evictions cost nothing: at t3 every LUN is idle again */
    cxlssd_miss(m, 8, false, t3, &x);   /* evicts q (clean) */
    tap_ok(x.nvictims == 1 && !x.victims[0].dirty &&
           x.deadline_ns == t3 + T_R + T_X,
           "clean eviction: the next read costs exactly tR + xfer");
    cxlssd_evict_done(m, x.victims[0].page);
    cxlssd_fill_done(m, 8);
    cxlssd_miss(m, 9, false, t3, &x);   /* evicts r (clean), LUN 1 */
    tap_ok(x.nvictims == 1 && !x.victims[0].dirty &&
           x.deadline_ns == t3 + T_R + T_X,
           "clean eviction on LUN 1 too: exactly tR + xfer");
    cxlssd_evict_done(m, x.victims[0].page);
    cxlssd_fill_done(m, 9);
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.evictions_dirty == 1 && st.evictions_clean == 4 &&
           st.host_writes == 1 && st.nand_writes == 1,
           "totals: 1 dirty + 4 clean evictions, 1 NAND program");

    /* 7. first write to a resident clean page: mark_dirty / hit(write) */
    tap_ok(!cxlssd_page_dirty(m, 8), "page 8 clean");
    cxlssd_mark_dirty(m, 8);
    tap_ok(cxlssd_page_dirty(m, 8), "mark_dirty (write-protect fault) sets "
           "dirty");
    cxlssd_mark_dirty(m, 8);
    tap_ok(cxlssd_hit(m, 9, true) && cxlssd_page_dirty(m, 9),
           "hit(write) sets dirty");
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.write_hits == 2, "write_hits counts first writes only (%"
           PRIu64 ")", st.write_hits);
    cxlssd_mark_dirty(m, 100);
    tap_ok(!cxlssd_page_dirty(m, 100), "mark_dirty on a non-resident page "
           "is ignored");

    /* 8. both dirty: the next two misses write both back */
    cxlssd_miss(m, 10, false, 4000000, &x);
    bool d1 = x.nvictims == 1 && x.victims[0].dirty;
    cxlssd_evict_done(m, x.victims[0].page);
    cxlssd_fill_done(m, 10);
    cxlssd_miss(m, 11, false, 4000000, &x);
    bool d2 = x.nvictims == 1 && x.victims[0].dirty;
    cxlssd_evict_done(m, x.victims[0].page);
    cxlssd_fill_done(m, 11);
    cxlssd_model_get_stats(m, &st);
    tap_ok(d1 && d2 && st.evictions_dirty == 3 && st.host_writes == 3,
           "dirty pages written back on eviction (3 host writes)");
    uint64_t busy = 0;
    for (uint32_t c = 0; c < st.channels; c++) {
        busy += st.channel_busy_ns[c];
    }
    tap_ok(st.channels == 2 && busy > 0, "channel busy time reported (%"
           PRIu64 " ns over %u channels)", busy, st.channels);

    /* 9. mark_dirty_resident: only while CACHED (a victim stays clean) */
    tap_ok(cxlssd_mark_dirty_resident(m, 11) && cxlssd_page_dirty(m, 11),
           "mark_dirty_resident sets dirty on a resident page");
    tap_ok(!cxlssd_mark_dirty_resident(m, 100) &&
           !cxlssd_page_dirty(m, 100),
           "mark_dirty_resident refuses a non-resident page");
    cxlssd_miss(m, 12, false, 5000000, &x);
    uint64_t vp = x.nvictims == 1 ? x.victims[0].page : UINT64_MAX;
    bool was_dirty = x.nvictims == 1 && x.victims[0].dirty;
    tap_ok(x.nvictims == 1 &&
           cxlssd_page_state(m, vp) == CXLSSD_EVICTING &&
           !cxlssd_mark_dirty_resident(m, vp) &&
           cxlssd_page_dirty(m, vp) == was_dirty,
           "mark_dirty_resident refuses a victim being evicted (page %"
           PRIu64 "), its dirty bit unchanged", vp);
    if (x.nvictims == 1) {
        cxlssd_evict_done(m, vp);
    }
    cxlssd_fill_done(m, 12);
    tap_ok(ftl_check(cxlssd_model_ftl(m)) == 0, "FTL consistent");
    cxlssd_model_free(m);
    return tap_done();
}
