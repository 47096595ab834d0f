/*
 * Replacement policies against small hand-worked traces, through the public
 * API.  Each access: cxlssd_hit() (a reported reference) if the page is
 * resident, else cxlssd_miss() + evict_done() for the victims + fill_done().
 * The expected result of each access is written out as H (hit), M (miss,
 * free frame) or a victim page number.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ftl.h"
#include "model.h"
#include "model_test.h"
#include "tap.h"

#define HIT -1
#define MISS -2     /* miss without a victim */
#define END -3

static struct cxlssd_model *mk(enum cxlssd_policy pol, uint64_t pages,
                               uint64_t frames, uint32_t ways)
{
    struct cxlssd_config cfg;
    cxlssd_config_defaults(&cfg, pages * 4096);
    cfg.cache_size = frames * 4096;
    cfg.policy = pol;
    cfg.cache_ways = ways;
    cfg.channels = 1;
    cfg.luns_per_channel = 2;
    cfg.pages_per_block = 16;
    return test_model_new(&cfg, "model_new");
}

/* One access; returns HIT, MISS or the (single) victim page. */
static int64_t access1(struct cxlssd_model *m, uint64_t page)
{
    if (cxlssd_hit(m, page, false)) {
        return HIT;
    }
    struct cxlssd_miss x;
    cxlssd_miss(m, page, false, 1000, &x);
    if (x.outcome != CXLSSD_MISS_FILL) {
        return -100 - (int64_t)x.outcome;
    }
    int64_t r = MISS;
    for (uint32_t i = 0; i < x.nvictims; i++) {
        r = (int64_t)x.victims[i].page;
        cxlssd_evict_done(m, x.victims[i].page);
    }
    cxlssd_fill_done(m, page);
    for (uint32_t i = 0; i < x.nprefetch; i++) {
        cxlssd_fill_done(m, x.prefetch[i].page);
    }
    return x.nvictims > 1 ? -200 : r;
}

static void fmt_res(char *buf, size_t len, int64_t r)
{
    if (r == HIT) {
        snprintf(buf, len, "H");
    } else if (r == MISS) {
        snprintf(buf, len, "M");
    } else {
        snprintf(buf, len, "%" PRId64, r);
    }
}

static void run_trace(const char *name, enum cxlssd_policy pol,
                      uint64_t frames, const uint64_t *trace,
                      const int64_t *expect)
{
    struct cxlssd_model *m = mk(pol, 64, frames, 0);
    if (!tap_ok(m != NULL, "%s: model created", name)) {
        return;
    }
    char got[512] = "", want[512] = "";
    bool same = true;
    for (int i = 0; expect[i] != END; i++) {
        int64_t r = access1(m, trace[i]);
        char a[24], b[24];
        fmt_res(a, sizeof(a), r);
        fmt_res(b, sizeof(b), expect[i]);
        strncat(got, a, sizeof(got) - strlen(got) - 2);
        strncat(got, " ", sizeof(got) - strlen(got) - 1);
        strncat(want, b, sizeof(want) - strlen(want) - 2);
        strncat(want, " ", sizeof(want) - strlen(want) - 1);
        same = same && r == expect[i];
    }
    tap_ok(same, "%s: trace gives [%s] (expected [%s])", name, got, want);
    struct cxlssd_stats st;
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.resident_pages == frames && st.free_frames == 0,
           "%s: cache full at the end (resident %" PRIu64 ", free %" PRIu64
           ")", name, st.resident_pages, st.free_frames);
    cxlssd_model_free(m);
}

static void test_fifo(void)
{
    /* 4 frames.  1 2 3 4 fill the free frames; queue [1 2 3 4].
     * 1: hit (FIFO ignores it).  5: evict the oldest, 1 -> [2 3 4 5].
     * 2: hit.  6: evict 2 -> [3 4 5 6].  1: evict 3 -> [4 5 6 1]. */
    static const uint64_t t[] = { 1, 2, 3, 4, 1, 5, 2, 6, 1 };
    static const int64_t e[] = { MISS, MISS, MISS, MISS, HIT, 1, HIT, 2, 3,
                                 END };
    run_trace("fifo", CXLSSD_POLICY_FIFO, 4, t, e);
}

static void test_lifo(void)
{
    /* 4 frames.  1 2 3 4 fill; order [1 2 3 4].  5: evict the newest, 4 ->
     * [1 2 3 5].  6: evict 5 -> [1 2 3 6].  1: hit.  4: evict 6 ->
     * [1 2 3 4].  2: hit.  7: evict 4. */
    static const uint64_t t[] = { 1, 2, 3, 4, 5, 6, 1, 4, 2, 7 };
    static const int64_t e[] = { MISS, MISS, MISS, MISS, 4, 5, HIT, 6, HIT,
                                 4, END };
    run_trace("lifo", CXLSSD_POLICY_LIFO, 4, t, e);
}

static void test_clock(void)
{
    /* 4 frames; slots 0..3 get 1 2 3 4 with reference bits clear, hand 0.
     * 1, 2: hits set their bits.
     * 5: hand at slot0 (1, ref) clears it; slot1 (2, ref) clears it;
     *    slot2 (3) has no bit: victim 3; 5 takes slot2; hand -> slot3.
     * 6: slot3 (4) no bit: victim 4; hand -> slot0.
     * 1: hit, sets 1's bit again.
     * 3: slot0 (1, ref) cleared; slot1 (2) no bit: victim 2.
     * (FIFO would have evicted 1, 2, 3 instead of 3, 4, 2.) */
    static const uint64_t t[] = { 1, 2, 3, 4, 1, 2, 5, 6, 1, 3 };
    static const int64_t e[] = { MISS, MISS, MISS, MISS, HIT, HIT, 3, 4, HIT,
                                 2, END };
    run_trace("clock", CXLSSD_POLICY_CLOCK, 4, t, e);
}

static void test_s3fifo(void)
{
    /* 4 frames: small queue S target 1 (10%, at least 1), main M, ghost G
     * of 3 ids (the main size).  Move-to-main threshold: 1 reference.
     *  1 2 3 4   free frames, all into S: S[1 2 3 4] M[]
     *  h1        freq(1)=1
     *  5         |S|>=1: evict from S: 1 referenced -> M (freq 0); 2 is not:
     *            victim 2, G[2].  S[3 4 5] M[1]
     *  6         S head 3: victim 3, G[2 3].  S[4 5 6]
     *  2         2 is a ghost; S head 4: victim 4, G[2 3 4]; 2 enters M.
     *            S[5 6] M[1 2]
     *  h1        freq(1)=1
     *  7         victim 5; G full: 2 falls off, G[3 4 5].  S[6 7]
     *  3         ghost: victim 6, G[4 5 6] (3 falls off); 3 enters M.
     *            S[7] M[1 2 3]
     *  8         victim 7, G[5 6 7] (4 falls off: no longer a ghost). S[8]
     *  4         not a ghost any more: into S.  Victim 8, G[6 7 8].  S[4]
     *  9         victim 4 (from S, so 4 had not gone to M).  S[9]
     *  h9        freq(9)=1
     * 10         S head 9 referenced -> M; S empty, so evict from M:
     *            M[1 2 3 9]: 1 has freq 1 -> decrement, reinsert at tail;
     *            2 has freq 0: victim 2.  S[10] M[3 9 1] */
    static const uint64_t t[] = { 1, 2, 3, 4, 1, 5, 6, 2, 1, 7, 3, 8, 4, 9,
                                  9, 10 };
    static const int64_t e[] = { MISS, MISS, MISS, MISS, HIT, 2, 3, 4, HIT,
                                 5, 6, 7, 8, 4, HIT, 2, END };
    run_trace("s3fifo", CXLSSD_POLICY_S3FIFO, 4, t, e);
}

/* A LOADING page is never a victim; with every frame LOADING a miss gets
 * MISS_EVICTING (retry) and the page stays NOT_CACHED. */
static void test_loading_not_victim(enum cxlssd_policy pol)
{
    const char *name = cxlssd_policy_name(pol);
    struct cxlssd_model *m = mk(pol, 64, 4, 0);
    struct cxlssd_miss x;
    /* LIFO would pick the newest (4), FIFO/CLOCK/S3 the oldest (1): keep
     * both LOADING, so the victim must be 2 or 3. */
    cxlssd_miss(m, 1, false, 0, &x);
    access1(m, 2);
    access1(m, 3);
    cxlssd_miss(m, 4, false, 0, &x);
    cxlssd_miss(m, 5, false, 0, &x);
    bool ok = x.outcome == CXLSSD_MISS_FILL && x.nvictims == 1 &&
              (x.victims[0].page == 2 || x.victims[0].page == 3);
    tap_ok(ok, "%s: LOADING pages 1 and 4 are skipped, victim %" PRIu64,
           name, x.nvictims ? x.victims[0].page : 0);
    cxlssd_evict_done(m, x.victims[0].page);
    uint64_t other = x.victims[0].page == 2 ? 3 : 2;
    cxlssd_miss(m, 6, false, 0, &x);
    tap_ok(x.outcome == CXLSSD_MISS_FILL && x.nvictims == 1 &&
           x.victims[0].page == other, "%s: next victim is %" PRIu64,
           name, other);
    cxlssd_evict_done(m, other);
    /* frames now: 1 4 5 6, all LOADING */
    cxlssd_miss(m, 7, false, 0, &x);
    tap_ok(x.outcome == CXLSSD_MISS_EVICTING && x.nvictims == 0 &&
           cxlssd_page_state(m, 7) == CXLSSD_NOT_CACHED,
           "%s: every frame LOADING -> retry, page stays NOT_CACHED", name);
    cxlssd_fill_done(m, 1);
    cxlssd_miss(m, 7, false, 0, &x);
    tap_ok(x.outcome == CXLSSD_MISS_FILL && x.nvictims == 1 &&
           x.victims[0].page == 1, "%s: once 1 is CACHED it is the victim",
           name);
    cxlssd_model_free(m);
}

static void test_states(void)
{
    struct cxlssd_model *m = mk(CXLSSD_POLICY_FIFO, 64, 4, 0);
    struct cxlssd_miss x, y;
    cxlssd_miss(m, 9, false, 5000, &x);
    tap_ok(x.outcome == CXLSSD_MISS_FILL &&
           cxlssd_page_state(m, 9) == CXLSSD_LOADING,
           "miss: NOT_CACHED -> LOADING, caller fills");
    cxlssd_miss(m, 9, false, 6000, &y);
    tap_ok(y.outcome == CXLSSD_MISS_LOADING && y.deadline_ns == x.deadline_ns,
           "second access waits for the same fill (same deadline)");
    tap_ok(!cxlssd_hit(m, 9, false), "hit() on a LOADING page is false");
    cxlssd_fill_done(m, 9);
    tap_ok(cxlssd_page_state(m, 9) == CXLSSD_CACHED, "fill_done: CACHED");
    cxlssd_miss(m, 9, false, 7000, &y);
    tap_ok(y.outcome == CXLSSD_MISS_RESIDENT, "duplicate fault: RESIDENT");
    struct cxlssd_stats st;
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.misses == 1 && st.loading_waits == 1,
           "one miss charged, one loading wait (%" PRIu64 ", %" PRIu64 ")",
           st.misses, st.loading_waits);
    tap_ok(cxlssd_hit(m, 9, false), "hit() on a CACHED page is true");
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.trapped_hits == 1, "trapped hit counted");
    /* fill the cache, then evict 9 */
    access1(m, 10);
    access1(m, 11);
    access1(m, 12);
    cxlssd_miss(m, 13, false, 8000, &x);
    tap_ok(x.nvictims == 1 && x.victims[0].page == 9 &&
           cxlssd_page_state(m, 9) == CXLSSD_EVICTING,
           "victim: CACHED -> EVICTING");
    cxlssd_miss(m, 9, false, 8000, &y);
    tap_ok(y.outcome == CXLSSD_MISS_EVICTING, "access to EVICTING: retry");
    cxlssd_evict_done(m, 9);
    tap_ok(cxlssd_page_state(m, 9) == CXLSSD_NOT_CACHED,
           "evict_done: NOT_CACHED");
    cxlssd_fill_done(m, 13);
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.resident_pages == 4 && st.free_frames == 0 &&
           st.evictions_clean == 1 && st.evictions_dirty == 0,
           "4 resident, 0 free, 1 clean eviction");
    cxlssd_model_reset_residency(m);
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.resident_pages == 0 && st.free_frames == 4 &&
           cxlssd_page_state(m, 13) == CXLSSD_NOT_CACHED,
           "reset_residency: everything NOT_CACHED, all frames free");
    cxlssd_miss(m, 70, false, 0, &x);
    tap_ok(x.outcome == CXLSSD_MISS_RESIDENT && x.nvictims == 0,
           "page beyond the device: nothing to load, no abort");
    cxlssd_model_free(m);
}

static void test_sets(void)
{
    /* 4 frames, 2 ways -> 2 sets; page p goes to set p % 2.  FIFO per set:
     * 0 2 fill set 0; 1 3 fill set 1; 4 evicts 0 (set 0's oldest), not 1;
     * 5 evicts 1; 6 evicts 2. */
    struct cxlssd_model *m = mk(CXLSSD_POLICY_FIFO, 64, 4, 2);
    static const uint64_t t[] = { 0, 2, 1, 3, 4, 5, 6 };
    static const int64_t e[] = { MISS, MISS, MISS, MISS, 0, 1, 2 };
    bool same = m != NULL;
    for (int i = 0; m && i < 7; i++) {
        same = same && access1(m, t[i]) == e[i];
    }
    tap_ok(same, "cache-ways=2: victims chosen within the page's set");
    cxlssd_model_free(m);
}

static void test_background(void)
{
    /* 100 frames, evict-low 2%, evict-high 5%. */
    struct cxlssd_config cfg;
    char err[256];
    cxlssd_config_defaults(&cfg, 1000 * 4096);
    cfg.cache_size = 100 * 4096;
    cfg.eviction = CXLSSD_EVICTION_BACKGROUND;
    cfg.channels = 1;
    cfg.luns_per_channel = 2;
    struct cxlssd_model *m = cxlssd_model_new(&cfg, err, sizeof(err));
    if (!tap_ok(m != NULL, "background model: %s", m ? "created" : err)) {
        return;
    }
    tap_ok(!cxlssd_evict_needed(m), "empty cache: no eviction needed");
    for (uint64_t p = 0; p < 99; p++) {
        access1(m, p);
    }
    tap_ok(cxlssd_evict_needed(m), "1 free frame < low watermark (2)");
    struct cxlssd_victim v[64];
    uint32_t n = cxlssd_evict_background(m, 0, v, 64);
    /* free 1 -> high watermark 5: 4 victims, FIFO order 0..3 */
    bool order = n == 4;
    for (uint32_t i = 0; order && i < n; i++) {
        order = v[i].page == i && !v[i].dirty &&
                cxlssd_page_state(m, i) == CXLSSD_EVICTING;
    }
    tap_ok(order, "background picks 4 victims (0..3) up to the high "
           "watermark, got %u", n);
    tap_ok(cxlssd_evict_background(m, 0, v, 64) == 0,
           "pending victims count: a second call picks none");
    for (uint32_t i = 0; i < n; i++) {
        cxlssd_evict_done(m, i);
    }
    struct cxlssd_stats st;
    cxlssd_model_get_stats(m, &st);
    tap_ok(st.free_frames == 5 && !cxlssd_evict_needed(m),
           "after evict_done: 5 free frames, none needed");
    struct cxlssd_miss x;
    cxlssd_miss(m, 500, false, 0, &x);
    tap_ok(x.outcome == CXLSSD_MISS_FILL && x.nvictims == 0,
           "miss takes a free frame, no victim on the faulting path");
    cxlssd_fill_done(m, 500);
    cxlssd_model_free(m);
}

int main(void)
{
    test_fifo();
    test_lifo();
    test_clock();
    test_s3fifo();
    for (int p = 0; p < CXLSSD_POLICY_COUNT; p++) {
        test_loading_not_victim((enum cxlssd_policy)p);
    }
    test_states();
    test_sets();
    test_background();
    return tap_done();
}
