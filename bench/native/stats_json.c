/*
 * cxlssd-native: the device's counters as stats-cxl-vmem0.json, with the
 * keys of the stats table (hw/cxl-ssd/stats.def), the same as the QEMU
 * device's `stats` property in uffd mode; and the key=value summary lines
 * on stdout.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../hw/cxl-ssd/stats.h"
#include "native.h"

int native_write_stats(const char *path, struct cxlssd_stats *st,
                       struct cxlssd_trap_stats *ts)
{
    const struct cxlssd_stat *rows;
    size_t n;
    FILE *f = native_create(path);

    if (!f) {
        return -1;
    }
    rows = cxlssd_stats_table(&n);
    fputs("{", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n \"%s\": ", i ? "," : "", rows[i].name);
        switch (rows[i].kind) {
        case CXLSSD_STAT_U64:
            fprintf(f, "%" PRIu64, *cxlssd_stat_u64(&rows[i], st, ts));
            break;
        case CXLSSD_STAT_F64:
            fprintf(f, "%.6g", st->waf);
            break;
        case CXLSSD_STAT_CHANNELS:
            fputs("[", f);
            for (uint32_t c = 0; c < st->channels; c++) {
                fprintf(f, "%s%" PRIu64, c ? ", " : "",
                        st->channel_busy_ns[c]);
            }
            fputs("]", f);
            break;
        }
    }
    fputs("\n}\n", f);
    int bad = ferror(f);
    return fclose(f) || bad ? -1 : 0;
}

static void print_component_us(const char *prefix, const double *v)
{
    for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
        /* "model_ns" -> "p50_model_us" */
        int len = (int)strlen(native_bd_comp[c]) - 3;
        printf(" %s_%.*s_us=%.2f", prefix, len, native_bd_comp[c],
               v[c] / 1000.0);
    }
}

void native_print_summary(const struct native_opts *o,
                          const struct cxlssd_stats *st,
                          const struct cxlssd_trap_stats *ts,
                          const struct native_mio_run *dax,
                          const struct native_bd_result *bd, bool have_bd)
{
    const struct cxlssd_config *mc = &o->mc;

    printf("native: delivery=%s handler_threads=%u device_size=%" PRIu64
           " cache_bytes=%" PRIu64 " mio_rc=%d misses=%" PRIu64
           " loading_waits=%" PRIu64 " faults=%" PRIu64 " sigbus_faults=%"
           PRIu64 " wp_faults=%" PRIu64 " duplicate_faults=%" PRIu64
           " evictions_clean=%" PRIu64 " evictions_dirty=%" PRIu64
           " records=%" PRIu64 " records_dropped=%" PRIu64 " elapsed_s=%.3f\n",
           cxlssd_enum_name(CXLSSD_PROP_DELIVERY, mc->delivery),
           mc->handler_threads, mc->device_size,
           cxlssd_config_cache_frames(mc) * mc->page_size, dax->rc,
           st->misses, st->loading_waits, ts->faults, ts->sigbus_faults,
           ts->wp_faults, ts->duplicate_faults, st->evictions_clean,
           st->evictions_dirty, bd->records, ts->records_dropped,
           dax->elapsed_s);
    if (have_bd) {
        printf("native-breakdown: rows=%" PRIu64 " records_in_window=%"
               PRIu64 " unmatched_slow_samples=%" PRIu64 " clipped=%" PRIu64
               " sum_errors=%" PRIu64, bd->rows, bd->records_in_window,
               bd->unmatched_slow, bd->clipped, bd->sum_errors);
        print_component_us("p50", bd->p50);
        print_component_us("p99", bd->p99);
        printf("\n");
    }
    fflush(stdout);
}
