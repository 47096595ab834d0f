/*
 * cxl-ssd statistics: the rows of stats.def as data, for the QEMU device's
 * `stats` property (cxl_ssd_stats.c) and the native tool's JSON
 * (bench/native/stats_json.c), so both write the same keys.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CXLSSD_STATS_H
#define CXLSSD_STATS_H

#include <stddef.h>

#include "model/model.h"
#include "trap/trap.h"

enum cxlssd_stat_kind {
    CXLSSD_STAT_U64,
    CXLSSD_STAT_F64,
    CXLSSD_STAT_CHANNELS,
};

enum cxlssd_stat_source {
    CXLSSD_STAT_MODEL,
    CXLSSD_STAT_TRAP,
    CXLSSD_STAT_SERVICE,
};

struct cxlssd_stat {
    const char *name;
    enum cxlssd_stat_kind kind;
    enum cxlssd_stat_source source;
    size_t offset;              /* in the source's struct */
    const char *description;
};

#define CXLSSD_STAT_STRUCT_MODEL    struct cxlssd_stats
#define CXLSSD_STAT_STRUCT_TRAP     struct cxlssd_trap_stats
#define CXLSSD_STAT_STRUCT_SERVICE  struct cxlssd_trap_stats

/* The table; sets *@n to its length. */
static inline const struct cxlssd_stat *cxlssd_stats_table(size_t *n)
{
    static const struct cxlssd_stat table[] = {
#define CXLSSD_STAT(K, S, F, DESC)                                          \
        { #F, CXLSSD_STAT_##K, CXLSSD_STAT_##S,                             \
          offsetof(CXLSSD_STAT_STRUCT_##S, F), DESC },
#include "stats.def"
#undef CXLSSD_STAT
    };

    *n = sizeof(table) / sizeof(table[0]);
    return table;
}

/* Every counter of both structs is in the table (add a row with a field). */
#define CXLSSD_STAT(K, S, F, DESC) + (CXLSSD_STAT_##S != CXLSSD_STAT_MODEL)
_Static_assert(sizeof(struct cxlssd_trap_stats) == sizeof(uint64_t) * (0
#include "stats.def"
               ), "a trap counter is missing from stats.def");
#undef CXLSSD_STAT
#define CXLSSD_STAT(K, S, F, DESC) \
    + (CXLSSD_STAT_##S == CXLSSD_STAT_MODEL && \
       CXLSSD_STAT_##K == CXLSSD_STAT_U64)
_Static_assert(offsetof(struct cxlssd_stats, waf) == sizeof(uint64_t) * (0
#include "stats.def"
               ), "a model counter is missing from stats.def");
#undef CXLSSD_STAT

/* The row's value in @st/@ts (U64 rows). */
static inline uint64_t *cxlssd_stat_u64(const struct cxlssd_stat *row,
                                        struct cxlssd_stats *st,
                                        struct cxlssd_trap_stats *ts)
{
    char *base = row->source == CXLSSD_STAT_MODEL ? (char *)st : (char *)ts;

    return (uint64_t *)(base + row->offset);
}

#endif
