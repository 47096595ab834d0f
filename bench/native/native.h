/*
 * cxlssd-native: the host-native comparator.  Internal interfaces between
 * its files, one job each:
 *   native.c      main: the region, the trap, the run, in order
 *   options.c     command line: options and --help from the property table
 *   mio_run.c     running MIO (chase or verify) on the region
 *   breakdown.c   per-miss breakdown: MIO's samples joined with the records
 *   stats_json.c  stats-cxl-vmem0.json from the stats table; summary lines
 *   manifest.c    manifest.json (properties from the property table)
 *   host.c        host facts for the manifest, output files
 */
#ifndef CXLSSD_NATIVE_H
#define CXLSSD_NATIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../../hw/cxl-ssd/model/config.h"
#include "../../hw/cxl-ssd/model/model.h"
#include "../../hw/cxl-ssd/trap/trap.h"

/* TSC <-> CLOCK_MONOTONIC: two anchors taken around the run. */
struct native_clock {
    int clock_timer;            /* samples already CLOCK_MONOTONIC ns */
    long double tsc0, mono0;    /* anchor before the run */
    long double ns_per_tick;    /* fitted between the two anchors */
};
void native_anchor(long double *tsc, long double *mono);
uint64_t native_to_mono(const struct native_clock *c, uint64_t ticks);
uint64_t native_ticks_to_ns(const struct native_clock *c, uint64_t ticks);

struct native_bd_input {
    const char *records_csv;    /* the trap's per-miss CSV */
    unsigned threads;
    uint64_t samples;           /* per thread: the stride of the arrays */
    const uint64_t *taken;      /* threads: samples thread t took */
    const uint64_t *starts;     /* threads*samples timer values */
    const uint64_t *durations;  /* threads*samples timer units */
    const int *tids;            /* threads */
    struct native_clock clk;
    uint64_t miss_threshold_ns; /* slow samples without a record above this
                                 * are counted as unmatched */
};

struct native_bd_result {
    uint64_t records;           /* rows in the record CSV */
    uint64_t rows;              /* misses joined with a sample */
    uint64_t unmatched_slow;    /* samples >= threshold without a record */
    uint64_t records_in_window; /* records of MIO threads inside the
                                 * measured phase */
    uint64_t clipped;           /* rows where the faulter resumed before
                                 * UFFDIO_CONTINUE returned */
    uint64_t sum_errors;        /* rows whose components do not sum to the
                                 * total (0 by construction) */
    /* medians and tails (ns) of each component, marginal */
    double p50[7], p99[7], p999[7];
};

#define NATIVE_BD_NCOMP 7
extern const char *const native_bd_comp[NATIVE_BD_NCOMP];

/* Writes @dir/breakdown.csv and @dir/breakdown-percentiles.csv.
 * Returns 0, or -1 with a message on stderr. */
int native_breakdown(const struct native_bd_input *in, const char *dir,
                     struct native_bd_result *out);


/* ---- options.c ---- */

struct native_opts {
    struct cxlssd_config mc;    /* every device property, and the size */
    const char *out;            /* results folder, or NULL */
    bool ram_baseline;
    bool no_breakdown;
    bool quiet;
    char device_args[4096];     /* the --device strings as given */
    int mio_argc;
    char **mio_argv;
};

/* Returns -1 to run, else the exit status (0 after --help, 2 on a usage
 * error, with a message on stderr). */
int native_parse_opts(int argc, char **argv, struct native_opts *o);

/* ---- mio_run.c ---- */

struct native_mio_run {
    int rc;
    uint64_t samples, threads, loads;
    bool verify;
    uint64_t *starts, *durations;
    uint64_t *taken;            /* per thread (MIO stops all threads when
                                 * the first has its samples) */
    int *tids;
    struct native_clock clk;
    double elapsed_s;
};

/* Run MIO with the user's options on @map (output files "mio-dax-*"),
 * with @baseline (--ram-baseline) chased interleaved.  Returns 0, -2 after
 * MIO's --help, -1 on an error. */
int native_run_mio(const struct native_opts *o, char *map, uint64_t len,
                   bool want_samples, char *baseline, uint64_t baseline_len,
                   struct native_mio_run *res);
void native_mio_run_free(struct native_mio_run *r);

/* ---- stats_json.c ---- */

int native_write_stats(const char *path, struct cxlssd_stats *st,
                       struct cxlssd_trap_stats *ts);
/* The `native:` and `native-breakdown:` lines on stdout. */
void native_print_summary(const struct native_opts *o,
                          const struct cxlssd_stats *st,
                          const struct cxlssd_trap_stats *ts,
                          const struct native_mio_run *dax,
                          const struct native_bd_result *bd, bool have_bd);

/* ---- manifest.c ---- */

struct native_manifest {
    int argc;
    char **argv;
    const struct native_opts *opts;
    const char *dirty_mechanism;
    const struct native_mio_run *dax;
    const struct native_bd_result *bd;  /* records counted, at least */
    bool have_bd;                       /* ... and a breakdown */
    time_t started;
};
int native_write_manifest(const char *path, const struct native_manifest *m);

/* ---- host.c ---- */

void native_host_cpu(char *buf, size_t len);
/* /sys/kernel/mm/transparent_hugepage/@name's selected value */
void native_host_thp(const char *name, char *buf, size_t len);
/* the commit of the tree the tool was built in, "unknown" if none */
void native_git_commit(char *buf, size_t len);
/* @path opened for writing, or NULL with a message on stderr */
FILE *native_create(const char *path);

#endif
