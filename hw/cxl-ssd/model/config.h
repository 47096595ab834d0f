/*
 * cxl-ssd configuration: one struct shared by the QEMU device
 * (-device cxl-ssd,...), the host-native tool and the tests, with one field
 * per property of the table in props.def (names, kinds, defaults, ranges
 * and descriptions are written there and nowhere else).  Every value is
 * range-checked by cxlssd_config_validate(), which names the offending
 * property.
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
    CXLSSD_EVICTION_SYNC,       /* victims chosen, unmapped on the miss path */
    CXLSSD_EVICTION_BACKGROUND, /* a worker keeps frames free (watermarks) */
    CXLSSD_EVICTION_BATCH,      /* the miss that crosses the low watermark
                                 * frees frames up to the high one */
    CXLSSD_EVICTION_COUNT
};

enum cxlssd_mode {
    CXLSSD_MODE_UFFD,           /* resident pages mapped, misses trapped */
    CXLSSD_MODE_MMIO,           /* every access through the MMIO path */
};

enum cxlssd_delivery {
    CXLSSD_DELIVERY_POLL,       /* handler threads sleep in poll() */
    CXLSSD_DELIVERY_BUSY,       /* handler threads busy-poll the uffd
                                 * (sleeping in poll after 10 ms without a
                                 * fault) */
    CXLSSD_DELIVERY_COUNT,      /* the handler-thread modes above */
    /* In-thread delivery: the faulting thread serves its own miss in a
     * SIGBUS handler (rules in trap/trap.h). */
    CXLSSD_DELIVERY_SIGBUS = 8,
    /* Access-path delivery (QEMU under TCG): the vCPU serves a miss in
     * TCG's TLB fill, before the RAM entry is installed; handler threads
     * as poll serve what still faults on the host (trap/trap.h). */
    CXLSSD_DELIVERY_TLB = 9,
    /* The embedder's choice, made once at start (before the trap exists,
     * which takes only the values above): QEMU picks tlb under TCG in
     * mode=uffd, else poll (cxlssd_delivery_auto). */
    CXLSSD_DELIVERY_AUTO = 10,
};

#define CXLSSD_MAX_HANDLER_THREADS 64
#define CXLSSD_TIME_MAX_NS 10000000000ull       /* 10 s */
#define CXLSSD_DEFAULT_CACHE_PCT 5u             /* cache-size=0 */

/* C type of each property kind of props.def */
#define CXLSSD_CTYPE_U32        uint32_t
#define CXLSSD_CTYPE_TIME       uint64_t
#define CXLSSD_CTYPE_SIZE       uint64_t
#define CXLSSD_CTYPE_BOOL       bool
#define CXLSSD_CTYPE_STR        char *
#define CXLSSD_CTYPE_MODE       enum cxlssd_mode
#define CXLSSD_CTYPE_DELIVERY   enum cxlssd_delivery
#define CXLSSD_CTYPE_POLICY     enum cxlssd_policy
#define CXLSSD_CTYPE_EVICTION   enum cxlssd_eviction

/* Index of each row of props.def in cxlssd_props[] (CXLSSD_ROW_policy). */
enum cxlssd_prop_row {
#define CXLSSD_PROP(K, F, N, D, LO, HI, DESC) CXLSSD_ROW_##F,
#include "props.def"
#undef CXLSSD_PROP
    CXLSSD_NPROPS
};

struct cxlssd_config {
    uint64_t device_size;       /* bytes; from the memdev (not a property) */
#define CXLSSD_PROP(K, F, N, D, LO, HI, DESC) CXLSSD_CTYPE_##K F;
#include "props.def"
#undef CXLSSD_PROP
    /* Bit CXLSSD_ROW_x: the user gave property x a value (whatever it
     * is, the default included); see cxlssd_prop_mark_set(). */
    uint32_t set_bits[(CXLSSD_NPROPS + 31) / 32];
};

enum cxlssd_prop_kind {
    CXLSSD_PROP_U32,
    CXLSSD_PROP_TIME,
    CXLSSD_PROP_SIZE,
    CXLSSD_PROP_BOOL,
    CXLSSD_PROP_STR,
    CXLSSD_PROP_MODE,
    CXLSSD_PROP_DELIVERY,
    CXLSSD_PROP_POLICY,
    CXLSSD_PROP_EVICTION,
};

/* One row of props.def, as data. */
struct cxlssd_prop {
    const char *name;
    enum cxlssd_prop_kind kind;
    size_t offset;              /* in struct cxlssd_config */
    uint64_t def;               /* numeric, boolean or enumeration default */
    const char *def_text;       /* STR: what the default (NULL) means */
    uint64_t min, max;          /* numeric range checked by validate */
    const char *description;    /* without range and default */
};
extern const struct cxlssd_prop cxlssd_props[];
extern const size_t cxlssd_nprops;

/* The row named @name, or NULL. */
const struct cxlssd_prop *cxlssd_prop_find(const char *name);

/* Value of a non-STR row in @cfg (enumerations and booleans as numbers),
 * and its setter. */
uint64_t cxlssd_prop_get_num(const struct cxlssd_prop *p,
                             const struct cxlssd_config *cfg);
void cxlssd_prop_set_num(const struct cxlssd_prop *p,
                         struct cxlssd_config *cfg, uint64_t v);
/*
 * Whether the user set @p: cxlssd_config_set() marks what it sets; a
 * front end that stores values itself (QEMU's qdev properties) marks them
 * with cxlssd_prop_mark_set(), and unmarks what it only set to the
 * default.  cxlssd_config_defaults() clears every mark.  Validate refuses
 * a property the user set that has no effect given the others.
 */
void cxlssd_prop_mark_set(const struct cxlssd_prop *p,
                          struct cxlssd_config *cfg, bool set);
bool cxlssd_prop_is_set(const struct cxlssd_prop *p,
                        const struct cxlssd_config *cfg);
/* True if validate checks the row's min..max (and help shows it). */
bool cxlssd_prop_has_range(const struct cxlssd_prop *p);
bool cxlssd_prop_is_enum(const struct cxlssd_prop *p);

/* Fill @cfg with the defaults for a device of @device_size bytes (none
 * of them counts as set by the user). */
void cxlssd_config_defaults(struct cxlssd_config *cfg, uint64_t device_size);

/* Free the STR values cxlssd_config_set() copied (not QEMU's). */
void cxlssd_config_free_strings(struct cxlssd_config *cfg);

/*
 * Check every field, then the combinations: a property the user set that
 * has no effect given the others is refused, naming both.  Returns 0, or
 * -1 with a message in @err such as "nand-channels=0: must be in 1..256"
 * or "media-page-cache=off: needs media=PATH (...); drop media-page-cache
 * or set media=PATH".
 */
int cxlssd_config_validate(const struct cxlssd_config *cfg,
                           char *err, size_t errlen);

/*
 * Set one property from text ("policy", "clock"; also "size", the memdev
 * size).  Sizes take K/M/G/T suffixes, times ns/us/ms/s; STR values are
 * copied, replacing (and freeing) the previous copy.  The property then
 * counts as set by the user (cxlssd_prop_is_set).  Returns 0, or -1 with
 * a message naming the property and the allowed values/range.
 */
int cxlssd_config_set(struct cxlssd_config *cfg, const char *name,
                      const char *value, char *err, size_t errlen);

/* The value of @p in @cfg as text ("on", "fifo", "3000", "" for NULL). */
void cxlssd_prop_format(const struct cxlssd_prop *p,
                        const struct cxlssd_config *cfg,
                        char *buf, size_t len);

/*
 * Help text of @p: the description, then the range or the values
 * ("1..256", "one of fifo, lifo, clock, s3fifo", "on/off"), then, with
 * @defaults, "default" and its value there.  STR rows always name what
 * their default means.  Returns the length snprintf would.
 */
int cxlssd_prop_describe(const struct cxlssd_prop *p,
                         const struct cxlssd_config *defaults,
                         char *buf, size_t len);

/* Parse an enumeration value of @kind ("S3-FIFO", "bg"); 0 or -1. */
int cxlssd_enum_parse(enum cxlssd_prop_kind kind, const char *text,
                      int *out);
/* Canonical name of an enumeration value, "?" if none. */
const char *cxlssd_enum_name(enum cxlssd_prop_kind kind, int value);
/* "one of fifo, lifo, clock, s3fifo" into @buf; returns snprintf's length. */
int cxlssd_enum_choices(enum cxlssd_prop_kind kind, char *buf, size_t len);

/* Writes a message into @err (if any) and returns -1. */
int cxlssd_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * What delivery=auto becomes, once, at start (after validate): tlb where
 * the embedder serves misses in an access path (@access_path: QEMU under
 * TCG) and mode=uffd, else poll, the host-fault delivery that works
 * everywhere (KVM, any other accelerator; mode=mmio has no miss delivery
 * and keeps poll as it always did).  @why: the reason, for a log line.
 */
enum cxlssd_delivery cxlssd_delivery_auto(const struct cxlssd_config *cfg,
                                          bool access_path,
                                          const char **why);

/* Derived sizes (after validate). */
uint64_t cxlssd_config_pages(const struct cxlssd_config *cfg);
uint64_t cxlssd_config_cache_frames(const struct cxlssd_config *cfg);

const char *cxlssd_policy_name(enum cxlssd_policy p);
int cxlssd_policy_from_name(const char *name, enum cxlssd_policy *out);
const char *cxlssd_eviction_name(enum cxlssd_eviction e);

/*
 * Write "name=value" for every property (one per line, or comma-separated
 * if @sep is ','), "size" first, for manifests.  Returns the full length.
 */
int cxlssd_config_format(const struct cxlssd_config *cfg, char *buf,
                         size_t len, char sep);

#endif
