/*
 * cxl-ssd model configuration: defaults, validation, text parsing, help.
 * Every check names the property and the allowed range; nothing aborts.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KiB ((uint64_t)1024)
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

#define TIME_MAX_NS 10000000000ull   /* 10 s */

static const char *const policy_names[CXLSSD_POLICY_COUNT] = {
    [CXLSSD_POLICY_FIFO] = "fifo",
    [CXLSSD_POLICY_LIFO] = "lifo",
    [CXLSSD_POLICY_CLOCK] = "clock",
    [CXLSSD_POLICY_S3FIFO] = "s3fifo",
};

static const char *const eviction_names[CXLSSD_EVICTION_COUNT] = {
    [CXLSSD_EVICTION_SYNC] = "sync",
    [CXLSSD_EVICTION_BACKGROUND] = "background",
};

const char *cxlssd_policy_name(enum cxlssd_policy p)
{
    return (unsigned)p < CXLSSD_POLICY_COUNT ? policy_names[p] : "?";
}

int cxlssd_policy_from_name(const char *name, enum cxlssd_policy *out)
{
    for (int i = 0; i < CXLSSD_POLICY_COUNT; i++) {
        if (name && strcasecmp(name, policy_names[i]) == 0) {
            *out = (enum cxlssd_policy)i;
            return 0;
        }
    }
    /* accepted spellings */
    if (name && (strcasecmp(name, "s3-fifo") == 0 ||
                 strcasecmp(name, "s3_fifo") == 0)) {
        *out = CXLSSD_POLICY_S3FIFO;
        return 0;
    }
    return -1;
}

const char *cxlssd_eviction_name(enum cxlssd_eviction e)
{
    return (unsigned)e < CXLSSD_EVICTION_COUNT ? eviction_names[e] : "?";
}

int cxlssd_eviction_from_name(const char *name, enum cxlssd_eviction *out)
{
    for (int i = 0; i < CXLSSD_EVICTION_COUNT; i++) {
        if (name && strcasecmp(name, eviction_names[i]) == 0) {
            *out = (enum cxlssd_eviction)i;
            return 0;
        }
    }
    if (name && (strcasecmp(name, "bg") == 0)) {
        *out = CXLSSD_EVICTION_BACKGROUND;
        return 0;
    }
    return -1;
}

void cxlssd_config_defaults(struct cxlssd_config *cfg, uint64_t device_size)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->device_size = device_size;
    cfg->cache_size = 0;                /* 5% of the device */
    cfg->page_size = CXLSSD_DEFAULT_PAGE_SIZE;
    cfg->policy = CXLSSD_POLICY_FIFO;
    cfg->cache_ways = 0;
    cfg->prefetch = CXLSSD_DEFAULT_PREFETCH;
    cfg->eviction = CXLSSD_EVICTION_SYNC;
    cfg->evict_low_pct = CXLSSD_DEFAULT_EVICT_LOW_PCT;
    cfg->evict_high_pct = CXLSSD_DEFAULT_EVICT_HIGH_PCT;
    cfg->channels = CXLSSD_DEFAULT_CHANNELS;
    cfg->luns_per_channel = CXLSSD_DEFAULT_LUNS;
    cfg->blocks_per_lun = 0;
    cfg->pages_per_block = CXLSSD_DEFAULT_PAGES_PER_BLOCK;
    cfg->t_read_ns = CXLSSD_DEFAULT_T_READ_NS;
    cfg->t_prog_ns = CXLSSD_DEFAULT_T_PROG_NS;
    cfg->t_erase_ns = CXLSSD_DEFAULT_T_ERASE_NS;
    cfg->t_xfer_ns = CXLSSD_DEFAULT_T_XFER_NS;
    cfg->op_pct = CXLSSD_DEFAULT_OP_PCT;
    cfg->gc_low_blocks = CXLSSD_DEFAULT_GC_LOW_BLOCKS;
    cfg->gc_high_blocks = CXLSSD_DEFAULT_GC_HIGH_BLOCKS;
    cfg->precondition = false;
    cfg->record_ring = CXLSSD_DEFAULT_RECORD_RING;
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

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define CHECK_RANGE(val, name, lo, hi)                                      \
    do {                                                                    \
        if ((uint64_t)(val) < (uint64_t)(lo) ||                             \
            (uint64_t)(val) > (uint64_t)(hi)) {                             \
            return fail(err, errlen, "%s=%" PRIu64 ": must be in %" PRIu64  \
                        "..%" PRIu64, name, (uint64_t)(val),                \
                        (uint64_t)(lo), (uint64_t)(hi));                    \
        }                                                                   \
    } while (0)

int cxlssd_config_validate(const struct cxlssd_config *cfg,
                           char *err, size_t errlen)
{
    if (!cfg) {
        return fail(err, errlen, "no configuration");
    }
    if (err && errlen) {
        err[0] = '\0';
    }

    /* Capacity */
    if (cfg->page_size != 4096) {
        return fail(err, errlen, "page-size=%" PRIu32 ": must be 4096 "
                    "(the host page size; residency is tracked per host page)",
                    cfg->page_size);
    }
    if (cfg->device_size < 2ull * cfg->page_size) {
        return fail(err, errlen, "size=%" PRIu64 ": the device must hold at "
                    "least 2 pages (%" PRIu64 " bytes)", cfg->device_size,
                    (uint64_t)2 * cfg->page_size);
    }
    if (cfg->device_size % cfg->page_size) {
        return fail(err, errlen, "size=%" PRIu64 ": must be a multiple of "
                    "page-size (%" PRIu32 ")", cfg->device_size,
                    cfg->page_size);
    }
    uint64_t pages = cxlssd_config_pages(cfg);
    if (pages > UINT32_MAX - 1) {
        return fail(err, errlen, "size=%" PRIu64 ": at most %" PRIu64
                    " bytes (%" PRIu32 " pages) are supported",
                    cfg->device_size,
                    (uint64_t)(UINT32_MAX - 1) * cfg->page_size,
                    UINT32_MAX - 1);
    }
    if (cfg->cache_size != 0) {
        if (cfg->cache_size < cfg->page_size ||
            cfg->cache_size > cfg->device_size) {
            return fail(err, errlen, "cache-size=%" PRIu64 ": must be at "
                        "least one page (%" PRIu32 ") and at most the device "
                        "size (%" PRIu64 ")", cfg->cache_size,
                        cfg->page_size, cfg->device_size);
        }
        if (cfg->cache_size % cfg->page_size) {
            return fail(err, errlen, "cache-size=%" PRIu64 ": must be a "
                        "multiple of page-size (%" PRIu32 ")",
                        cfg->cache_size, cfg->page_size);
        }
    }
    uint64_t frames = cxlssd_config_cache_frames(cfg);

    /* Cache */
    if ((unsigned)cfg->policy >= CXLSSD_POLICY_COUNT) {
        return fail(err, errlen, "policy=%u: must be one of fifo, lifo, "
                    "clock, s3fifo", (unsigned)cfg->policy);
    }
    if (cfg->cache_ways != 0) {
        if (cfg->cache_ways > frames) {
            return fail(err, errlen, "cache-ways=%" PRIu32 ": must be in "
                        "0..%" PRIu64 " (0 = fully associative; at most the "
                        "cache frames)", cfg->cache_ways, frames);
        }
        if (frames % cfg->cache_ways) {
            return fail(err, errlen, "cache-ways=%" PRIu32 ": must divide "
                        "the number of cache frames (%" PRIu64 ")",
                        cfg->cache_ways, frames);
        }
    }
    CHECK_RANGE(cfg->prefetch, "prefetch", 0, 64);
    if ((unsigned)cfg->eviction >= CXLSSD_EVICTION_COUNT) {
        return fail(err, errlen, "eviction=%u: must be one of sync, "
                    "background", (unsigned)cfg->eviction);
    }
    CHECK_RANGE(cfg->evict_low_pct, "evict-low", 0, 99);
    CHECK_RANGE(cfg->evict_high_pct, "evict-high", 1, 100);
    if (cfg->evict_low_pct >= cfg->evict_high_pct) {
        return fail(err, errlen, "evict-low=%" PRIu32 ", evict-high=%" PRIu32
                    ": evict-low must be below evict-high",
                    cfg->evict_low_pct, cfg->evict_high_pct);
    }

    /* FTL */
    CHECK_RANGE(cfg->op_pct, "over-provisioning", 1, 50);
    CHECK_RANGE(cfg->gc_low_blocks, "gc-low", 2, 1023);
    CHECK_RANGE(cfg->gc_high_blocks, "gc-high", 3, 1024);
    if (cfg->gc_low_blocks >= cfg->gc_high_blocks) {
        return fail(err, errlen, "gc-low=%" PRIu32 ", gc-high=%" PRIu32
                    ": gc-low must be below gc-high", cfg->gc_low_blocks,
                    cfg->gc_high_blocks);
    }

    /* NAND geometry */
    CHECK_RANGE(cfg->channels, "nand-channels", 1, 256);
    CHECK_RANGE(cfg->luns_per_channel, "nand-luns", 1, 256);
    CHECK_RANGE(cfg->blocks_per_lun, "nand-blocks", 0, 1u << 24);
    CHECK_RANGE(cfg->pages_per_block, "nand-pages-per-block", 1, 65535);
    /* Same derivation as ftl_new() (see ftl.c), checked here first so the
     * message names the property. */
    uint64_t luns = (uint64_t)cfg->channels * cfg->luns_per_channel;
    uint64_t ppb = cfg->pages_per_block;
    uint64_t gc_low = cfg->gc_low_blocks < 2 ? 2 : cfg->gc_low_blocks;
    uint64_t gc_high = cfg->gc_high_blocks < gc_low ? gc_low
                                                     : cfg->gc_high_blocks;
    uint64_t data_blocks = (pages + luns * ppb - 1) / (luns * ppb);
    uint64_t min_blocks = data_blocks + gc_high + 1;
    uint64_t blocks = cfg->blocks_per_lun;
    if (blocks == 0) {
        uint64_t op_pages = (pages * (100 + (uint64_t)cfg->op_pct) + 99)
                            / 100;
        blocks = (op_pages + luns * ppb - 1) / (luns * ppb);
        if (blocks < min_blocks) {
            blocks = min_blocks;
        }
    } else if (blocks < min_blocks) {
        return fail(err, errlen, "nand-blocks=%" PRIu32 ": must be at least "
                    "%" PRIu64 " (%" PRIu64 " device pages over %" PRIu64
                    " LUNs x %" PRIu64 " pages per block need %" PRIu64
                    " data blocks per LUN + gc-high + 1 spare), or 0 to "
                    "derive it", cfg->blocks_per_lun, min_blocks, pages,
                    luns, ppb, data_blocks);
    }
    if (luns * blocks * ppb >= UINT32_MAX) {
        return fail(err, errlen, "nand geometry: nand-channels=%" PRIu32
                    " x nand-luns=%" PRIu32 " x nand-blocks=%" PRIu64
                    " x nand-pages-per-block=%" PRIu32 " = %" PRIu64
                    " physical pages; must be below %" PRIu32,
                    cfg->channels, cfg->luns_per_channel, blocks,
                    cfg->pages_per_block, luns * blocks * ppb, UINT32_MAX);
    }

    /* NAND timing */
    CHECK_RANGE(cfg->t_read_ns, "nand-read-ns", 1, TIME_MAX_NS);
    CHECK_RANGE(cfg->t_prog_ns, "nand-prog-ns", 1, TIME_MAX_NS);
    CHECK_RANGE(cfg->t_erase_ns, "nand-erase-ns", 1, TIME_MAX_NS);
    CHECK_RANGE(cfg->t_xfer_ns, "nand-xfer-ns", 1, TIME_MAX_NS);

    /* Records */
    CHECK_RANGE(cfg->record_ring, "record-ring", 16, 1u << 24);
    return 0;
}

/* ---- text parsing ---- */

enum prop_kind {
    K_SIZE,     /* bytes, K/M/G/T suffixes (binary) */
    K_U32,
    K_U64,
    K_TIME,     /* ns; optional ns/us/ms/s suffix */
    K_BOOL,
    K_POLICY,
    K_EVICTION,
};

struct prop_def {
    const char *name;
    enum prop_kind kind;
    size_t off;
};

#define OFF(f) offsetof(struct cxlssd_config, f)

static const struct prop_def prop_defs[] = {
    { "size", K_SIZE, OFF(device_size) },
    { "cache-size", K_SIZE, OFF(cache_size) },
    { "page-size", K_U32, OFF(page_size) },
    { "policy", K_POLICY, OFF(policy) },
    { "cache-ways", K_U32, OFF(cache_ways) },
    { "prefetch", K_U32, OFF(prefetch) },
    { "eviction", K_EVICTION, OFF(eviction) },
    { "evict-low", K_U32, OFF(evict_low_pct) },
    { "evict-high", K_U32, OFF(evict_high_pct) },
    { "nand-channels", K_U32, OFF(channels) },
    { "nand-luns", K_U32, OFF(luns_per_channel) },
    { "nand-blocks", K_U32, OFF(blocks_per_lun) },
    { "nand-pages-per-block", K_U32, OFF(pages_per_block) },
    { "nand-read-ns", K_TIME, OFF(t_read_ns) },
    { "nand-prog-ns", K_TIME, OFF(t_prog_ns) },
    { "nand-erase-ns", K_TIME, OFF(t_erase_ns) },
    { "nand-xfer-ns", K_TIME, OFF(t_xfer_ns) },
    { "over-provisioning", K_U32, OFF(op_pct) },
    { "gc-low", K_U32, OFF(gc_low_blocks) },
    { "gc-high", K_U32, OFF(gc_high_blocks) },
    { "precondition", K_BOOL, OFF(precondition) },
    { "record-ring", K_U32, OFF(record_ring) },
};

/* Every model property the QEMU device defines (its -device cxl-ssd,help
 * text).  "size" is not one of them (the device takes it from the memdev),
 * so it has no entry here; cxlssd_config_set() still accepts it for the
 * host-native tool. */
const struct cxlssd_prop_info cxlssd_props[] = {
    { "cache-size", "DRAM cache capacity in bytes, K/M/G suffixes accepted "
      "(default 0 = 5% of the device; 1 page .. device size, a multiple of "
      "page-size)" },
    { "page-size", "cache/NAND page size in bytes (default 4096; must be "
      "4096, the host page size)" },
    { "policy", "replacement policy: fifo, lifo, clock or s3fifo "
      "(default fifo)" },
    { "cache-ways", "set associativity: frames per set (default 0 = fully "
      "associative; otherwise 1..frames and must divide the frame count)" },
    { "prefetch", "next-N prefetch degree on a miss (default 0 = off; "
      "0..64)" },
    { "eviction", "sync (victims chosen on the faulting path) or background "
      "(worker threads keep free frames between the watermarks) "
      "(default sync)" },
    { "evict-low", "background eviction starts when free frames fall below "
      "this percentage of the cache (default 2; 0..99, below evict-high)" },
    { "evict-high", "background eviction stops when free frames reach this "
      "percentage of the cache (default 5; 1..100)" },
    { "nand-channels", "NAND channels (default 8; 1..256)" },
    { "nand-luns", "NAND LUNs (dies) per channel (default 16; 1..256)" },
    { "nand-blocks", "erase blocks per LUN (default 0 = derived from the "
      "device size and over-provisioning; 0..16777216)" },
    { "nand-pages-per-block", "pages per erase block (default 256; "
      "1..65535)" },
    { "nand-read-ns", "tR, page read time in ns (default 3000; "
      "1..10000000000)" },
    { "nand-prog-ns", "tPROG, page program time in ns (default 100000; "
      "1..10000000000)" },
    { "nand-erase-ns", "tBERS, block erase time in ns (default 1000000; "
      "1..10000000000)" },
    { "nand-xfer-ns", "channel transfer time of one page in ns (default "
      "3200; 1..10000000000)" },
    { "over-provisioning", "spare NAND capacity in percent of the device "
      "(default 7; 1..50)" },
    { "gc-low", "garbage collection starts below this many free blocks per "
      "LUN (default 2; 2..1023, below gc-high)" },
    { "gc-high", "garbage collection stops at this many free blocks per LUN "
      "(default 4; 3..1024)" },
    { "precondition", "treat never-written pages as written: their reads "
      "cost tR + transfer (default off; on/off)" },
    { "record-ring", "per-miss record ring entries, rounded up to a power "
      "of two (default 65536; 16..16777216)" },
};
const size_t cxlssd_nprops = sizeof(cxlssd_props) / sizeof(cxlssd_props[0]);

_Static_assert(sizeof(cxlssd_props) / sizeof(cxlssd_props[0]) + 1 ==
               sizeof(prop_defs) / sizeof(prop_defs[0]),
               "every property but size needs a description");

static const struct prop_def *find_prop(const char *name)
{
    for (size_t i = 0; i < sizeof(prop_defs) / sizeof(prop_defs[0]); i++) {
        if (strcmp(prop_defs[i].name, name) == 0) {
            return &prop_defs[i];
        }
    }
    return NULL;
}

/* Parse an unsigned decimal (or 0x hex) number with an optional suffix
 * from @suffixes (each with its multiplier).  Returns 0 or -1. */
struct suffix {
    const char *s;
    uint64_t mult;
};

static int parse_num(const char *value, const struct suffix *suffixes,
                     uint64_t *out)
{
    const char *p = value;
    while (isspace((unsigned char)*p)) {
        p++;
    }
    if (!isdigit((unsigned char)*p)) {
        return -1;      /* rejects "", "-1", "+1", "abc" */
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 0);
    if (errno == ERANGE) {
        return -1;
    }
    while (isspace((unsigned char)*end)) {
        end++;
    }
    uint64_t mult = 1;
    if (*end) {
        const struct suffix *s = suffixes;
        for (; s && s->s; s++) {
            size_t n = strlen(s->s);
            if (strncasecmp(end, s->s, n) == 0) {
                const char *q = end + n;
                while (isspace((unsigned char)*q)) {
                    q++;
                }
                if (*q == '\0') {
                    mult = s->mult;
                    break;
                }
            }
        }
        if (!s || !s->s) {
            return -1;
        }
    }
    if (mult != 1 && v > UINT64_MAX / mult) {
        return -1;
    }
    *out = (uint64_t)v * mult;
    return 0;
}

static const struct suffix size_suffixes[] = {
    { "KiB", KiB }, { "MiB", MiB }, { "GiB", GiB }, { "TiB", 1024 * GiB },
    { "KB", KiB }, { "MB", MiB }, { "GB", GiB }, { "TB", 1024 * GiB },
    { "K", KiB }, { "M", MiB }, { "G", GiB }, { "T", 1024 * GiB },
    { "B", 1 },
    { NULL, 0 },
};

static const struct suffix time_suffixes[] = {
    { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
    { NULL, 0 },
};

int cxlssd_config_set(struct cxlssd_config *cfg, const char *name,
                      const char *value, char *err, size_t errlen)
{
    if (!name) {
        return fail(err, errlen, "missing property name");
    }
    const struct prop_def *d = find_prop(name);
    if (!d) {
        return fail(err, errlen, "%s: unknown property (see -device "
                    "cxl-ssd,help)", name);
    }
    if (!value) {
        return fail(err, errlen, "%s: missing value", name);
    }
    char *base = (char *)cfg;
    uint64_t v;

    switch (d->kind) {
    case K_SIZE:
        if (parse_num(value, size_suffixes, &v) < 0) {
            return fail(err, errlen, "%s=%s: must be a non-negative size in "
                        "bytes (suffixes K, M, G, T; at most 2^64-1)",
                        name, value);
        }
        memcpy(base + d->off, &v, sizeof(uint64_t));
        return 0;
    case K_U32:
        if (parse_num(value, NULL, &v) < 0 || v > UINT32_MAX) {
            return fail(err, errlen, "%s=%s: must be an integer in 0..%"
                        PRIu32, name, value, UINT32_MAX);
        }
        {
            uint32_t v32 = (uint32_t)v;
            memcpy(base + d->off, &v32, sizeof(uint32_t));
        }
        return 0;
    case K_U64:
        if (parse_num(value, NULL, &v) < 0) {
            return fail(err, errlen, "%s=%s: must be an integer in 0..%"
                        PRIu64, name, value, UINT64_MAX);
        }
        memcpy(base + d->off, &v, sizeof(uint64_t));
        return 0;
    case K_TIME:
        if (parse_num(value, time_suffixes, &v) < 0) {
            return fail(err, errlen, "%s=%s: must be a time in ns (suffixes "
                        "ns, us, ms, s allowed)", name, value);
        }
        memcpy(base + d->off, &v, sizeof(uint64_t));
        return 0;
    case K_BOOL: {
        bool b;
        if (!strcasecmp(value, "on") || !strcasecmp(value, "true") ||
            !strcasecmp(value, "yes") || !strcmp(value, "1")) {
            b = true;
        } else if (!strcasecmp(value, "off") || !strcasecmp(value, "false")
                   || !strcasecmp(value, "no") || !strcmp(value, "0")) {
            b = false;
        } else {
            return fail(err, errlen, "%s=%s: must be on or off", name, value);
        }
        memcpy(base + d->off, &b, sizeof(bool));
        return 0;
    }
    case K_POLICY:
        if (cxlssd_policy_from_name(value, &cfg->policy) < 0) {
            return fail(err, errlen, "%s=%s: must be one of fifo, lifo, "
                        "clock, s3fifo", name, value);
        }
        return 0;
    case K_EVICTION:
        if (cxlssd_eviction_from_name(value, &cfg->eviction) < 0) {
            return fail(err, errlen, "%s=%s: must be one of sync, "
                        "background", name, value);
        }
        return 0;
    }
    return fail(err, errlen, "%s: internal error", name);
}

/* Appends like snprintf: returns the full length even when truncated. */
static size_t append(char *buf, size_t len, size_t used, const char *s)
{
    size_t n = strlen(s);
    if (buf && len && used < len - 1) {
        size_t room = len - 1 - used;
        size_t c = n < room ? n : room;
        memcpy(buf + used, s, c);
        buf[used + c] = '\0';
    }
    return used + n;
}

int cxlssd_config_format(const struct cxlssd_config *cfg, char *buf,
                         size_t len, char sep)
{
    const size_t n = sizeof(prop_defs) / sizeof(prop_defs[0]);
    const char *base = (const char *)cfg;
    size_t used = 0;

    if (buf && len) {
        buf[0] = '\0';
    }
    for (size_t i = 0; i < n; i++) {
        const struct prop_def *d = &prop_defs[i];
        char item[128];
        char val[64];
        uint64_t v64;
        uint32_t v32;
        bool b;

        switch (d->kind) {
        case K_SIZE:
        case K_U64:
        case K_TIME:
            memcpy(&v64, base + d->off, sizeof(v64));
            snprintf(val, sizeof(val), "%" PRIu64, v64);
            break;
        case K_U32:
            memcpy(&v32, base + d->off, sizeof(v32));
            snprintf(val, sizeof(val), "%" PRIu32, v32);
            break;
        case K_BOOL:
            memcpy(&b, base + d->off, sizeof(b));
            snprintf(val, sizeof(val), "%s", b ? "on" : "off");
            break;
        case K_POLICY:
            snprintf(val, sizeof(val), "%s", cxlssd_policy_name(cfg->policy));
            break;
        case K_EVICTION:
            snprintf(val, sizeof(val), "%s",
                     cxlssd_eviction_name(cfg->eviction));
            break;
        default:
            val[0] = '\0';
        }
        if (sep == ',') {
            snprintf(item, sizeof(item), "%s%s=%s", i ? "," : "", d->name,
                     val);
        } else {
            snprintf(item, sizeof(item), "%s=%s%c", d->name, val,
                     sep ? sep : '\n');
        }
        used = append(buf, len, used, item);
    }
    return used > INT32_MAX ? -1 : (int)used;
}
