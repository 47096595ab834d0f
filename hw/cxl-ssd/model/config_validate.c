/*
 * cxl-ssd configuration validation (cxlssd_config_validate): the table's
 * ranges and enumeration values, capacity, cache and geometry, then the
 * properties that only act together with another one (the combination
 * rules, below).  Every check names the property and the allowed range or
 * the property it needs; nothing aborts.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/* The table's ranges and enumeration values. */
static int check_rows(const struct cxlssd_config *cfg, char *err,
                      size_t errlen)
{
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        const struct cxlssd_prop *p = &cxlssd_props[i];
        uint64_t v = cxlssd_prop_get_num(p, cfg);
        char choices[128];

        if (cxlssd_prop_is_enum(p) &&
            strcmp(cxlssd_enum_name(p->kind, (int)v), "?") == 0) {
            cxlssd_enum_choices(p->kind, choices, sizeof(choices));
            return cxlssd_fail(err, errlen,
                "%s=%" PRIu64 ": must be %s", p->name,
                v, choices);
        }
        if (cxlssd_prop_has_range(p) && (v < p->min || v > p->max)) {
            return cxlssd_fail(err, errlen,
                "%s=%" PRIu64 ": must be in %" PRIu64
                "..%" PRIu64, p->name, v, p->min, p->max);
        }
    }
    return 0;
}

static int check_capacity(const struct cxlssd_config *cfg, char *err,
                          size_t errlen)
{
    uint64_t pages = cxlssd_config_pages(cfg);

    if (cfg->page_size != 4096) {
        return cxlssd_fail(err, errlen,
            "page-size=%" PRIu32 ": must be 4096 "
            "(the host page size; residency is tracked per host page)",
            cfg->page_size);
    }
    if (cfg->device_size < 2ull * cfg->page_size) {
        return cxlssd_fail(err, errlen,
            "size=%" PRIu64 ": the device must hold at "
            "least 2 pages (%" PRIu64 " bytes)", cfg->device_size,
            (uint64_t)2 * cfg->page_size);
    }
    if (cfg->device_size % cfg->page_size) {
        return cxlssd_fail(err, errlen,
            "size=%" PRIu64 ": must be a multiple of "
            "page-size (%" PRIu32 ")", cfg->device_size,
            cfg->page_size);
    }
    if (pages > UINT32_MAX - 1) {
        return cxlssd_fail(err, errlen,
            "size=%" PRIu64 ": at most %" PRIu64
            " bytes (%" PRIu32 " pages) are supported",
            cfg->device_size,
            (uint64_t)(UINT32_MAX - 1) * cfg->page_size,
            UINT32_MAX - 1);
    }
    if (cfg->cache_size == 0) {
        return 0;
    }
    if (cfg->cache_size < cfg->page_size ||
        cfg->cache_size > cfg->device_size) {
        return cxlssd_fail(err, errlen,
            "cache-size=%" PRIu64 ": must be at "
            "least one page (%" PRIu32 ") and at most the device "
            "size (%" PRIu64 ")", cfg->cache_size,
            cfg->page_size, cfg->device_size);
    }
    if (cfg->cache_size % cfg->page_size) {
        return cxlssd_fail(err, errlen,
            "cache-size=%" PRIu64 ": must be a "
            "multiple of page-size (%" PRIu32 ")",
            cfg->cache_size, cfg->page_size);
    }
    return 0;
}

static int check_cache(const struct cxlssd_config *cfg, char *err,
                       size_t errlen)
{
    uint64_t frames = cxlssd_config_cache_frames(cfg);

    if (cfg->cache_ways != 0) {
        if (cfg->cache_ways > frames) {
            return cxlssd_fail(err, errlen,
                "cache-ways=%" PRIu32 ": must be in "
                "0..%" PRIu64 " (0 = fully associative; at most the "
                "cache frames)", cfg->cache_ways, frames);
        }
        if (frames % cfg->cache_ways) {
            return cxlssd_fail(err, errlen,
                "cache-ways=%" PRIu32 ": must divide "
                "the number of cache frames (%" PRIu64 ")",
                cfg->cache_ways, frames);
        }
    }
    if (cfg->evict_low_pct >= cfg->evict_high_pct) {
        return cxlssd_fail(err, errlen,
            "evict-low=%" PRIu32 ", evict-high=%" PRIu32
            ": evict-low must be below evict-high",
            cfg->evict_low_pct, cfg->evict_high_pct);
    }
    if (cfg->gc_low_blocks >= cfg->gc_high_blocks) {
        return cxlssd_fail(err, errlen,
            "gc-low=%" PRIu32 ", gc-high=%" PRIu32
            ": gc-low must be below gc-high", cfg->gc_low_blocks,
            cfg->gc_high_blocks);
    }
    return 0;
}

/* Same derivation as ftl_new() (see ftl.c), checked here first so the
 * message names the property. */
static int check_geometry(const struct cxlssd_config *cfg, char *err,
                          size_t errlen)
{
    uint64_t pages = cxlssd_config_pages(cfg);
    uint64_t luns = (uint64_t)cfg->channels * cfg->luns_per_channel;
    uint64_t ppb = cfg->pages_per_block;
    uint64_t data_blocks = (pages + luns * ppb - 1) / (luns * ppb);
    uint64_t min_blocks = data_blocks + cfg->gc_high_blocks + 1;
    uint64_t blocks = cfg->blocks_per_lun;

    if (blocks == 0) {
        uint64_t op_pages = (pages * (100 + (uint64_t)cfg->op_pct) + 99)
                            / 100;
        blocks = (op_pages + luns * ppb - 1) / (luns * ppb);
        if (blocks < min_blocks) {
            blocks = min_blocks;
        }
    } else if (blocks < min_blocks) {
        return cxlssd_fail(err, errlen,
            "nand-blocks=%" PRIu32 ": must be at least "
            "%" PRIu64 " (%" PRIu64 " device pages over %" PRIu64
            " LUNs x %" PRIu64 " pages per block need %" PRIu64
            " data blocks per LUN + gc-high + 1 spare), or 0 to "
            "derive it", cfg->blocks_per_lun, min_blocks, pages,
            luns, ppb, data_blocks);
    }
    if (luns * blocks * ppb >= UINT32_MAX) {
        return cxlssd_fail(err, errlen,
            "nand geometry: nand-channels=%" PRIu32
            " x nand-luns=%" PRIu32 " x nand-blocks=%" PRIu64
            " x nand-pages-per-block=%" PRIu32 " = %" PRIu64
            " physical pages; must be below %" PRIu32,
            cfg->channels, cfg->luns_per_channel, blocks,
            cfg->pages_per_block, luns * blocks * ppb, UINT32_MAX);
    }
    return 0;
}

/* ---- combinations ---- */

static bool in_uffd_mode(const struct cxlssd_config *cfg)
{
    return cfg->mode == CXLSSD_MODE_UFFD;
}

static bool in_mmio_mode(const struct cxlssd_config *cfg)
{
    return cfg->mode == CXLSSD_MODE_MMIO;
}

static bool compensating(const struct cxlssd_config *cfg)
{
    return cfg->compensate;
}

static bool recording(const struct cxlssd_config *cfg)
{
    return cfg->record_path && cfg->record_path[0];
}

static bool with_media(const struct cxlssd_config *cfg)
{
    return cfg->media_path && cfg->media_path[0];
}

static bool watermark_eviction(const struct cxlssd_config *cfg)
{
    return cfg->eviction == CXLSSD_EVICTION_BACKGROUND ||
           cfg->eviction == CXLSSD_EVICTION_BATCH;
}

static bool derived_blocks(const struct cxlssd_config *cfg)
{
    return cfg->blocks_per_lun == 0;
}

/*
 * A property that acts only when @acts holds: set by the user while it
 * does not, it would be ignored without a word, so validate refuses it.
 * @acts looks at values, so a default that satisfies it is fine (mode is
 * uffd unless set).  Accepted on purpose, though they have no effect:
 *  - eviction=background or batch (and evict-low/evict-high) in mode=mmio,
 *    which chooses victims on the miss path: the specs that sweep
 *    mode = uffd | mmio over one device (fig-policy, breakdown-fig1, the
 *    workloads' mmio boot) set it for both modes;
 *  - record-ring without record: the kernel module (kmod/) records every
 *    miss into its ring whatever record says.
 */
static const struct combination {
    enum cxlssd_prop_row row;
    bool (*acts)(const struct cxlssd_config *cfg);
    const char *needs;          /* what makes it act */
    const char *why;
} combinations[] = {
    { CXLSSD_ROW_delivery, in_uffd_mode, "mode=uffd",
      "mode=mmio serves every access in its MMIO callback, without a miss "
      "delivery" },
    { CXLSSD_ROW_handler_threads, in_uffd_mode, "mode=uffd",
      "mode=mmio has no handler threads: each vCPU serves its own "
      "accesses" },
    { CXLSSD_ROW_handler_cpus, in_uffd_mode, "mode=uffd",
      "mode=mmio has no handler threads: each vCPU serves its own "
      "accesses" },
    { CXLSSD_ROW_track_dirty, in_uffd_mode, "mode=uffd",
      "mode=mmio sees every write in its MMIO callback" },
    { CXLSSD_ROW_dram_latency_ns, in_mmio_mode, "mode=mmio",
      "in mode=uffd resident pages are mapped: their accesses never reach "
      "the device" },
    { CXLSSD_ROW_compensate_ns, compensating, "compensate=on",
      "it is a part of what compensation subtracts from each NAND "
      "wait" },
    { CXLSSD_ROW_record_ab, recording, "record=PATH",
      "it chooses which misses are written to the record file" },
    { CXLSSD_ROW_media_page_cache, with_media, "media=PATH",
      "it chooses whether the host page cache keeps the media file" },
    { CXLSSD_ROW_evict_low_pct, watermark_eviction,
      "eviction=background or batch",
      "eviction=sync has no watermarks: victims are chosen on the miss "
      "path" },
    { CXLSSD_ROW_evict_high_pct, watermark_eviction,
      "eviction=background or batch",
      "eviction=sync has no watermarks: victims are chosen on the miss "
      "path" },
    { CXLSSD_ROW_op_pct, derived_blocks, "nand-blocks=0",
      "a nonzero nand-blocks fixes the blocks per LUN; over-provisioning "
      "only derives them" },
};

static int check_combinations(const struct cxlssd_config *cfg, char *err,
                              size_t errlen)
{
    for (size_t i = 0; i < sizeof(combinations) / sizeof(combinations[0]);
         i++) {
        const struct combination *c = &combinations[i];
        const struct cxlssd_prop *p = &cxlssd_props[c->row];
        char val[64];

        if (cxlssd_prop_is_set(p, cfg) && !c->acts(cfg)) {
            cxlssd_prop_format(p, cfg, val, sizeof(val));
            return cxlssd_fail(err, errlen,
                "%s=%s: needs %s (%s); drop %s or set %s", p->name, val,
                c->needs, c->why, p->name, c->needs);
        }
    }
    return 0;
}

int cxlssd_config_validate(const struct cxlssd_config *cfg,
                           char *err, size_t errlen)
{
    if (!cfg) {
        return cxlssd_fail(err, errlen,
            "no configuration");
    }
    if (err && errlen) {
        err[0] = '\0';
    }
    if (check_rows(cfg, err, errlen) < 0 ||
        check_capacity(cfg, err, errlen) < 0 ||
        check_cache(cfg, err, errlen) < 0 ||
        check_geometry(cfg, err, errlen) < 0 ||
        check_combinations(cfg, err, errlen) < 0) {
        return -1;
    }
    return 0;
}
