/*
 * Miss ratios of the model's cache policies (model.h, policy_*.c) on
 * independent-reference Zipf traces, against the reference simulations
 * of cache_ref.c on the same trace, and for FIFO against Che's
 * approximation.
 *
 * The model is driven as the mmio path drives it: an access to a CACHED
 * page is cxlssd_hit(), any other a cxlssd_miss() whose fill completes at
 * once (victims unmapped with cxlssd_evict_done(), then
 * cxlssd_fill_done()).  Fully associative, no prefetch, synchronous
 * eviction: the defaults.
 */
#include "validate.h"

#include <stdio.h>
#include <stdlib.h>

#include "cache_ref.h"
#include "config.h"
#include "model.h"
#include "rng.h"
#include "zipf.h"

struct cache_case {
    uint32_t pages, frames;
    double s;                   /* Zipf exponent */
    uint64_t warm, accesses;    /* trace length, warm-up included */
};

static int64_t model_misses(enum cxlssd_policy policy, const uint32_t *trace,
                            const struct cache_case *c)
{
    struct cxlssd_config cfg;
    cxlssd_config_defaults(&cfg, (uint64_t)c->pages * 4096);
    cfg.cache_size = (uint64_t)c->frames * 4096;
    cfg.policy = policy;
    char err[512];
    struct cxlssd_model *m = cxlssd_model_new(&cfg, err, sizeof(err));
    struct cxlssd_miss *out = malloc(sizeof(*out));
    if (!m || !out) {
        fprintf(stderr, "validate: %s\n", m ? "out of memory" : err);
        exit(2);
    }
    int64_t misses = 0;
    for (uint64_t i = 0; i < c->accesses; i++) {
        uint32_t page = trace[i];
        if (cxlssd_page_state(m, page) == CXLSSD_CACHED) {
            cxlssd_hit(m, page, false);
            continue;
        }
        cxlssd_miss(m, page, false, 0, out);
        if (out->outcome != CXLSSD_MISS_FILL) {
            misses = -1;        /* impossible with one thread */
            break;
        }
        for (uint32_t v = 0; v < out->nvictims; v++) {
            cxlssd_evict_done(m, out->victims[v].page);
        }
        cxlssd_fill_done(m, page);
        misses += i >= c->warm;
    }
    free(out);
    cxlssd_model_free(m);
    return misses;
}

static void run_case(struct vlist *l, const struct cache_case *c,
                     uint64_t seed)
{
    double t_start = validate_now_s();
    struct rng g = { seed };
    struct zipf z;
    uint32_t *trace = malloc(c->accesses * sizeof(*trace));
    if (!trace || zipf_init(&z, c->pages, c->s, &g) < 0) {
        fprintf(stderr, "validate: out of memory\n");
        exit(2);
    }
    for (uint64_t i = 0; i < c->accesses; i++) {
        trace[i] = zipf_sample(&z, &g);
    }
    double measured = (double)(c->accesses - c->warm);
    for (int p = 0; p < CXLSSD_POLICY_COUNT; p++) {
        int64_t mm = model_misses(p, trace, c);
        int64_t rm = ref_cache_misses(p, trace, c->accesses, c->warm,
                                      c->pages, c->frames);
        if (rm < 0) {
            fprintf(stderr, "validate: out of memory\n");
            exit(2);
        }
        vlist_add(l, VCASE_BOTH, 0.01, mm / measured, rm / measured,
                  "reference-sim", "", "cache %s zipf s=%.1f %u/%u miss",
                  cxlssd_policy_name(p), c->s, c->frames, c->pages);
        if (p == CXLSSD_POLICY_FIFO) {
            vlist_add(l, VCASE_BOTH, 0.02, mm / measured,
                      che_fifo_miss_ratio(z.p, z.n, c->frames), "che-fifo",
                      "", "cache %s zipf s=%.1f %u/%u miss",
                      cxlssd_policy_name(p), c->s, c->frames, c->pages);
        }
    }
    vlist_note(l, "cache zipf s=%.1f %u/%u: %u frames over %u pages, "
               "%llu accesses after a warm-up of %llu", c->s, c->frames,
               c->pages, c->frames, c->pages,
               (unsigned long long)(c->accesses - c->warm),
               (unsigned long long)c->warm);
    zipf_free(&z);
    free(trace);
    fprintf(stderr, "validate: cache zipf s=%.1f %u/%u %.1f s\n", c->s,
            c->frames, c->pages, validate_now_s() - t_start);
}

void validate_cache(struct vlist *l, enum vlevel level)
{
    static const struct cache_case full[] = {
        { 65536, 1024, 0.8, 1000000, 5000000 },
        { 65536, 8192, 0.8, 1000000, 5000000 },
        { 65536, 1024, 1.0, 1000000, 5000000 },
        { 65536, 8192, 1.0, 1000000, 5000000 },
    };
    static const struct cache_case quick[] = {
        { 16384, 512, 0.9, 200000, 1000000 },
        { 16384, 2048, 0.9, 200000, 1000000 },
    };
    const struct cache_case *cs = level == VALIDATE_FULL ? full : quick;
    size_t n = level == VALIDATE_FULL ? sizeof(full) / sizeof(full[0])
                                      : sizeof(quick) / sizeof(quick[0]);
    for (size_t i = 0; i < n; i++) {
        run_case(l, &cs[i], 100 + i);
    }
}
