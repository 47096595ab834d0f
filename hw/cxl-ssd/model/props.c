/*
 * cxl-ssd properties as text: enumeration names, the text setter (the
 * native tool's --device and options), values for manifests and help
 * lines, all from the rows of props.def (config.c).
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
#define TiB (1024ull * GiB)

/* Appends like snprintf at @used: returns the full length even when
 * truncated, and keeps @buf terminated. */
static size_t append(char *buf, size_t len, size_t used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t append(char *buf, size_t len, size_t used, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(used < len ? buf + used : NULL, used < len ? len - used : 0,
                  fmt, ap);
    va_end(ap);
    return used + (n > 0 ? (size_t)n : 0);
}

/* ---- enumerations ---- */

/*
 * Every enumeration value: the first name of a value is its canonical
 * one, later ones are accepted spellings.  Policy and eviction names are
 * case-insensitive ("S3FIFO", "BG"); mode and delivery are exact, as they
 * always were.
 */
static const struct enum_name {
    enum cxlssd_prop_kind kind;
    const char *name;
    int value;
} enum_names[] = {
    { CXLSSD_PROP_MODE, "uffd", CXLSSD_MODE_UFFD },
    { CXLSSD_PROP_MODE, "mmio", CXLSSD_MODE_MMIO },
    { CXLSSD_PROP_DELIVERY, "poll", CXLSSD_DELIVERY_POLL },
    { CXLSSD_PROP_DELIVERY, "busy", CXLSSD_DELIVERY_BUSY },
    { CXLSSD_PROP_DELIVERY, "sigbus", CXLSSD_DELIVERY_SIGBUS },
    { CXLSSD_PROP_DELIVERY, "tlb", CXLSSD_DELIVERY_TLB },
    { CXLSSD_PROP_DELIVERY, "auto", CXLSSD_DELIVERY_AUTO },
    { CXLSSD_PROP_POLICY, "fifo", CXLSSD_POLICY_FIFO },
    { CXLSSD_PROP_POLICY, "lifo", CXLSSD_POLICY_LIFO },
    { CXLSSD_PROP_POLICY, "clock", CXLSSD_POLICY_CLOCK },
    { CXLSSD_PROP_POLICY, "s3fifo", CXLSSD_POLICY_S3FIFO },
    { CXLSSD_PROP_POLICY, "s3-fifo", CXLSSD_POLICY_S3FIFO },
    { CXLSSD_PROP_POLICY, "s3_fifo", CXLSSD_POLICY_S3FIFO },
    { CXLSSD_PROP_EVICTION, "sync", CXLSSD_EVICTION_SYNC },
    { CXLSSD_PROP_EVICTION, "background", CXLSSD_EVICTION_BACKGROUND },
    { CXLSSD_PROP_EVICTION, "bg", CXLSSD_EVICTION_BACKGROUND },
    { CXLSSD_PROP_EVICTION, "batch", CXLSSD_EVICTION_BATCH },
};
#define N_ENUM_NAMES (sizeof(enum_names) / sizeof(enum_names[0]))

/* The canonical entry of (@kind, @value), or NULL. */
static const struct enum_name *canonical(enum cxlssd_prop_kind kind,
                                         int value)
{
    for (size_t i = 0; i < N_ENUM_NAMES; i++) {
        if (enum_names[i].kind == kind && enum_names[i].value == value) {
            return &enum_names[i];
        }
    }
    return NULL;
}

int cxlssd_enum_parse(enum cxlssd_prop_kind kind, const char *text, int *out)
{
    bool icase = kind == CXLSSD_PROP_POLICY || kind == CXLSSD_PROP_EVICTION;

    for (size_t i = 0; text && i < N_ENUM_NAMES; i++) {
        if (enum_names[i].kind == kind &&
            (icase ? strcasecmp : strcmp)(text, enum_names[i].name) == 0) {
            *out = enum_names[i].value;
            return 0;
        }
    }
    return -1;
}

const char *cxlssd_enum_name(enum cxlssd_prop_kind kind, int value)
{
    const struct enum_name *e = canonical(kind, value);

    return e ? e->name : "?";
}

int cxlssd_enum_choices(enum cxlssd_prop_kind kind, char *buf, size_t len)
{
    size_t used = append(buf, len, 0, "one of");
    const char *sep = " ";

    for (size_t i = 0; i < N_ENUM_NAMES; i++) {
        if (enum_names[i].kind == kind &&
            canonical(kind, enum_names[i].value) == &enum_names[i]) {
            used = append(buf, len, used, "%s%s", sep, enum_names[i].name);
            sep = ", ";
        }
    }
    return (int)used;
}

bool cxlssd_prop_is_enum(const struct cxlssd_prop *p)
{
    for (size_t i = 0; i < N_ENUM_NAMES; i++) {
        if (enum_names[i].kind == p->kind) {
            return true;
        }
    }
    return false;
}

const char *cxlssd_policy_name(enum cxlssd_policy p)
{
    return cxlssd_enum_name(CXLSSD_PROP_POLICY, (int)p);
}

int cxlssd_policy_from_name(const char *name, enum cxlssd_policy *out)
{
    int v;

    if (cxlssd_enum_parse(CXLSSD_PROP_POLICY, name, &v) < 0) {
        return -1;
    }
    *out = (enum cxlssd_policy)v;
    return 0;
}

const char *cxlssd_eviction_name(enum cxlssd_eviction e)
{
    return cxlssd_enum_name(CXLSSD_PROP_EVICTION, (int)e);
}

/* ---- parsing ---- */

struct suffix {
    const char *s;
    uint64_t mult;
};

static const struct suffix size_suffixes[] = {
    { "KiB", KiB }, { "MiB", MiB }, { "GiB", GiB }, { "TiB", TiB },
    { "KB", KiB }, { "MB", MiB }, { "GB", GiB }, { "TB", TiB },
    { "K", KiB }, { "M", MiB }, { "G", GiB }, { "T", TiB },
    { "B", 1 },
    { NULL, 0 },
};

static const struct suffix time_suffixes[] = {
    { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
    { NULL, 0 },
};

/* An unsigned decimal (or 0x hex) number with an optional suffix from
 * @suffixes (each with its multiplier).  Returns 0 or -1. */
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

static int parse_bool(const char *value, uint64_t *out)
{
    static const char *const yes[] = { "on", "true", "yes", "1" };
    static const char *const no[] = { "off", "false", "no", "0" };

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (!strcasecmp(value, yes[i]) || !strcasecmp(value, no[i])) {
            *out = !strcasecmp(value, yes[i]);
            return 0;
        }
    }
    return -1;
}

static int set_row(const struct cxlssd_prop *p, struct cxlssd_config *cfg,
                   const char *value, char *err, size_t errlen)
{
    char choices[128];
    uint64_t v;
    int e;

    switch (p->kind) {
    case CXLSSD_PROP_SIZE:
        if (parse_num(value, size_suffixes, &v) < 0) {
            return cxlssd_fail(err, errlen, "%s=%s: must be a non-negative "
                               "size in bytes (suffixes K, M, G, T; at most "
                               "2^64-1)", p->name, value);
        }
        break;
    case CXLSSD_PROP_U32:
        if (parse_num(value, NULL, &v) < 0 || v > UINT32_MAX) {
            return cxlssd_fail(err, errlen, "%s=%s: must be an integer in "
                               "0..%" PRIu32, p->name, value, UINT32_MAX);
        }
        break;
    case CXLSSD_PROP_TIME:
        if (parse_num(value, time_suffixes, &v) < 0) {
            return cxlssd_fail(err, errlen, "%s=%s: must be a time in ns "
                               "(suffixes ns, us, ms, s allowed)", p->name,
                               value);
        }
        break;
    case CXLSSD_PROP_BOOL:
        if (parse_bool(value, &v) < 0) {
            return cxlssd_fail(err, errlen, "%s=%s: must be on or off",
                               p->name, value);
        }
        break;
    case CXLSSD_PROP_STR: {
        char **s = (char **)((char *)cfg + p->offset);
        char *copy = strdup(value);

        if (!copy) {
            return cxlssd_fail(err, errlen, "%s: out of memory", p->name);
        }
        free(*s);
        *s = copy;
        return 0;
    }
    default:
        if (cxlssd_enum_parse(p->kind, value, &e) < 0) {
            cxlssd_enum_choices(p->kind, choices, sizeof(choices));
            return cxlssd_fail(err, errlen, "%s=%s: must be %s", p->name,
                               value, choices);
        }
        v = (uint64_t)e;
        break;
    }
    cxlssd_prop_set_num(p, cfg, v);
    return 0;
}

int cxlssd_config_set(struct cxlssd_config *cfg, const char *name,
                      const char *value, char *err, size_t errlen)
{
    const struct cxlssd_prop *p = cxlssd_prop_find(name);

    if (!name) {
        return cxlssd_fail(err, errlen, "missing property name");
    }
    if (!value) {
        return cxlssd_fail(err, errlen, "%s: missing value", name);
    }
    if (strcmp(name, "size") == 0) {
        /* the memdev's size, not a property of the device */
        if (parse_num(value, size_suffixes, &cfg->device_size) < 0) {
            return cxlssd_fail(err, errlen, "size=%s: must be a "
                               "non-negative size in bytes (suffixes K, M, "
                               "G, T; at most 2^64-1)", value);
        }
        return 0;
    }
    if (!p) {
        return cxlssd_fail(err, errlen, "%s: unknown property (see -device "
                           "cxl-ssd,help)", name);
    }
    if (set_row(p, cfg, value, err, errlen) < 0) {
        return -1;
    }
    cxlssd_prop_mark_set(p, cfg, true);     /* for the combination rules */
    return 0;
}

/* ---- values and help ---- */

void cxlssd_prop_format(const struct cxlssd_prop *p,
                        const struct cxlssd_config *cfg,
                        char *buf, size_t len)
{
    uint64_t v;

    if (p->kind == CXLSSD_PROP_STR) {
        const char *s = *(char *const *)((const char *)cfg + p->offset);
        snprintf(buf, len, "%s", s ? s : "");
        return;
    }
    v = cxlssd_prop_get_num(p, cfg);
    if (p->kind == CXLSSD_PROP_BOOL) {
        snprintf(buf, len, "%s", v ? "on" : "off");
    } else if (cxlssd_prop_is_enum(p)) {
        snprintf(buf, len, "%s", cxlssd_enum_name(p->kind, (int)v));
    } else {
        snprintf(buf, len, "%" PRIu64, v);
    }
}

int cxlssd_prop_describe(const struct cxlssd_prop *p,
                         const struct cxlssd_config *defaults,
                         char *buf, size_t len)
{
    char range[128] = "";
    char def[64];
    size_t used;

    if (p->kind == CXLSSD_PROP_BOOL) {
        snprintf(range, sizeof(range), "on/off");
    } else if (cxlssd_prop_is_enum(p)) {
        cxlssd_enum_choices(p->kind, range, sizeof(range));
    } else if (cxlssd_prop_has_range(p)) {
        snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64, p->min,
                 p->max);
    }
    used = append(buf, len, 0, "%s", p->description);
    if (p->kind == CXLSSD_PROP_STR) {
        return (int)append(buf, len, used, " (default: %s)", p->def_text);
    }
    if (defaults) {
        cxlssd_prop_format(p, defaults, def, sizeof(def));
        used = append(buf, len, used, " (%s%sdefault %s)", range,
                      range[0] ? "; " : "", def);
    } else if (range[0]) {
        used = append(buf, len, used, " (%s)", range);
    }
    return (int)used;
}

int cxlssd_config_format(const struct cxlssd_config *cfg, char *buf,
                         size_t len, char sep)
{
    char val[256];
    size_t used;

    if (buf && len) {
        buf[0] = '\0';
    }
    used = append(buf, len, 0, "size=%" PRIu64, cfg->device_size);
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        cxlssd_prop_format(&cxlssd_props[i], cfg, val, sizeof(val));
        used = append(buf, len, used, "%c%s=%s", sep ? sep : '\n',
                      cxlssd_props[i].name, val);
    }
    if (sep != ',') {
        used = append(buf, len, used, "%c", sep ? sep : '\n');
    }
    return used > INT32_MAX ? -1 : (int)used;
}
