/*
 * cxl-ssd statistics as a read-only QOM property, readable without the
 * guest's help:  qom-get path=/machine/peripheral/<id> property=stats
 * returns a JSON object with the keys of stats.def (model, NAND/FTL, trap
 * delivery; mmio mode has no trap and reports the SERVICE rows, and with
 * media=PATH the media_* and metadata_* rows).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "cxl_ssd.h"
#include "stats.h"

static bool cxl_ssd_visit_row(Visitor *v, const struct cxlssd_stat *row,
                              struct cxlssd_stats *st,
                              struct cxlssd_trap_stats *ts, Error **errp)
{
    uint32_t ch;
    bool ok;

    switch (row->kind) {
    case CXLSSD_STAT_U64:
        return visit_type_uint64(v, row->name, cxlssd_stat_u64(row, st, ts),
                                 errp);
    case CXLSSD_STAT_F64:
        return visit_type_number(v, row->name, &st->waf, errp);
    case CXLSSD_STAT_CHANNELS:
        if (!visit_start_list(v, row->name, NULL, 0, errp)) {
            return false;
        }
        ok = true;
        for (ch = 0; ok && ch < st->channels; ch++) {
            ok = visit_type_uint64(v, NULL, &st->channel_busy_ns[ch], errp);
        }
        visit_end_list(v, NULL);
        return ok;
    }
    return true;
}

/* The media store's rows (stats.def's media block), which mmio mode
 * with media=PATH reports too, from the same store as the trap. */
static bool cxl_ssd_stat_is_media(const struct cxlssd_stat *row)
{
    return g_str_has_prefix(row->name, "media_") ||
           g_str_has_prefix(row->name, "metadata_");
}

static void cxl_ssd_get_stats(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    CXLSSDState *s = CXL_SSD(obj);
    struct cxlssd_stats st;
    struct cxlssd_trap_stats ts = { 0 };
    const struct cxlssd_stat *rows;
    size_t i, n;
    bool ok = true, mmio_media = false;

    if (!s->model) {
        error_setg(errp, "cxl-ssd: statistics exist once realized");
        return;
    }
    cxlssd_model_get_stats(s->model, &st);
    if (s->trap) {
        cxlssd_trap_get_stats(s->trap, &ts);
    } else if (s->mmio) {
        mmio_media = cxl_ssd_mmio_get_stats(s, &ts);
    }
    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    rows = cxlssd_stats_table(&n);
    for (i = 0; ok && i < n; i++) {
        if ((rows[i].source == CXLSSD_STAT_TRAP && !s->trap &&
             !(mmio_media && cxl_ssd_stat_is_media(&rows[i]))) ||
            (rows[i].source == CXLSSD_STAT_SERVICE && !s->trap && !s->mmio)) {
            continue;
        }
        ok = cxl_ssd_visit_row(v, &rows[i], &st, &ts, errp);
    }
    if (ok) {
        visit_check_struct(v, errp);
    }
    visit_end_struct(v, NULL);
}

void cxl_ssd_stats_class_init(ObjectClass *oc)
{
    const struct cxlssd_stat *rows;
    g_autoptr(GString) desc = g_string_new("read-only counters:");
    size_t i, n;

    object_class_property_add(oc, "stats", "CxlSsdStats", cxl_ssd_get_stats,
                              NULL, NULL, NULL);
    rows = cxlssd_stats_table(&n);
    for (i = 0; i < n; i++) {
        g_string_append_printf(desc, "%s %s", i ? "," : "", rows[i].name);
    }
    object_class_property_set_description(oc, "stats", desc->str);
}
