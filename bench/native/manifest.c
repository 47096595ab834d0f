/*
 * cxlssd-native: manifest.json, what a VM point's manifest holds
 * (bench/lib/point.py): the command line, every device property of the
 * table (hw/cxl-ssd/model/props.def) with its effective value, typed as
 * QMP's qom-get returns it, the dirty-tracking mechanism, MIO's options,
 * host facts, times and status.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "native.h"

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s);
        } else if ((unsigned char)*s < 0x20) {
            fprintf(f, "\\u%04x", *s);
        } else {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

static void json_key_str(FILE *f, const char *key, const char *value)
{
    fprintf(f, ",\n \"%s\": ", key);
    json_str(f, value);
}

static void json_str_list(FILE *f, int n, char **v)
{
    fputs("[", f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        json_str(f, v[i]);
    }
    fputs("]", f);
}

/* "device_properties": every row of the table, then the memdev's size and
 * the derived cache frames. */
static void write_properties(FILE *f, const struct cxlssd_config *mc)
{
    char val[4096];

    fputs(",\n \"device_properties\": {\n", f);
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        const struct cxlssd_prop *p = &cxlssd_props[i];

        fprintf(f, "  \"%s\": ", p->name);
        cxlssd_prop_format(p, mc, val, sizeof(val));
        switch (p->kind) {
        case CXLSSD_PROP_U32:
        case CXLSSD_PROP_TIME:
        case CXLSSD_PROP_SIZE:
            fputs(val, f);
            break;
        case CXLSSD_PROP_BOOL:
            fputs(cxlssd_prop_get_num(p, mc) ? "true" : "false", f);
            break;
        default:
            json_str(f, val);
            break;
        }
        fputs(",\n", f);
    }
    fprintf(f, "  \"size\": %" PRIu64 ",\n  \"cache-frames\": %" PRIu64
            "\n }", mc->device_size, cxlssd_config_cache_frames(mc));
}

static void write_breakdown(FILE *f, const struct native_bd_result *bd)
{
    fprintf(f, ",\n \"breakdown\": {\"rows\": %" PRIu64
            ", \"records_in_window\": %" PRIu64
            ", \"unmatched_slow_samples\": %" PRIu64
            ", \"clipped\": %" PRIu64 ", \"sum_errors\": %" PRIu64,
            bd->rows, bd->records_in_window, bd->unmatched_slow,
            bd->clipped, bd->sum_errors);
    const struct {
        const char *name;
        const double *v;
    } pct[] = { { "p50", bd->p50 }, { "p99", bd->p99 }, { "p999", bd->p999 } };

    for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
        for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++) {
            fprintf(f, ", \"%s_%s\": %.0f", pct[k].name, native_bd_comp[c],
                    pct[k].v[c]);
        }
    }
    fputs("}", f);
}

int native_write_manifest(const char *path, const struct native_manifest *m)
{
    const struct native_opts *o = m->opts;
    char buf[256], ts_utc[64];
    struct utsname un;
    FILE *f = native_create(path);

    if (!f) {
        return -1;
    }
    fputs("{\n \"tool\": \"cxlssd-native\",\n \"command_line\": ", f);
    json_str_list(f, m->argc, m->argv);
    json_key_str(f, "device_command_line", o->device_args);
    write_properties(f, &o->mc);
    json_key_str(f, "dirty_tracking", m->dirty_mechanism);
    fputs(",\n \"mio_options\": ", f);
    json_str_list(f, o->mio_argc, o->mio_argv);
    json_key_str(f, "accelerator", "native");
    native_host_cpu(buf, sizeof(buf));
    json_key_str(f, "host_cpu", buf);
    uname(&un);
    json_key_str(f, "host_kernel", un.release);
    native_host_thp("enabled", buf, sizeof(buf));
    json_key_str(f, "host_thp_enabled", buf);
    native_host_thp("shmem_enabled", buf, sizeof(buf));
    json_key_str(f, "host_thp_shmem", buf);
    native_git_commit(buf, sizeof(buf));
    json_key_str(f, "git_commit", buf);
    strftime(ts_utc, sizeof(ts_utc), "%Y-%m-%dT%H:%M:%SZ",
             gmtime(&m->started));
    json_key_str(f, "started_utc", ts_utc);
    fprintf(f, ",\n \"elapsed_s\": %.1f", difftime(time(NULL), m->started));
    fprintf(f, ",\n \"mio_rc\": %d,\n \"mio_elapsed_s\": %.3f", m->dax->rc,
            m->dax->elapsed_s);
    if (o->ram_baseline) {
        /* chased in the same MIO run as the device: one rc */
        json_key_str(f, "ram_baseline", "interleaved");
    }
    json_key_str(f, "timer", m->dax->clk.clock_timer ? "clock" : "tsc");
    fprintf(f, ",\n \"records\": %" PRIu64, m->bd->records);
    if (m->have_bd) {
        write_breakdown(f, m->bd);
    }
    json_key_str(f, "status", m->dax->rc == 0 ? "ok" : "failed");
    fputs("\n}\n", f);
    int bad = ferror(f);
    return fclose(f) || bad ? -1 : 0;
}
