/*
 * cxlssd-native: the host-native comparator.  The same device model and
 * trap engine as `-device cxl-ssd`, serving a region of this process's
 * memory (memfd + userfaultfd MINOR), with MIO's pointer chase (or its
 * --verify mode) running natively on it in threads of this process.
 * Writes the files a VM point writes (bench/lib/point.py), so
 * bench/lib/stats.py summarize_point() reads both alike:
 *
 *   mio-dax-{summary,cdf,hist,raw}.csv, mio-dax.out   MIO on the region
 *   mio-ram-*.csv, mio-ram.out     --ram-baseline: the same chase on plain
 *                                  memory (a second memfd, no trap), sampled
 *                                  interleaved with the device's in the same
 *                                  MIO run (mio --baseline); .out = dax's
 *   misses.csv                     per-miss records (record.h schema)
 *   breakdown.csv, breakdown-percentiles.csv   per-miss breakdown (exact:
 *                                  MIO's samples joined with the records)
 *   stats-cxl-vmem0.json           the device's counters (same names as the
 *                                  QEMU device's `stats` property)
 *   manifest.json                  every effective property, options, host,
 *                                  git commit, status
 *
 * See bench/native/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../../hw/cxl-ssd/model/config.h"
#include "../../hw/cxl-ssd/model/model.h"
#include "../../hw/cxl-ssd/trap/trap.h"
#include "../mio/mio.h"
#include "native.h"

#define DEFAULT_SIZE (256ull << 20)     /* boot-guest's --mem-size default */
/* Measured on this project's host with bench/native/delivery-probe
 * (README.md): a busy-polling handler thread has the smallest median miss
 * latency here; sigbus and poll are options. */
#define DEFAULT_DELIVERY CXLSSD_DELIVERY_BUSY
#define MAX_MIO_ARGS 256

struct opts {
    struct cxlssd_config mc;
    uint64_t size;
    bool size_set;
    enum cxlssd_delivery delivery;
    uint32_t handler_threads;
    const char *handler_cpus;
    bool compensate;
    bool track_dirty;
    const char *record;
    const char *out;
    bool ram_baseline;
    bool no_breakdown;
    bool quiet;
    /* the --device strings as given, for the manifest */
    char device_args[4096];
    int mio_argc;
    char **mio_argv;
};

static void usage(FILE *f)
{
    fputs(
"usage: cxlssd-native [options] [-- MIO-OPTIONS...]\n"
"Emulated CXL-SSD region inside this process (memfd + userfaultfd MINOR +\n"
"the cxl-ssd model and trap engine), with MIO running natively on it.\n"
"\n"
"  --device P=V[,P=V...]  cxl-ssd properties, same names and defaults as\n"
"                    -device cxl-ssd (repeatable; \",,\" is a literal comma)\n"
"  --size N          device size (the memdev size; default 256M); also\n"
"                    --device size=N\n"
"  --delivery poll|busy|sigbus   miss delivery (default busy: fastest\n"
"                    here, bench/native/delivery-probe)\n"
"  --handler-threads N   handler threads (default 1)\n"
"  --record FILE     per-miss CSV (default OUT/misses.csv with --out)\n"
"  --out DIR         results folder (created): the files of a VM point\n"
"  --ram-baseline    also chase plain memory (a second memfd, no trap) in\n"
"                    the same MIO run, samples interleaved with the\n"
"                    device's (mio --baseline; mio-ram-*.csv)\n"
"  --no-breakdown    skip breakdown.csv\n"
"  --quiet           no informational lines on stderr\n"
"  --help            this text and the device properties\n"
"\n"
"MIO options (bench/mio, `mio --help`) follow `--`; --target is ignored\n"
"(MIO runs on the region); --wss-ratio uses the device's cache size unless\n"
"--cache-bytes is given; with --out the output files are set.\n"
"Prints MIO's lines, then `native:` and `native-breakdown:` key=value\n"
"lines.  Exit status: MIO's (0 ok, 1 verify mismatches, ...), 4 on a\n"
"setup error, 2 on a usage error.\n"
"\n"
"Device properties:\n", f);
    static const char *const glue[][2] = {
        { "delivery", "poll, busy (handler threads) or sigbus (in-thread; "
          "in QEMU under TCG only); default busy here, poll in QEMU" },
        { "handler-threads", "handler threads, 1..64 (default 1)" },
        { "handler-cpus", "CPUs for handler threads, e.g. \"0,1\" "
          "(default: not pinned)" },
        { "compensate", "shorten each miss's NAND wait by the delivery time "
          "already spent since the host fault, measured per miss from perf "
          "samples of the page fault tracepoints (needs CAP_PERFMON; "
          "default off)" },
        { "track-dirty", "exact dirty state with userfaultfd write-protect "
          "(default on)" },
        { "record", "path of the per-miss CSV" },
        { "mode", "uffd only (mmio has no native analogue)" },
        { "bql", "off only (no BQL outside QEMU)" },
        { "size", "device size (the memdev size in QEMU), default 256M" },
    };
    for (size_t i = 0; i < sizeof(glue) / sizeof(glue[0]); i++) {
        fprintf(f, "  %-22s %s\n", glue[i][0], glue[i][1]);
    }
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        fprintf(f, "  %-22s %s\n", cxlssd_props[i].name,
                cxlssd_props[i].description);
    }
}

static int parse_bool(const char *v, bool *out)
{
    if (!strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes") ||
        !strcmp(v, "1")) {
        *out = true;
    } else if (!strcmp(v, "off") || !strcmp(v, "false") ||
               !strcmp(v, "no") || !strcmp(v, "0")) {
        *out = false;
    } else {
        return -1;
    }
    return 0;
}

/* One property, as -device cxl-ssd would take it. */
static int set_prop(struct opts *o, const char *name, const char *value)
{
    char err[256];
    if (!strcmp(name, "delivery")) {
        if (cxlssd_delivery_from_name_any(value, &o->delivery) < 0) {
            fprintf(stderr, "cxlssd-native: delivery=%s: must be one of "
                    "poll, busy, sigbus\n", value);
            return -1;
        }
    } else if (!strcmp(name, "handler-threads")) {
        char *end;
        unsigned long v = strtoul(value, &end, 10);
        if (*end || !*value || v < 1 || v > 64) {
            fprintf(stderr, "cxlssd-native: handler-threads=%s: must be in "
                    "1..64\n", value);
            return -1;
        }
        o->handler_threads = (uint32_t)v;
    } else if (!strcmp(name, "handler-cpus")) {
        o->handler_cpus = value;
    } else if (!strcmp(name, "compensate") || !strcmp(name, "track-dirty")
               || !strcmp(name, "bql")) {
        bool b;
        if (parse_bool(value, &b) < 0) {
            fprintf(stderr, "cxlssd-native: %s=%s: must be on or off\n", name,
                    value);
            return -1;
        }
        if (!strcmp(name, "bql")) {
            if (b) {
                fprintf(stderr, "cxlssd-native: bql=on: there is no BQL "
                        "outside QEMU\n");
                return -1;
            }
        } else if (!strcmp(name, "compensate")) {
            o->compensate = b;
        } else {
            o->track_dirty = b;
        }
    } else if (!strcmp(name, "record")) {
        o->record = value;
    } else if (!strcmp(name, "mode")) {
        if (strcmp(value, "uffd")) {
            fprintf(stderr, "cxlssd-native: mode=%s: only uffd exists "
                    "natively (mmio is QEMU's MMIO exit path)\n", value);
            return -1;
        }
    } else if (!strcmp(name, "dram-latency-ns")) {
        if (strcmp(value, "0")) {
            fprintf(stderr, "cxlssd-native: dram-latency-ns applies to "
                    "mode=mmio only\n");
            return -1;
        }
    } else {
        if (cxlssd_config_set(&o->mc, name, value, err, sizeof(err)) < 0) {
            fprintf(stderr, "cxlssd-native: %s\n", err);
            return -1;
        }
        if (!strcmp(name, "size")) {
            o->size = o->mc.device_size;
            o->size_set = true;
        }
    }
    return 0;
}

/* "a=1,b=x,,y" (QEMU option syntax: ",," is a comma). */
static int parse_device(struct opts *o, const char *arg)
{
    size_t used = strlen(o->device_args);
    snprintf(o->device_args + used, sizeof(o->device_args) - used, "%s%s",
             used ? "," : "", arg);
    char *s = strdup(arg);
    if (!s) {
        return -1;
    }
    char *p = s;
    int rc = 0;
    while (*p && rc == 0) {
        char *item = p, *w = p;
        while (*p) {
            if (*p == ',' && p[1] == ',') {
                *w++ = ',';
                p += 2;
            } else if (*p == ',') {
                p++;
                break;
            } else {
                *w++ = *p++;
            }
        }
        *w = '\0';
        char *eq = strchr(item, '=');
        if (!eq) {
            fprintf(stderr, "cxlssd-native: --device %s: expected "
                    "name=value\n", item);
            rc = -1;
            break;
        }
        *eq = '\0';
        /* keep the value: props may point into it (handler-cpus, record) */
        char *value = strdup(eq + 1);
        rc = value ? set_prop(o, item, value) : -1;
    }
    free(s);
    return rc;
}

enum { O_DEVICE = 256, O_SIZE, O_DELIVERY, O_HANDLERS, O_RECORD, O_OUT,
       O_RAM, O_NOBD, O_QUIET, O_HELP };

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        { "device", required_argument, 0, O_DEVICE },
        { "size", required_argument, 0, O_SIZE },
        { "delivery", required_argument, 0, O_DELIVERY },
        { "handler-threads", required_argument, 0, O_HANDLERS },
        { "record", required_argument, 0, O_RECORD },
        { "out", required_argument, 0, O_OUT },
        { "ram-baseline", no_argument, 0, O_RAM },
        { "no-breakdown", no_argument, 0, O_NOBD },
        { "quiet", no_argument, 0, O_QUIET },
        { "help", no_argument, 0, O_HELP },
        { 0, 0, 0, 0 },
    };
    memset(o, 0, sizeof(*o));
    o->size = DEFAULT_SIZE;
    cxlssd_config_defaults(&o->mc, o->size);
    o->delivery = DEFAULT_DELIVERY;
    o->handler_threads = 1;
    o->handler_cpus = "";
    o->track_dirty = true;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
        switch (c) {
        case O_DEVICE:
            if (parse_device(o, optarg) < 0) {
                return 2;
            }
            break;
        case O_SIZE:
            if (set_prop(o, "size", optarg) < 0) {
                return 2;
            }
            break;
        case O_DELIVERY:
            if (set_prop(o, "delivery", optarg) < 0) {
                return 2;
            }
            break;
        case O_HANDLERS:
            if (set_prop(o, "handler-threads", optarg) < 0) {
                return 2;
            }
            break;
        case O_RECORD: o->record = optarg; break;
        case O_OUT: o->out = optarg; break;
        case O_RAM: o->ram_baseline = true; break;
        case O_NOBD: o->no_breakdown = true; break;
        case O_QUIET: o->quiet = true; break;
        case 'h':
        case O_HELP:
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "cxlssd-native: unknown or incomplete option "
                    "'%s' (--help)\n", argv[optind - 1]);
            return 2;
        }
    }
    o->mio_argc = argc - optind;
    o->mio_argv = argv + optind;
    /* the device size decides the defaults derived from it (cache 5%) */
    o->mc.device_size = o->size;
    return -1;
}

/* ---- output helpers ---- */

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

/* A property value as JSON: number, bool (on/off) or string. */
static void json_val(FILE *f, const char *v)
{
    char *end;
    if (*v) {
        strtoull(v, &end, 10);
        if (!*end && (v[0] != '0' || !v[1])) {
            fputs(v, f);
            return;
        }
    }
    if (!strcmp(v, "on") || !strcmp(v, "off")) {
        fputs(!strcmp(v, "on") ? "true" : "false", f);
        return;
    }
    json_str(f, v);
}

static void slurp_to(FILE *out, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        fwrite(buf, 1, n, out);
    }
    fclose(f);
    fflush(out);
}

static void first_line(const char *cmd, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p) {
        return;
    }
    if (fgets(buf, (int)len, p)) {
        buf[strcspn(buf, "\n")] = '\0';
    }
    pclose(p);
}

static void host_cpu(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') {
                    c++;
                }
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, len, "%s", c);
            }
            break;
        }
    }
    if (f) {
        fclose(f);
    }
}

static void thp_state(const char *name, char *buf, size_t len)
{
    char path[128], line[256];
    snprintf(buf, len, "unknown");
    snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/%s",
             name);
    FILE *f = fopen(path, "r");
    if (f && fgets(line, sizeof(line), f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b) {
            *b = '\0';
            snprintf(buf, len, "%s", a + 1);
        }
    }
    if (f) {
        fclose(f);
    }
}

/* ---- MIO ---- */

struct mio_run {
    int rc;
    uint64_t samples, threads, loads;
    bool verify;
    uint64_t *starts, *durations;
    int *tids;
    struct native_clock clk;
    double elapsed_s;
};

/* Run MIO (chase or verify) with the user's options on @map.  @tag is
 * "dax" (output file names).  With @baseline (--ram-baseline), MIO also
 * chases that region, sample by sample interleaved with @map (--baseline
 * named "memfd"; files mio-ram-*).  stdout goes to OUT/mio-@tag.out (and
 * mio-ram.out with a baseline) and is copied to ours afterwards. */
static int run_mio(const struct opts *o, const char *tag, char *map,
                   uint64_t len, const char *target_name, bool want_samples,
                   char *baseline, uint64_t baseline_len,
                   struct mio_run *res)
{
    memset(res, 0, sizeof(*res));
    char *argv[MAX_MIO_ARGS];
    char files[8][4096], cache[32];
    int argc = 0;
    argv[argc++] = "mio";
    snprintf(cache, sizeof(cache), "%" PRIu64,
             cxlssd_config_cache_frames(&o->mc) * o->mc.page_size);
    bool has_cache = false;
    for (int i = 0; i < o->mio_argc; i++) {
        has_cache |= !strncmp(o->mio_argv[i], "--cache-bytes", 13);
    }
    if (!has_cache) {
        argv[argc++] = "--cache-bytes";
        argv[argc++] = cache;
    }
    if (o->mio_argc + 26 > MAX_MIO_ARGS) {
        fprintf(stderr, "cxlssd-native: too many MIO options\n");
        return -1;
    }
    for (int i = 0; i < o->mio_argc; i++) {
        argv[argc++] = o->mio_argv[i];
    }
    if (baseline) {
        argv[argc++] = "--baseline";
        argv[argc++] = "memfd";     /* only names embed.baseline_map */
    }
    if (o->out) {
        static const char *const kinds[4] = { "summary", "cdf", "hist",
                                              "raw" };
        static const char *const flags[2][4] = {
            { "--summary-csv", "--cdf", "--hist", "--raw" },
            { "--baseline-summary-csv", "--baseline-cdf", "--baseline-hist",
              "--baseline-raw" },
        };
        for (int b = 0; b < (baseline ? 2 : 1); b++) {
            for (int k = 0; k < 4; k++) {
                char *f = files[b * 4 + k];
                snprintf(f, sizeof(files[0]), "%s/mio-%s-%s.csv", o->out,
                         b ? "ram" : tag, kinds[k]);
                argv[argc++] = (char *)flags[b][k];
                argv[argc++] = f;
            }
        }
    }
    argv[argc] = NULL;

    struct mio_config cfg;
    int rc = mio_parse_args(argc, argv, &cfg);
    if (rc >= 0) {
        mio_free_config(&cfg);
        return rc == 0 ? -2 : -1;   /* --help inside MIO options */
    }
    /* getopt_long permutes argv; the user's strings are untouched */
    cfg.target = target_name;
    struct mio_embed emb;
    memset(&emb, 0, sizeof(emb));
    emb.map = map;
    emb.len = len;
    emb.baseline_map = baseline;
    emb.baseline_len = baseline_len;
    res->verify = cfg.verify;
    res->threads = cfg.threads;
    res->samples = cfg.samples;
    res->loads = cfg.loads_per_sample;
    if (want_samples && !cfg.verify) {
        size_t n = (size_t)cfg.samples * cfg.threads;
        res->starts = calloc(n, sizeof(uint64_t));
        res->durations = calloc(n, sizeof(uint64_t));
        res->tids = calloc(cfg.threads, sizeof(int));
        if (!res->starts || !res->durations || !res->tids) {
            fprintf(stderr, "cxlssd-native: out of memory for samples\n");
            mio_free_config(&cfg);
            return -1;
        }
        emb.starts = res->starts;
        emb.samples = res->durations;
        emb.tids = res->tids;
    }
    cfg.embed = &emb;

    int saved = -1;
    char outpath[4096];
    if (o->out) {
        snprintf(outpath, sizeof(outpath), "%s/mio-%s.out", o->out, tag);
        int fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                      0644);
        fflush(stdout);
        saved = fd >= 0 ? dup(1) : -1;
        if (saved >= 0) {
            dup2(fd, 1);
        }
        if (fd >= 0) {
            close(fd);
        }
    }
    long double tsc0, mono0, tsc1, mono1;
    native_anchor(&tsc0, &mono0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    rc = cfg.verify ? mio_run_verify(&cfg) : mio_run_chase(&cfg);
    clock_gettime(CLOCK_MONOTONIC, &b);
    native_anchor(&tsc1, &mono1);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, 1);
        close(saved);
        slurp_to(stdout, outpath);
    }
    if (o->out && baseline) {   /* one run: the baseline's .out is the same */
        char rampath[4096];
        snprintf(rampath, sizeof(rampath), "%s/mio-ram.out", o->out);
        unlink(rampath);
        if (link(outpath, rampath) < 0) {
            fprintf(stderr, "cxlssd-native: link %s: %s\n", rampath,
                    strerror(errno));
        }
    }
    res->elapsed_s = (double)(b.tv_sec - a.tv_sec) +
                     (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    res->clk.clock_timer = emb.clock_timer;
    res->clk.tsc0 = tsc0;
    res->clk.mono0 = mono0;
    res->clk.ns_per_tick = tsc1 > tsc0 ? (mono1 - mono0) / (tsc1 - tsc0)
                                       : (long double)emb.ns_per_tick;
    res->rc = rc;
    mio_free_config(&cfg);
    return 0;
}

static void free_run(struct mio_run *r)
{
    free(r->starts);
    free(r->durations);
    free(r->tids);
}

/* ---- main ---- */

static int write_stats(const char *path, const struct cxlssd_stats *st,
                       const struct cxlssd_trap_stats *ts)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cxlssd-native: open %s: %s\n", path,
                strerror(errno));
        return -1;
    }
#define U(name, v) fprintf(f, " \"%s\": %" PRIu64 ",\n", name, (uint64_t)(v))
    fputs("{\n", f);
    U("misses", st->misses); U("loading_waits", st->loading_waits);
    U("trapped_hits", st->trapped_hits); U("write_hits", st->write_hits);
    U("evictions_clean", st->evictions_clean);
    U("evictions_dirty", st->evictions_dirty);
    U("prefetch_issued", st->prefetch_issued);
    U("prefetch_used", st->prefetch_used);
    U("prefetch_late", st->prefetch_late);
    U("resident_pages", st->resident_pages);
    U("free_frames", st->free_frames); U("gc_runs", st->gc_runs);
    U("gc_pages_moved", st->gc_pages_moved); U("erases", st->erases);
    U("nand_reads", st->nand_reads); U("nand_writes", st->nand_writes);
    U("host_writes", st->host_writes);
    fprintf(f, " \"waf\": %.6g,\n", st->waf);
    U("faults", ts->faults); U("wp_faults", ts->wp_faults);
    U("duplicate_faults", ts->duplicate_faults); U("wakes", ts->wakes);
    U("remaps", ts->remaps);
    U("unclocked_misses", ts->unclocked_misses);
    U("madvise_calls", ts->madvise_calls);
    U("pages_unmapped", ts->pages_unmapped);
    U("bql_wait_ns", ts->bql_wait_ns);
    U("records_written", ts->records_written);
    U("records_dropped", ts->records_dropped);
    U("sigbus_faults", ts->sigbus_faults);
#undef U
    fputs(" \"channel_busy_ns\": [", f);
    for (uint32_t c = 0; c < st->channels; c++) {
        fprintf(f, "%s%" PRIu64, c ? ", " : "", st->channel_busy_ns[c]);
    }
    fputs("]\n}\n", f);
    int bad = ferror(f);
    return fclose(f) || bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    int prc = parse_opts(argc, argv, &o);
    if (prc >= 0) {
        return prc;
    }
    char err[512];
    time_t t_start = time(NULL);
    if (cxlssd_config_validate(&o.mc, err, sizeof(err)) < 0) {
        fprintf(stderr, "cxlssd-native: %s\n", err);
        return 2;
    }
    if (o.out && mkdir(o.out, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "cxlssd-native: mkdir %s: %s\n", o.out,
                strerror(errno));
        return 4;
    }
    char recpath[4096] = "";
    if (o.record) {
        snprintf(recpath, sizeof(recpath), "%s", o.record);
    } else if (o.out) {
        snprintf(recpath, sizeof(recpath), "%s/misses.csv", o.out);
    }
    /* Signals from the trap must reach every accessing thread (MIO's
     * threads inherit this mask). */
    sigset_t bus;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, NULL);

    /* The media: a memfd, every page allocated (MINOR faults need pages
     * in the page cache), one MAP_SHARED mapping registered with the trap. */
    uint64_t size = o.mc.device_size;
    int fd = memfd_create("cxlssd-native", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) < 0 ||
        fallocate(fd, 0, 0, (off_t)size) < 0) {
        fprintf(stderr, "cxlssd-native: memfd of %" PRIu64 " bytes: %s\n",
                size, strerror(errno));
        return 4;
    }
    char *region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                        0);
    if (region == MAP_FAILED) {
        fprintf(stderr, "cxlssd-native: mmap: %s\n", strerror(errno));
        return 4;
    }
    madvise(region, size, MADV_NOHUGEPAGE);
    /* --ram-baseline: plain memory of the same kind (4 KiB shmem pages of a
     * memfd, no trap), as large as the device so any MIO options that fit
     * the device fit it; its own memfd, since the chains hold virtual
     * addresses and must not share pages with the device's.  Pages are
     * allocated when MIO builds the chains, before the timed phase. */
    char *plain = NULL;
    int plain_fd = -1;
    if (o.ram_baseline) {
        plain_fd = memfd_create("cxlssd-native-baseline", MFD_CLOEXEC);
        if (plain_fd < 0 || ftruncate(plain_fd, (off_t)size) < 0 ||
            (plain = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
                          plain_fd, 0)) == MAP_FAILED) {
            fprintf(stderr, "cxlssd-native: ram baseline memfd of %" PRIu64
                    " bytes: %s\n", size, strerror(errno));
            return 4;
        }
        madvise(plain, size, MADV_NOHUGEPAGE);
    }
    struct cxlssd_model *model = cxlssd_model_new(&o.mc, err, sizeof(err));
    if (!model) {
        fprintf(stderr, "cxlssd-native: %s\n", err);
        return 2;
    }
    bool sigbus = o.delivery == CXLSSD_DELIVERY_SIGBUS;
    struct cxlssd_trap_config tc = {
        .delivery = o.delivery,
        .handler_threads = o.handler_threads,
        .handler_cpus = o.handler_cpus,
        .compensate = o.compensate,
        .track_dirty = o.track_dirty,
        .record_path = recpath[0] ? recpath : NULL,
        .mode_name = sigbus ? "uffd-sigbus" : "uffd",
        .accel_name = "native",
    };
    struct cxlssd_trap *trap = cxlssd_trap_new(model, region, size, &tc, NULL,
                                               err, sizeof(err));
    if (!trap) {
        fprintf(stderr, "cxlssd-native: %s\n", err);
        return 4;
    }
    char dirty_mech[256];
    snprintf(dirty_mech, sizeof(dirty_mech), "%s",
             cxlssd_trap_dirty_mechanism(trap));
    if (!o.quiet) {
        fprintf(stderr, "cxlssd-native: %" PRIu64 "-byte device, %" PRIu64
                " cache frames, delivery=%s, %u handler thread(s); dirty "
                "tracking: %s\n", size, cxlssd_config_cache_frames(&o.mc),
                cxlssd_delivery_name(o.delivery), o.handler_threads,
                dirty_mech);
    }

    struct mio_run dax;
    bool want_bd = o.out && !o.no_breakdown && recpath[0];
    int r = run_mio(&o, "dax", region, size, "cxl-ssd-native", want_bd,
                    plain, size, &dax);
    struct cxlssd_stats st;
    struct cxlssd_trap_stats ts;
    cxlssd_model_get_stats(model, &st);
    cxlssd_trap_get_stats(trap, &ts);
    cxlssd_trap_free(trap);     /* drains the records */
    if (r < 0) {
        return r == -2 ? 0 : 2;
    }

    struct native_bd_result bd;
    memset(&bd, 0, sizeof(bd));
    bool have_bd = false;
    if (want_bd && !dax.verify && dax.loads == 1) {
        struct native_bd_input in = {
            .records_csv = recpath,
            .threads = (unsigned)dax.threads,
            .samples = dax.samples,
            .starts = dax.starts,
            .durations = dax.durations,
            .tids = dax.tids,
            .clk = dax.clk,
            .miss_threshold_ns = (o.mc.t_read_ns + o.mc.t_xfer_ns) / 2,
        };
        have_bd = native_breakdown(&in, o.out, &bd) == 0;
    } else if (recpath[0]) {
        /* count the rows for the statistics */
        FILE *f = fopen(recpath, "r");
        int c, last = '\n';
        while (f && (c = fgetc(f)) != EOF) {
            bd.records += c == '\n';
            last = c;
        }
        bd.records -= bd.records > 0;   /* header */
        (void)last;
        if (f) {
            fclose(f);
        }
    }
    if (recpath[0]) {
        ts.records_written = bd.records;    /* after the final drain */
    }
    if (o.out) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/stats-cxl-vmem0.json", o.out);
        write_stats(p, &st, &ts);
    }

    printf("native: delivery=%s handler_threads=%u device_size=%" PRIu64
           " cache_bytes=%" PRIu64 " mio_rc=%d misses=%" PRIu64
           " loading_waits=%" PRIu64 " faults=%" PRIu64 " sigbus_faults=%"
           PRIu64 " wp_faults=%" PRIu64 " duplicate_faults=%" PRIu64
           " evictions_clean=%" PRIu64 " evictions_dirty=%" PRIu64
           " records=%" PRIu64 " records_dropped=%" PRIu64 " elapsed_s=%.3f\n",
           cxlssd_delivery_name(o.delivery), o.handler_threads, size,
           cxlssd_config_cache_frames(&o.mc) * o.mc.page_size, dax.rc,
           st.misses, st.loading_waits, ts.faults, ts.sigbus_faults,
           ts.wp_faults, ts.duplicate_faults, st.evictions_clean,
           st.evictions_dirty, bd.records, ts.records_dropped,
           dax.elapsed_s);
    if (have_bd) {
        printf("native-breakdown: rows=%" PRIu64 " records_in_window=%"
               PRIu64 " unmatched_slow_samples=%" PRIu64 " clipped=%" PRIu64
               " sum_errors=%" PRIu64, bd.rows, bd.records_in_window,
               bd.unmatched_slow, bd.clipped, bd.sum_errors);
        for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
            char name[64];
            snprintf(name, sizeof(name), "%s", native_bd_comp[c]);
            name[strlen(name) - 3] = '\0';      /* drop "_ns" */
            printf(" p50_%s_us=%.2f", name, bd.p50[c] / 1000.0);
        }
        for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
            char name[64];
            snprintf(name, sizeof(name), "%s", native_bd_comp[c]);
            name[strlen(name) - 3] = '\0';
            printf(" p99_%s_us=%.2f", name, bd.p99[c] / 1000.0);
        }
        printf("\n");
    }
    fflush(stdout);

    if (o.out) {
        char p[4096], buf[256];
        snprintf(p, sizeof(p), "%s/manifest.json", o.out);
        FILE *f = fopen(p, "w");
        if (!f) {
            fprintf(stderr, "cxlssd-native: open %s: %s\n", p,
                    strerror(errno));
            return 4;
        }
        fputs("{\n \"tool\": \"cxlssd-native\",\n \"command_line\": [", f);
        for (int i = 0; i < argc; i++) {
            fputs(i ? ", " : "", f);
            json_str(f, argv[i]);
        }
        fputs("],\n \"device_command_line\": ", f);
        json_str(f, o.device_args);
        fputs(",\n \"device_properties\": {\n", f);
        char props[8192];
        cxlssd_config_format(&o.mc, props, sizeof(props), '\n');
        for (char *line = strtok(props, "\n"); line;
             line = strtok(NULL, "\n")) {
            char *eq = strchr(line, '=');
            if (!eq) {
                continue;
            }
            *eq = '\0';
            fputs("  ", f);
            json_str(f, line);
            fputs(": ", f);
            json_val(f, eq + 1);
            fputs(",\n", f);
        }
        fprintf(f, "  \"mode\": \"uffd\",\n  \"bql\": false,\n"
                "  \"delivery\": \"%s\",\n  \"handler-threads\": %u,\n"
                "  \"handler-cpus\": ", cxlssd_delivery_name(o.delivery),
                o.handler_threads);
        json_str(f, o.handler_cpus);
        fprintf(f, ",\n  \"compensate\": %s,\n  \"track-dirty\": %s,\n"
                "  \"record\": ", o.compensate ? "true" : "false",
                o.track_dirty ? "true" : "false");
        json_str(f, recpath);
        fprintf(f, ",\n  \"cache-frames\": %" PRIu64 "\n },\n",
                cxlssd_config_cache_frames(&o.mc));
        fputs(" \"dirty_tracking\": ", f);
        json_str(f, dirty_mech);
        fputs(",\n \"mio_options\": [", f);
        for (int i = 0; i < o.mio_argc; i++) {
            fputs(i ? ", " : "", f);
            json_str(f, o.mio_argv[i]);
        }
        fputs("],\n \"accelerator\": \"native\",\n \"host_cpu\": ", f);
        host_cpu(buf, sizeof(buf));
        json_str(f, buf);
        struct utsname un;
        uname(&un);
        fputs(",\n \"host_kernel\": ", f);
        json_str(f, un.release);
        thp_state("enabled", buf, sizeof(buf));
        fputs(",\n \"host_thp_enabled\": ", f);
        json_str(f, buf);
        thp_state("shmem_enabled", buf, sizeof(buf));
        fputs(",\n \"host_thp_shmem\": ", f);
        json_str(f, buf);
        first_line("git -C \"$(dirname \"$(readlink -f /proc/self/exe)\")\" "
                   "rev-parse HEAD 2>/dev/null", buf, sizeof(buf));
        fputs(",\n \"git_commit\": ", f);
        json_str(f, buf[0] ? buf : "unknown");
        char ts_utc[64];
        strftime(ts_utc, sizeof(ts_utc), "%Y-%m-%dT%H:%M:%SZ",
                 gmtime(&t_start));
        fprintf(f, ",\n \"started_utc\": \"%s\",\n \"elapsed_s\": %.1f,\n",
                ts_utc, difftime(time(NULL), t_start));
        fprintf(f, " \"mio_rc\": %d,\n \"mio_elapsed_s\": %.3f,\n",
                dax.rc, dax.elapsed_s);
        if (o.ram_baseline) {
            /* chased in the same MIO run as the device: one rc */
            fputs(" \"ram_baseline\": \"interleaved\",\n", f);
        }
        fprintf(f, " \"timer\": \"%s\",\n", dax.clk.clock_timer ? "clock"
                                                                : "tsc");
        fprintf(f, " \"records\": %" PRIu64 ",\n", bd.records);
        if (have_bd) {
            fprintf(f, " \"breakdown\": {\"rows\": %" PRIu64
                    ", \"records_in_window\": %" PRIu64
                    ", \"unmatched_slow_samples\": %" PRIu64
                    ", \"clipped\": %" PRIu64 ", \"sum_errors\": %" PRIu64,
                    bd.rows, bd.records_in_window, bd.unmatched_slow,
                    bd.clipped, bd.sum_errors);
            for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
                fprintf(f, ", \"p50_%s\": %.0f, \"p99_%s\": %.0f, "
                        "\"p999_%s\": %.0f", native_bd_comp[c], bd.p50[c],
                        native_bd_comp[c], bd.p99[c], native_bd_comp[c],
                        bd.p999[c]);
            }
            fputs("},\n", f);
        }
        bool ok = dax.rc == 0;
        fprintf(f, " \"status\": \"%s\"\n}\n", ok ? "ok" : "failed");
        fclose(f);
    }
    free_run(&dax);
    if (plain) {
        munmap(plain, size);
        close(plain_fd);
    }
    munmap(region, size);
    close(fd);
    cxlssd_model_free(model);
    return dax.rc;
}
