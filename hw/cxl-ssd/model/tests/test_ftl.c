/*
 * FTL tests (TAP).  Timing at defaults: read 6200 ns, program 103200 ns.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "ftl.h"
#include "nand.h"
#include "nand_test_config.h"
#include "tap.h"

/* The hand-filled defaults for a device of @pages 4 KiB pages. */
static void defaults(struct cxlssd_config *c, uint64_t pages)
{
    nand_test_config(c, pages * 4096);
}

/* An FTL over 4096 pages on @channels x @luns LUNs of @ppb-page blocks,
 * the rest at the defaults (*@c gets the configuration). */
static struct ftl *small_ftl(struct cxlssd_config *c, uint32_t channels,
                             uint32_t luns, uint32_t ppb, char *err,
                             size_t errlen)
{
    defaults(c, 4096);
    c->channels = channels;
    c->luns_per_channel = luns;
    c->pages_per_block = ppb;
    return ftl_new(c, err, errlen);
}

/* Decode a ppa with a scratch nand of the same geometry. */
static uint32_t lun_of(const struct cxlssd_config *c, uint32_t bpl,
                       cxlssd_ppa p)
{
    return p / (bpl * c->pages_per_block);
}

static uint32_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 11);
}

/* No two lpns share a ppa; every written lpn is mapped, no other. */
static int map_sane(struct ftl *f, uint64_t pages, const uint8_t *written,
                    uint64_t phys)
{
    uint8_t *seen = calloc(phys, 1);
    int bad = 0;
    for (uint64_t l = 0; l < pages; l++) {
        cxlssd_ppa p = ftl_lookup(f, l);
        if ((p != UINT32_MAX) != (written[l] != 0)) {
            bad++;
        } else if (p != UINT32_MAX) {
            if (p >= phys || seen[p]) {
                bad++;
            } else {
                seen[p] = 1;
            }
        }
    }
    free(seen);
    return bad;
}

struct thr {
    struct ftl *f;
    uint64_t pages;
    uint64_t seed;
};

/* Non-zero entries of a saved p2l region (lpn + 1 each; 0 = none). */
static uint64_t p2l_entries(const struct ftl_region *r)
{
    const uint32_t *e = r->ptr;
    uint64_t n = 0;
    for (uint64_t i = 0; i < r->len / sizeof(*e); i++) {
        n += e[i] != 0;
    }
    return n;
}

static void *worker(void *arg)
{
    struct thr *t = arg;
    uint64_t now = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t lpn = rnd(&t->seed) % t->pages;
        now += 1000;
        if (i % 3 == 0) {
            ftl_write(t->f, lpn, now);
        } else {
            ftl_read(t->f, lpn, now);
        }
    }
    return NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
    struct cxlssd_config cfg;
    char err[512];
    struct ftl_stats st;

    /* --- defaults, 64 MiB (16384 pages) --- */
    defaults(&cfg, 16384);
    struct ftl *f = ftl_new(&cfg, err, sizeof(err));
    tap_ok(f != NULL, "ftl_new at defaults");
    if (!f) {
        printf("# %s\n", err);
        return 1;
    }
    tap_eq(ftl_channels(f), 8, "ftl_channels");
    tap_eq(ftl_read(f, 42, 1000), 1000,
           "unwritten page: zero page, no NAND time");
    tap_eq(ftl_lookup(f, 42), UINT32_MAX, "unwritten page is unmapped");
    tap_eq(ftl_write(f, 42, 0), 103200, "first write: xfer + tPROG = 103200");
    cxlssd_ppa p42 = ftl_lookup(f, 42);
    tap_ok(p42 != UINT32_MAX, "written page is mapped");
    /* Its LUN is busy until 103200: tR to 106200, transfer to 109400. */
    tap_eq(ftl_read(f, 42, 0), 109400,
           "read goes to the written LUN (waits for its program): 109400");
    tap_eq(ftl_read(f, 42, 200000), 206200, "read on an idle LUN: 6200");
    {
        int chans[8] = {0}, distinct = 1;
        /* bpl: 16384 pages / (128 * 256) -> 1 data block + 5 spare */
        for (uint64_t l = 100; l < 108; l++) {
            ftl_write(f, l, 1000000);
            uint32_t lun = lun_of(&cfg, 6, ftl_lookup(f, l));
            if (chans[lun % 8]++) {
                distinct = 0;
            }
        }
        tap_ok(distinct, "8 consecutive writes land on 8 different channels");
        uint8_t used[128] = {0};
        int luns_ok = 1;
        for (uint64_t l = 200; l < 328; l++) {
            ftl_write(f, l, 2000000);
            uint32_t lun = lun_of(&cfg, 6, ftl_lookup(f, l));
            if (lun >= 128 || used[lun]++) {
                luns_ok = 0;
            }
        }
        tap_ok(luns_ok, "128 consecutive writes land on 128 different LUNs");
    }
    ftl_get_stats(f, &st);
    tap_eq(st.zero_page_reads, 1, "zero-page reads counted");
    tap_eq(st.host_writes, 1 + 8 + 128, "host writes counted");
    tap_ok(ftl_check(f) == 0, "ftl_check after basic writes");
    ftl_free(f);

    cfg.precondition = true;
    f = ftl_new(&cfg, err, sizeof(err));
    tap_eq(ftl_read(f, 42, 1000), 7200,
           "precondition: unwritten page costs a read: 1000 + 6200");
    tap_eq(ftl_lookup(f, 42), UINT32_MAX,
           "precondition read creates no mapping");
    ftl_free(f);
    cfg.precondition = false;

    /* --- nand-blocks validation: 16384 pages / (128 LUNs * 256) = 1 data
     * block per LUN, + gc-high 4 + 1 = 6 minimum --- */
    cfg.blocks_per_lun = 5;
    f = ftl_new(&cfg, err, sizeof(err));
    tap_ok(f == NULL && strstr(err, "nand-blocks") && strstr(err, "at least 6"),
           "ftl_new rejects nand-blocks=5 naming the property and minimum 6");
    printf("# %s\n", err);
    ftl_free(f);
    cfg.blocks_per_lun = 6;
    f = ftl_new(&cfg, err, sizeof(err));
    tap_ok(f != NULL, "nand-blocks=6 accepted");
    ftl_free(f);

    /* --- project defaults from config.c, 1 GiB --- */
    cxlssd_config_defaults(&cfg, 1ull << 30);
    cfg.precondition = false;
    f = ftl_new(&cfg, err, sizeof(err));
    tap_ok(f != NULL && ftl_write(f, 1, 0) == 103200 &&
           ftl_read(f, 1, 200000) == 206200 && ftl_read(f, 2, 5) == 5,
           "cxlssd_config_defaults(): write 103200, read 6200, zero page 0");
    ftl_free(f);

    /* --- metadata at 1 Mi pages (4 GiB) --- */
    defaults(&cfg, 1u << 20);
    f = ftl_new(&cfg, err, sizeof(err));
    double bpp = (double)ftl_metadata_bytes(f) / (double)(1u << 20);
    printf("# 1 Mi pages at defaults: %" PRIu64 " B of FTL metadata, "
           "%.3f B per logical page\n", ftl_metadata_bytes(f), bpp);
    tap_ok(bpp <= 9.0, "FTL metadata <= 9 B per logical page at 1 Mi pages");
    {
        /* ftl_read cost on a mapped page (host-side ns per call). */
        for (uint64_t l = 0; l < 4096; l++) {
            ftl_write(f, l, 0);
        }
        uint64_t t0 = mono_ns(), sink = 0;
        const int iters = 2000000;
        for (int i = 0; i < iters; i++) {
            sink += ftl_read(f, (uint64_t)(i * 7) & 4095, t0 + (uint64_t)i * 1000);
        }
        uint64_t t1 = mono_ns();
        printf("# ftl_read: %.1f ns per call (mapped pages; sink %" PRIu64
               ")\n", (double)(t1 - t0) / iters, sink & 1);
    }
    ftl_free(f);

    /* --- GC time: small device 4096 pages, 4 channels x 1 LUN, 16 pages
     * per block -> 64 data blocks per LUN, 7% OP -> 69 blocks --- */
    f = small_ftl(&cfg, 4, 1, 16, err, sizeof(err));
    tap_ok(f != NULL, "small GC device");
    {
        /* Writes spaced far apart, so the NAND is idle at each issue. */
        uint64_t now = 0, plain = 0, gc_lat = 0;
        uint64_t s = 7;
        for (int i = 0; i < 3 * 4096 && !gc_lat; i++) {
            now += 100000000;   /* 100 ms */
            uint64_t before = 0;
            ftl_get_stats(f, &st);
            before = st.gc_runs;
            uint64_t d = ftl_write(f, rnd(&s) % 4096, now) - now;
            ftl_get_stats(f, &st);
            if (st.gc_runs == before) {
                plain = d;
            } else {
                gc_lat = d;
            }
        }
        tap_eq(plain, 103200, "write without GC: 103200");
        tap_ok(gc_lat > plain + cfg.t_erase_ns,
               "a write that triggers GC completes after the GC (> +tBERS)");
        printf("# write that triggered GC: %" PRIu64 " ns\n", gc_lat);
    }
    ftl_free(f);

    /* --- GC stress: fill, then random overwrites of 3x capacity --- */
    f = ftl_new(&cfg, err, sizeof(err));
    {
        const uint64_t pages = 4096, phys = 4 * 69 * 16;
        uint8_t *written = calloc(pages, 1);
        uint64_t s = 99, now = 0;
        int fresh = 1;
        for (uint64_t l = 0; l < pages; l++) {
            ftl_write(f, l, now += 1000);
            written[l] = 1;
        }
        /* the reverse map is built by the first GC only */
        struct ftl_region rg[FTL_REGIONS];
        ftl_state_regions(f, rg);
        ftl_get_stats(f, &st);
        tap_ok(st.gc_runs == 0 && p2l_entries(&rg[6]) == 0 &&
               ftl_check(f) == 0,
               "before any GC: p2l not built (all zero), ftl_check passes");
        for (uint64_t i = 0; i < 3 * pages; i++) {
            uint64_t l = rnd(&s) % pages;
            cxlssd_ppa old = ftl_lookup(f, l);
            uint64_t d = ftl_write(f, l, now += 1000);
            cxlssd_ppa p = ftl_lookup(f, l);
            if (p == UINT32_MAX || p == old || d <= now) {
                fresh = 0;
            }
        }
        tap_ok(fresh, "every overwrite got a new location and NAND time");
        tap_ok(map_sane(f, pages, written, phys) == 0,
               "every lpn mapped, no two lpns share a ppa");
        tap_ok(ftl_check(f) == 0, "ftl_check after random overwrites");
        ftl_state_regions(f, rg);
        tap_eq(p2l_entries(&rg[6]), pages,
               "after GC: p2l built, one entry per mapped page");
        {
            /* a restored copy keeps the built reverse map (and GC works) */
            struct ftl *g = ftl_new(&cfg, err, sizeof(err));
            struct ftl_region rg2[FTL_REGIONS];
            ftl_state_regions(g, rg2);
            for (int i = 0; i < FTL_REGIONS; i++) {
                memcpy(rg2[i].ptr, rg[i].ptr, rg[i].len);
            }
            int loaded = ftl_state_loaded(g);
            for (uint64_t i = 0; i < pages; i++) {
                ftl_write(g, rnd(&s) % pages, now + i * 1000);
            }
            struct ftl_stats gs;
            ftl_get_stats(g, &gs);
            const struct ftl_saved *sv = rg[0].ptr;
            tap_ok(loaded == 0 && sv->st.gc_runs > 0 &&
                   gs.gc_runs > sv->st.gc_runs &&
                   ftl_check(g) == 0,
                   "restored after GC: state loads, GC continues, consistent");
            ftl_free(g);
        }
        ftl_get_stats(f, &st);
        double waf = ftl_waf(f);
        printf("# random 3x overwrite, 7%% OP: WAF %.3f, gc_runs %" PRIu64
               ", moved %" PRIu64 ", erases %" PRIu64 "\n", waf, st.gc_runs,
               st.gc_pages_moved, st.erases);
        tap_ok(waf > 1.0 && st.gc_runs > 0 && st.erases == st.gc_runs &&
               st.nand_writes == st.host_writes + st.gc_pages_moved,
               "WAF > 1 and GC statistics consistent");

        /* Skewed: always overwrite pages that are NOT on LUN 0, so LUN 0
         * fills up with valid data and writes must skip it. */
        int fresh2 = 1;
        for (uint64_t i = 0; i < 3 * pages; i++) {
            uint64_t l;
            do {
                l = rnd(&s) % pages;
            } while (lun_of(&cfg, 69, ftl_lookup(f, l)) == 0);
            cxlssd_ppa old = ftl_lookup(f, l);
            ftl_write(f, l, now += 1000);
            cxlssd_ppa p = ftl_lookup(f, l);
            if (p == UINT32_MAX || p == old) {
                fresh2 = 0;
            }
        }
        uint64_t on0 = 0;
        for (uint64_t l = 0; l < pages; l++) {
            on0 += lun_of(&cfg, 69, ftl_lookup(f, l)) == 0;
        }
        printf("# skewed overwrites: %" PRIu64 " of %" PRIu64
               " pages on LUN 0 (capacity %d), WAF %.3f\n", on0, pages,
               69 * 16, ftl_waf(f));
        tap_ok(fresh2 && ftl_check(f) == 0 &&
               map_sane(f, pages, written, phys) == 0,
               "a LUN full of valid data is skipped; writes never fail");
        free(written);
    }
    ftl_free(f);

    /* --- concurrency (meaningful under -fsanitize=thread) --- */
    f = small_ftl(&cfg, 2, 2, 8, err, sizeof(err));
    {
        pthread_t th[2];
        struct thr a[2] = {{f, 4096, 1}, {f, 4096, 2}};
        for (int i = 0; i < 2; i++) {
            pthread_create(&th[i], NULL, worker, &a[i]);
        }
        for (int i = 0; i < 2; i++) {
            pthread_join(th[i], NULL);
        }
        ftl_get_stats(f, &st);
        tap_ok(ftl_check(f) == 0 && st.host_writes > 0 && st.gc_runs > 0,
               "two threads reading and writing: consistent, GC ran");
        uint64_t busy = 0;
        for (uint32_t c = 0; c < ftl_channels(f); c++) {
            busy += ftl_channel_busy_ns(f, c);
        }
        tap_eq(busy, (st.reads + st.nand_writes) * cfg.t_xfer_ns,
               "channel busy = (reads + programs) x transfer time");
    }
    ftl_free(f);

    return tap_done();
}
