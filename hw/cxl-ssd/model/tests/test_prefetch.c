/*
 * Next-N prefetch: a miss on page p makes p+1..p+N (those neither resident
 * nor loading) LOADING, each with its own NAND read on its own LUN (never
 * free), and counts them as issued; an access while one is still LOADING
 * is late (and used); a first reported reference after the fill is used.
 * Prefetched pages need frames too and may evict more victims.
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

static struct cxlssd_model *mk(uint32_t prefetch, uint64_t frames)
{
    struct cxlssd_config cfg;
    cxlssd_config_defaults(&cfg, 256 * 4096);
    cfg.cache_size = frames * 4096;
    cfg.prefetch = prefetch;
    cfg.channels = 4;
    cfg.luns_per_channel = 1;           /* unwritten page p: LUN p % 4 */
    cfg.pages_per_block = 16;
    cfg.t_read_ns = T_R;
    cfg.t_xfer_ns = T_X;
    cfg.precondition = true;
    return test_model_new(&cfg, "model_new");
}

static void fill_all(struct cxlssd_model *m, const struct cxlssd_miss *x)
{
    for (uint32_t i = 0; i < x->nvictims; i++) {
        cxlssd_evict_done(m, x->victims[i].page);
    }
    cxlssd_fill_done(m, x->page);
    for (uint32_t i = 0; i < x->nprefetch; i++) {
        cxlssd_fill_done(m, x->prefetch[i].page);
    }
}

int main(void)
{
    struct cxlssd_model *m = mk(4, 32);
    if (!tap_ok(m != NULL, "model created")) {
        return tap_done();
    }
    struct cxlssd_miss x, y;
    struct cxlssd_stats st;

    cxlssd_miss(m, 0, false, 0, &x);
    bool pages = x.outcome == CXLSSD_MISS_FILL && x.nprefetch == 4;
    for (uint32_t i = 0; pages && i < 4; i++) {
        pages = x.prefetch[i].page == i + 1 &&
                cxlssd_page_state(m, i + 1) == CXLSSD_LOADING;
    }
    tap_ok(pages, "miss on 0 with prefetch=4: pages 1..4 LOADING");
    bool own = true;
    for (uint32_t i = 0; i < x.nprefetch; i++) {
        own = own && x.prefetch[i].deadline_ns >= T_R + T_X;
    }
    tap_ok(own, "each prefetch has its own NAND read (deadline >= tR + "
           "xfer: %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 ")",
           x.prefetch[0].deadline_ns, x.prefetch[1].deadline_ns,
           x.prefetch[2].deadline_ns, x.prefetch[3].deadline_ns);
    tap_ok(x.prefetch[0].deadline_ns == T_R + T_X &&
           x.prefetch[2].deadline_ns == T_R + T_X,
           "pages 1 and 3 on idle LUNs 1 and 3: exactly tR + xfer");
    tap_ok(x.prefetch[3].deadline_ns > x.deadline_ns,
           "page 4 shares LUN 0 with page 0: queued behind it (%" PRIu64
           " > %" PRIu64 ")", x.prefetch[3].deadline_ns, x.deadline_ns);
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.misses == 1 && st.prefetch_issued == 4 && st.nand_reads == 5,
           "1 miss, 4 prefetches issued, 5 NAND reads");

    /* access to page 2 while its prefetch is in flight: late */
    cxlssd_miss(m, 2, false, 100, &y);
    tap_ok(y.outcome == CXLSSD_MISS_LOADING && y.prefetch_hit &&
           y.deadline_ns == x.prefetch[1].deadline_ns,
           "access to LOADING prefetched page 2: waits for its read, "
           "flagged as a prefetch hit");
    cxlssd_miss(m, 2, false, 200, &y);
    tap_ok(y.outcome == CXLSSD_MISS_LOADING && !y.prefetch_hit,
           "second access to page 2: no second prefetch hit");
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.prefetch_late == 1 && st.prefetch_used == 1 &&
           st.loading_waits == 2 && st.nand_reads == 5,
           "late 1, used 1, loading waits 2, no extra NAND read");
    fill_all(m, &x);

    tap_ok(cxlssd_hit(m, 3, false), "reference to prefetched page 3");
    cxlssd_hit(m, 3, false);
    cxlssd_miss(m, 4, false, 300, &y);
    tap_ok(y.outcome == CXLSSD_MISS_RESIDENT, "fault on prefetched page 4: "
           "RESIDENT");
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.prefetch_used == 3 && st.prefetch_late == 1 &&
           st.misses == 1,
           "used 3 (pages 2, 3, 4; repeated references count once), late 1");

    /* resident / loading pages are not prefetched again */
    cxlssd_miss(m, 12, false, 1000, &x);
    fill_all(m, &x);
    cxlssd_miss(m, 10, false, 2000, &x);
    tap_ok(x.nprefetch == 1 && x.prefetch[0].page == 11,
           "miss on 10 with 12..16 resident: only 11 prefetched");
    fill_all(m, &x);
    cxlssd_miss(m, 253, false, 3000, &x);
    tap_ok(x.nprefetch == 2 && x.prefetch[1].page == 255,
           "prefetch stops at the end of the device");
    fill_all(m, &x);
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.prefetch_issued == 4 + 4 + 1 + 2, "issued 11");
    cxlssd_model_free(m);

    /* prefetches need frames: 4 frames, prefetch 4 */
    m = mk(4, 4);
    cxlssd_miss(m, 0, false, 0, &x);
    tap_ok(x.nprefetch == 3 && x.nvictims == 0,
           "4 frames: miss + 3 prefetches fill them; no CACHED victim for a "
           "4th");
    fill_all(m, &x);
    cxlssd_miss(m, 20, false, 10000, &x);
    bool v = x.nvictims == 4;
    for (uint32_t i = 0; v && i < 4; i++) {
        v = x.victims[i].page == i;
    }
    tap_ok(v && x.nprefetch == 3,
           "miss on 20 evicts 0..3 for itself and prefetches 21..23 (%u "
           "victims, %u prefetches)", x.nvictims, x.nprefetch);
    fill_all(m, &x);
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.prefetch_used == 0 && st.prefetch_issued == 6,
           "evicted unused prefetches are not counted as used");
    cxlssd_model_free(m);

    /* prefetch off */
    m = mk(0, 8);
    cxlssd_miss(m, 0, false, 0, &x);
    tap_ok(x.nprefetch == 0, "prefetch=0: no prefetch");
    cxlssd_model_free(m);
    return tap_done();
}
