/*
 * cxl-ssd statistics as a read-only QOM property, readable without the
 * guest's help:  qom-get path=/machine/peripheral/<id> property=stats
 * returns a JSON object of counters (model, NAND/FTL, trap delivery).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "cxl_ssd.h"

#define MODEL_U64(f) { #f, offsetof(struct cxlssd_stats, f) }
static const struct {
    const char *name;
    size_t offset;
} cxl_ssd_model_counters[] = {
    MODEL_U64(misses), MODEL_U64(loading_waits), MODEL_U64(trapped_hits),
    MODEL_U64(write_hits), MODEL_U64(evictions_clean),
    MODEL_U64(evictions_dirty), MODEL_U64(prefetch_issued),
    MODEL_U64(prefetch_used), MODEL_U64(prefetch_late),
    MODEL_U64(resident_pages), MODEL_U64(free_frames), MODEL_U64(gc_runs),
    MODEL_U64(gc_pages_moved), MODEL_U64(erases), MODEL_U64(nand_reads),
    MODEL_U64(nand_writes), MODEL_U64(host_writes),
};

#define TRAP_U64(f) { #f, offsetof(struct cxlssd_trap_stats, f) }
static const struct {
    const char *name;
    size_t offset;
} cxl_ssd_trap_counters[] = {
    TRAP_U64(faults), TRAP_U64(wp_faults), TRAP_U64(duplicate_faults),
    TRAP_U64(remaps),
    TRAP_U64(unclocked_misses),
    TRAP_U64(wakes), TRAP_U64(madvise_calls), TRAP_U64(pages_unmapped),
    TRAP_U64(bql_wait_ns), TRAP_U64(records_written),
    TRAP_U64(records_dropped),
};

static void cxl_ssd_visit_channels(Visitor *v, struct cxlssd_stats *st,
                                   Error **errp)
{
    uint32_t ch;

    if (!visit_start_list(v, "channel_busy_ns", NULL, 0, errp)) {
        return;
    }
    for (ch = 0; ch < st->channels; ch++) {
        if (!visit_type_uint64(v, NULL, &st->channel_busy_ns[ch], errp)) {
            break;
        }
    }
    visit_end_list(v, NULL);
}

static void cxl_ssd_get_stats(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    CXLSSDState *s = CXL_SSD(obj);
    struct cxlssd_stats st;
    struct cxlssd_trap_stats ts = { 0 };
    size_t i;
    bool ok = true;

    if (!s->model) {
        error_setg(errp, "cxl-ssd: statistics exist once realized");
        return;
    }
    cxlssd_model_get_stats(s->model, &st);
    if (s->trap) {
        cxlssd_trap_get_stats(s->trap, &ts);
    }
    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    for (i = 0; ok && i < ARRAY_SIZE(cxl_ssd_model_counters); i++) {
        ok = visit_type_uint64(v, cxl_ssd_model_counters[i].name,
                    (uint64_t *)((char *)&st + cxl_ssd_model_counters[i].offset),
                    errp);
    }
    ok = ok && visit_type_number(v, "waf", &st.waf, errp);
    if (s->trap) {
        for (i = 0; ok && i < ARRAY_SIZE(cxl_ssd_trap_counters); i++) {
            ok = visit_type_uint64(v, cxl_ssd_trap_counters[i].name,
                    (uint64_t *)((char *)&ts + cxl_ssd_trap_counters[i].offset),
                    errp);
        }
    }
    if (s->mmio) {
        /* mmio mode: no userfaultfd; the same names for what exists */
        uint64_t mv[3];
        static const char *const mname[3] = {
            "bql_wait_ns", "records_written", "records_dropped",
        };

        cxl_ssd_mmio_get_stats(s, &mv[0], &mv[1], &mv[2]);
        for (i = 0; ok && i < ARRAY_SIZE(mv); i++) {
            ok = visit_type_uint64(v, mname[i], &mv[i], errp);
        }
    }
    if (ok) {
        cxl_ssd_visit_channels(v, &st, errp);
        visit_check_struct(v, errp);
    }
    visit_end_struct(v, NULL);
}

void cxl_ssd_stats_class_init(ObjectClass *oc)
{
    object_class_property_add(oc, "stats", "CxlSsdStats", cxl_ssd_get_stats,
                              NULL, NULL, NULL);
    object_class_property_set_description(oc, "stats",
        "read-only counters: misses, trapped hits, evictions clean/dirty, "
        "prefetch issued/used/late, GC, NAND busy time per channel, BQL "
        "wait, records written/dropped");
}
