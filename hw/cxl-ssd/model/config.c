/*
 * cxl-ssd configuration: the property table as data, field access by row,
 * defaults and derived sizes, and the error helper every check uses.
 * Validation is in config_validate.c, text parsing and help text in
 * props.c.
 */
#include "config.h"

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

/* ---- delivery=auto ---- */

enum cxlssd_delivery cxlssd_delivery_auto(const struct cxlssd_config *cfg,
                                          bool access_path,
                                          const char **why)
{
    if (cfg->mode != CXLSSD_MODE_UFFD) {
        *why = "mode=mmio: no miss delivery acts";
        return CXLSSD_DELIVERY_POLL;
    }
    if (!access_path) {
        *why = "delivery=tlb needs TCG's TLB fill";
        return CXLSSD_DELIVERY_POLL;
    }
    *why = "misses served in TCG's TLB fill";
    return CXLSSD_DELIVERY_TLB;
}

/* ---- errors ---- */

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
