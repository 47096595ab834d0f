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
 *   stats-cxl-vmem0.json           the device's counters (stats_json.c)
 *   manifest.json                  every effective property, options, host,
 *                                  git commit, status (manifest.c)
 *
 * This file runs the steps in order; see native.h for the others and
 * bench/native/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tests/csv_read.h"
#include "native.h"

/* A memfd of @size bytes, every page allocated when @alloc (MINOR faults
 * need pages in the page cache), mapped MAP_SHARED with 4 KiB pages. */
static char *map_memfd(const char *name, uint64_t size, bool alloc, int *fd)
{
    char *p;

    *fd = memfd_create(name, MFD_CLOEXEC);
    if (*fd < 0 || ftruncate(*fd, (off_t)size) < 0 ||
        (alloc && fallocate(*fd, 0, 0, (off_t)size) < 0)) {
        fprintf(stderr, "cxlssd-native: %s: memfd of %" PRIu64 " bytes: "
                "%s\n", name, size, strerror(errno));
        return NULL;
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "cxlssd-native: %s: mmap: %s\n", name,
                strerror(errno));
        return NULL;
    }
    madvise(p, size, MADV_NOHUGEPAGE);
    return p;
}

/* Rows of the record CSV (without the header), when there is no
 * breakdown to count them. */
static uint64_t count_records(const char *path)
{
    uint64_t lines = csv_count_lines(path);
    return lines > 0 ? lines - 1 : 0;
}

/* The per-miss breakdown, or only the record count. */
static bool breakdown(const struct native_opts *o, const char *recpath,
                      const struct native_mio_run *dax,
                      struct native_bd_result *bd)
{
    memset(bd, 0, sizeof(*bd));
    if (o->out && !o->no_breakdown && recpath && !dax->verify &&
        dax->loads == 1) {
        struct native_bd_input in = {
            .records_csv = recpath,
            .threads = (unsigned)dax->threads,
            .samples = dax->samples,
            .taken = dax->taken,
            .starts = dax->starts,
            .durations = dax->durations,
            .tids = dax->tids,
            .clk = dax->clk,
            .miss_threshold_ns = (o->mc.t_read_ns + o->mc.t_xfer_ns) / 2,
        };
        return native_breakdown(&in, o->out, bd) == 0;
    }
    if (recpath) {
        bd->records = count_records(recpath);
    }
    return false;
}

int main(int argc, char **argv)
{
    struct native_opts o;
    char err[512], path[4096];
    time_t t_start = time(NULL);
    int prc = native_parse_opts(argc, argv, &o);

    if (prc >= 0) {
        return prc;
    }
    if (cxlssd_config_validate(&o.mc, err, sizeof(err)) < 0) {
        fprintf(stderr, "cxlssd-native: %s\n", err);
        return 2;
    }
    if (o.out && mkdir(o.out, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "cxlssd-native: mkdir %s: %s\n", o.out,
                strerror(errno));
        return 4;
    }
    const char *recpath = o.mc.record_path && *o.mc.record_path
                          ? o.mc.record_path : NULL;
    /* Signals from the trap must reach every accessing thread (MIO's
     * threads inherit this mask). */
    sigset_t bus;
    sigemptyset(&bus);
    sigaddset(&bus, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &bus, NULL);

    /* The media: one MAP_SHARED mapping registered with the trap.
     * --ram-baseline: plain memory of the same kind (4 KiB shmem pages, no
     * trap), as large as the device so any MIO options that fit the device
     * fit it; its own memfd, since the chains hold virtual addresses and
     * must not share pages with the device's.  Its pages are allocated
     * when MIO builds the chains, before the timed phase. */
    uint64_t size = o.mc.device_size;
    int fd, plain_fd = -1;
    /* --media: the file holds the data, the memfd only cached pages */
    bool media = o.mc.media_path && *o.mc.media_path;
    char *region = map_memfd("cxlssd-native", size, !media, &fd);
    char *plain = NULL;
    if (!region || (o.ram_baseline &&
                    !(plain = map_memfd("cxlssd-native-baseline", size,
                                        false, &plain_fd)))) {
        return 4;
    }
    struct cxlssd_model *model = cxlssd_model_new(&o.mc, err, sizeof(err));
    if (!model) {
        fprintf(stderr, "cxlssd-native: %s\n", err);
        return 2;
    }
    bool sigbus = o.mc.delivery == CXLSSD_DELIVERY_SIGBUS;
    struct cxlssd_trap_config tc = {
        .delivery = o.mc.delivery,
        .handler_threads = o.mc.handler_threads,
        .handler_cpus = o.mc.handler_cpus ? o.mc.handler_cpus : "",
        .compensate = o.mc.compensate,
        .compensate_ns = o.mc.compensate_ns,
        .record_ab = o.mc.record_ab,
        .late_wait_ns = o.mc.late_wait_ns,
        .track_dirty = o.mc.track_dirty,
        .record_path = recpath,
        .mode_name = sigbus ? "uffd-sigbus" : "uffd",
        .accel_name = "native",
        .media_path = media ? o.mc.media_path : NULL,
        .media_memfd = fd,
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
                cxlssd_enum_name(CXLSSD_PROP_DELIVERY, o.mc.delivery),
                o.mc.handler_threads, dirty_mech);
    }

    struct native_mio_run dax;
    bool want_bd = o.out && !o.no_breakdown && recpath;
    int r = native_run_mio(&o, region, size, want_bd, plain, size, &dax);
    struct cxlssd_stats st;
    struct cxlssd_trap_stats ts;
    cxlssd_model_get_stats(model, &st);
    cxlssd_trap_get_stats(trap, &ts);
    cxlssd_trap_free(trap);     /* drains the records */
    if (r < 0) {
        return r == -2 ? 0 : 2;
    }

    struct native_bd_result bd;
    bool have_bd = breakdown(&o, recpath, &dax, &bd);
    if (recpath) {
        ts.records_written = bd.records;    /* after the final drain */
    }
    if (o.out) {
        snprintf(path, sizeof(path), "%s/stats-cxl-vmem0.json", o.out);
        native_write_stats(path, &st, &ts);
    }
    native_print_summary(&o, &st, &ts, &dax, &bd, have_bd);
    if (o.out) {
        struct native_manifest man = {
            .argc = argc,
            .argv = argv,
            .opts = &o,
            .dirty_mechanism = dirty_mech,
            .dax = &dax,
            .bd = &bd,
            .have_bd = have_bd,
            .started = t_start,
        };
        snprintf(path, sizeof(path), "%s/manifest.json", o.out);
        if (native_write_manifest(path, &man) < 0) {
            return 4;
        }
    }
    native_mio_run_free(&dax);
    if (plain) {
        munmap(plain, size);
        close(plain_fd);
    }
    munmap(region, size);
    close(fd);
    cxlssd_model_free(model);
    cxlssd_config_free_strings(&o.mc);
    return dax.rc;
}
