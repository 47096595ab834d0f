/*
 * cxl-ssd model configuration: one struct shared by the QEMU device
 * (-device cxl-ssd,...), the host-native tool and the tests.  Property names
 * are the QEMU property names; every value is range-checked by
 * cxlssd_config_validate(), which names the offending property.
 */
#ifndef CXLSSD_MODEL_CONFIG_H
#define CXLSSD_MODEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cxlssd_policy {
    CXLSSD_POLICY_FIFO,
    CXLSSD_POLICY_LIFO,
    CXLSSD_POLICY_CLOCK,
    CXLSSD_POLICY_S3FIFO,
    CXLSSD_POLICY_COUNT
};

enum cxlssd_eviction {
    CXLSSD_EVICTION_SYNC,       /* victims chosen and unmapped on the miss path */
    CXLSSD_EVICTION_BACKGROUND, /* worker keeps free frames between watermarks */
    CXLSSD_EVICTION_COUNT
};

/*
 * Defaults, shared by cxlssd_config_defaults() and the QEMU device's
 * property definitions so that `-device cxl-ssd,help` shows the same values.
 * They reproduce the CXDVirt paper's Z-NAND setup.
 */
#define CXLSSD_DEFAULT_PAGE_SIZE        4096u
#define CXLSSD_DEFAULT_CACHE_PCT        5u      /* cache-size=0: 5% of device */
#define CXLSSD_DEFAULT_PREFETCH         0u
#define CXLSSD_DEFAULT_EVICT_LOW_PCT    2u
#define CXLSSD_DEFAULT_EVICT_HIGH_PCT   5u
#define CXLSSD_DEFAULT_CHANNELS         8u
#define CXLSSD_DEFAULT_LUNS             16u
#define CXLSSD_DEFAULT_PAGES_PER_BLOCK  256u
#define CXLSSD_DEFAULT_T_READ_NS        3000u
#define CXLSSD_DEFAULT_T_PROG_NS        100000u
#define CXLSSD_DEFAULT_T_ERASE_NS       1000000u
#define CXLSSD_DEFAULT_T_XFER_NS        3200u
#define CXLSSD_DEFAULT_OP_PCT           7u
#define CXLSSD_DEFAULT_GC_LOW_BLOCKS    2u
#define CXLSSD_DEFAULT_GC_HIGH_BLOCKS   4u
#define CXLSSD_DEFAULT_RECORD_RING      65536u

struct cxlssd_config {
    /* Capacity */
    uint64_t device_size;       /* bytes; from the memdev (not a property) */
    uint64_t cache_size;        /* "cache-size", bytes; 0 = 5% of device */
    uint32_t page_size;         /* "page-size", bytes (4096) */

    /* Cache */
    enum cxlssd_policy policy;  /* "policy": fifo|lifo|clock|s3fifo */
    uint32_t cache_ways;        /* "cache-ways": 0 = fully associative */
    uint32_t prefetch;          /* "prefetch": next-N degree, 0 = off */
    enum cxlssd_eviction eviction; /* "eviction": sync|background */
    uint32_t evict_low_pct;     /* "evict-low": start when free < low % */
    uint32_t evict_high_pct;    /* "evict-high": stop when free >= high % */

    /* NAND geometry */
    uint32_t channels;          /* "nand-channels" (8) */
    uint32_t luns_per_channel;  /* "nand-luns" (16) */
    uint32_t blocks_per_lun;    /* "nand-blocks": 0 = derived from size+OP */
    uint32_t pages_per_block;   /* "nand-pages-per-block" (256) */

    /* NAND timing, ns */
    uint64_t t_read_ns;         /* "nand-read-ns" tR (3000) */
    uint64_t t_prog_ns;         /* "nand-prog-ns" tPROG (100000) */
    uint64_t t_erase_ns;        /* "nand-erase-ns" tBERS (1000000) */
    uint64_t t_xfer_ns;         /* "nand-xfer-ns" per-page transfer (3200) */

    /* FTL */
    uint32_t op_pct;            /* "over-provisioning": percent (7), 1..50 */
    uint32_t gc_low_blocks;     /* "gc-low": GC starts below this many free blocks per LUN (2) */
    uint32_t gc_high_blocks;    /* "gc-high": GC stops at this many (4) */
    bool precondition;          /* "precondition": unwritten pages cost a read */

    /* Records */
    uint32_t record_ring;       /* "record-ring": entries per ring (65536) */
};

/* Fill @cfg with the defaults for a device of @device_size bytes. */
void cxlssd_config_defaults(struct cxlssd_config *cfg, uint64_t device_size);

/*
 * Check every field.  Returns 0, or -1 with a message in @err such as
 * "nand-channels=0: must be in 1..256".
 */
int cxlssd_config_validate(const struct cxlssd_config *cfg,
                           char *err, size_t errlen);

/*
 * Set one property from text ("policy", "clock").  Returns 0, or -1 with a
 * message naming the property and the allowed values/range.
 */
int cxlssd_config_set(struct cxlssd_config *cfg, const char *name,
                      const char *value, char *err, size_t errlen);

/* Derived sizes (after validate). */
uint64_t cxlssd_config_pages(const struct cxlssd_config *cfg);
uint64_t cxlssd_config_cache_frames(const struct cxlssd_config *cfg);

const char *cxlssd_policy_name(enum cxlssd_policy p);
int cxlssd_policy_from_name(const char *name, enum cxlssd_policy *out);
const char *cxlssd_eviction_name(enum cxlssd_eviction e);
int cxlssd_eviction_from_name(const char *name, enum cxlssd_eviction *out);

/* Property table: names, descriptions and ranges, for help text. */
struct cxlssd_prop_info {
    const char *name;
    const char *description;    /* includes the default and the range */
};
extern const struct cxlssd_prop_info cxlssd_props[];
extern const size_t cxlssd_nprops;

/*
 * Write "name=value" for every model property (one per line, or
 * comma-separated if @sep is ','), for manifests.
 */
int cxlssd_config_format(const struct cxlssd_config *cfg, char *buf,
                         size_t len, char sep);

#endif
