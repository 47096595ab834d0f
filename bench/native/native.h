/*
 * cxlssd-native: the host-native comparator.  Internal interfaces between
 * native.c (options, region, trap, MIO, outputs) and breakdown.c (per-miss
 * breakdown: MIO's samples joined with the trap's per-miss records).
 */
#ifndef CXLSSD_NATIVE_H
#define CXLSSD_NATIVE_H

#include <stdint.h>
#include <stdio.h>

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
    uint64_t samples;           /* per thread */
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

#endif
