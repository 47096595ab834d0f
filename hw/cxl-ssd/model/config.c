/*
 * cxl-ssd configuration: the property table as data, enumeration names,
 * defaults and validation: ranges, then the properties that only act
 * together with another one (the combination rules, below).  Every check
 * names the property and the allowed range or the property it needs;
 * nothing aborts.  Text parsing and help text are in props.c.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CXLSSD_DEFVAL_U32(d)        .def = (d)
#define CXLSSD_DEFVAL_TIME(d)       .def = (d)
#define CXLSSD_DEFVAL_SIZE(d)       .def = (d)
#define CXLSSD_DEFVAL_BOOL(d)       .def = (d)
#define CXLSSD_DEFVAL_STR(d)        .def_text = (d)
#define CXLSSD_DEFVAL_MODE(d)       .def = (d)
#define CXLSSD_DEFVAL_DELIVERY(d)   .def = (d)
#define CXLSSD_DEFVAL_POLICY(d)     .def = (d)
#define CXLSSD_DEFVAL_EVICTION(d)   .def = (d)

const struct cxlssd_prop cxlssd_props[] = {
#define CXLSSD_PROP(K, F, N, D, LO, HI, DESC)                              \
    {                                                                       \
        .name = N,                                                          \
        .kind = CXLSSD_PROP_##K,                                            \
        .offset = offsetof(struct cxlssd_config, F),                        \
        CXLSSD_DEFVAL_##K(D),                                               \
        .min = (LO),                                                        \
        .max = (HI),                                                        \
        .description = DESC,                                                \
    },
#include "props.def"
#undef CXLSSD_PROP
};
const size_t cxlssd_nprops = sizeof(cxlssd_props) / sizeof(cxlssd_props[0]);

const struct cxlssd_prop *cxlssd_prop_find(const char *name)
{
    for (size_t i = 0; name && i < cxlssd_nprops; i++) {
        if (strcmp(cxlssd_props[i].name, name) == 0) {
            return &cxlssd_props[i];
        }
    }
    return NULL;
}

/* ---- field access by row ---- */

uint64_t cxlssd_prop_get_num(const struct cxlssd_prop *p,
                             const struct cxlssd_config *cfg)
{
    const char *f = (const char *)cfg + p->offset;

    switch (p->kind) {
    case CXLSSD_PROP_U32:
        return *(const uint32_t *)f;
    case CXLSSD_PROP_TIME:
    case CXLSSD_PROP_SIZE:
        return *(const uint64_t *)f;
    case CXLSSD_PROP_BOOL:
        return *(const bool *)f;
    case CXLSSD_PROP_MODE:
        return (uint64_t)*(const enum cxlssd_mode *)f;
    case CXLSSD_PROP_DELIVERY:
        return (uint64_t)*(const enum cxlssd_delivery *)f;
    case CXLSSD_PROP_POLICY:
        return (uint64_t)*(const enum cxlssd_policy *)f;
    case CXLSSD_PROP_EVICTION:
        return (uint64_t)*(const enum cxlssd_eviction *)f;
    case CXLSSD_PROP_STR:
        break;
    }
    return 0;
}

void cxlssd_prop_set_num(const struct cxlssd_prop *p,
                         struct cxlssd_config *cfg, uint64_t v)
{
    char *f = (char *)cfg + p->offset;

    switch (p->kind) {
    case CXLSSD_PROP_U32:
        *(uint32_t *)f = (uint32_t)v;
        break;
    case CXLSSD_PROP_TIME:
    case CXLSSD_PROP_SIZE:
        *(uint64_t *)f = v;
        break;
    case CXLSSD_PROP_BOOL:
        *(bool *)f = v != 0;
        break;
    case CXLSSD_PROP_MODE:
        *(enum cxlssd_mode *)f = (enum cxlssd_mode)v;
        break;
    case CXLSSD_PROP_DELIVERY:
        *(enum cxlssd_delivery *)f = (enum cxlssd_delivery)v;
        break;
    case CXLSSD_PROP_POLICY:
        *(enum cxlssd_policy *)f = (enum cxlssd_policy)v;
        break;
    case CXLSSD_PROP_EVICTION:
        *(enum cxlssd_eviction *)f = (enum cxlssd_eviction)v;
        break;
    case CXLSSD_PROP_STR:
        break;
    }
}

void cxlssd_prop_mark_set(const struct cxlssd_prop *p,
                          struct cxlssd_config *cfg, bool set)
{
    size_t i = (size_t)(p - cxlssd_props);
    uint32_t bit = 1u << (i % 32);

    if (set) {
        cfg->set_bits[i / 32] |= bit;
    } else {
        cfg->set_bits[i / 32] &= ~bit;
    }
}

bool cxlssd_prop_is_set(const struct cxlssd_prop *p,
                        const struct cxlssd_config *cfg)
{
    size_t i = (size_t)(p - cxlssd_props);

    return (cfg->set_bits[i / 32] >> (i % 32)) & 1;
}

bool cxlssd_prop_has_range(const struct cxlssd_prop *p)
{
    switch (p->kind) {
    case CXLSSD_PROP_U32:
        return p->min > 0 || p->max < UINT32_MAX;
    case CXLSSD_PROP_TIME:
    case CXLSSD_PROP_SIZE:
        return p->min > 0 || p->max < UINT64_MAX;
    default:
        return false;
    }
}

/* ---- defaults and derived sizes ---- */

void cxlssd_config_defaults(struct cxlssd_config *cfg, uint64_t device_size)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->device_size = device_size;
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        cxlssd_prop_set_num(&cxlssd_props[i], cfg, cxlssd_props[i].def);
    }
}

void cxlssd_config_free_strings(struct cxlssd_config *cfg)
{
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        if (cxlssd_props[i].kind == CXLSSD_PROP_STR) {
            char **s = (char **)((char *)cfg + cxlssd_props[i].offset);
            free(*s);
            *s = NULL;
        }
    }
}

uint64_t cxlssd_config_pages(const struct cxlssd_config *cfg)
{
    return cfg->page_size ? cfg->device_size / cfg->page_size : 0;
}

uint64_t cxlssd_config_cache_frames(const struct cxlssd_config *cfg)
{
    uint64_t pages = cxlssd_config_pages(cfg);
    uint64_t frames;

    if (cfg->cache_size == 0) {
        frames = pages * CXLSSD_DEFAULT_CACHE_PCT / 100;
        if (frames == 0) {
            frames = 1;
        }
    } else {
        frames = cfg->page_size ? cfg->cache_size / cfg->page_size : 0;
    }
    return frames;
}

/* ---- validation ---- */

int cxlssd_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

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
