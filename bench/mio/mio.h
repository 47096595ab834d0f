/* mio.h: configuration and the interfaces between MIO's modules.
 *
 *   opts.c     command line -> struct mio_config
 *   target.c   map the target (anon, devdax, file)
 *   chain.c    build and check pointer chains
 *   chase.c    the timed hot loop (dependent loads, optional stores)
 *   timing.c   TSC detection and calibration, timer choice
 *   stats.c    sorting, exact percentiles, histogram/CDF tables
 *   report.c   summary line, CSV, raw samples
 *   progress.c progress lines on stderr for long runs
 *   run.c      chase benchmark: threads, phases
 *   verify.c   --verify integrity mode
 *   main.c     entry point
 */
#ifndef MIO_H
#define MIO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MIO_EXIT_OK 0
#define MIO_EXIT_MISMATCH 1   /* --verify found mismatches */
#define MIO_EXIT_USAGE 2      /* bad command line */
#define MIO_EXIT_CHAIN 3      /* chain check failed */
#define MIO_EXIT_ERROR 4      /* runtime error (mmap, alloc, I/O) */

#define MIO_PAGE 4096u
#define MIO_DAX_ALIGN (2u << 20)

enum mio_pattern { MIO_SEQ, MIO_RAND };

/* In-process embedding (bench/native, the host-native tool): with
 * cfg->embed set, the chase and --verify run on embed->map instead of
 * opening cfg->target (which then only names the target in reports), and
 * the chase hands back what the caller needs to join samples with its own
 * per-miss records.  NULL for the mio program itself. */
struct mio_embed {
    char *map;                  /* in: the region (page aligned) */
    uint64_t len;               /* in: its length */
    uint64_t *starts;           /* in: NULL or threads*samples entries: timer
                                 * value at each sample's start (thread t's
                                 * from [t*samples], in time order) */
    uint64_t *samples;          /* in: NULL or threads*samples entries: the
                                 * samples (timer units), same layout */
    char *baseline_map;         /* in: NULL, or the --baseline region (page
                                 * aligned; --baseline then only names it) */
    uint64_t baseline_len;      /* in: its length */
    int *tids;                  /* in: NULL or threads entries: worker tids */
    uint64_t *taken;            /* in: NULL or threads entries; out: samples
                                 * each thread took (the rest stay 0: all
                                 * threads stop when the first has all its
                                 * samples) */
    int clock_timer;            /* out: 1 = timer is CLOCK_MONOTONIC ns,
                                 * 0 = TSC ticks */
    double ns_per_tick;         /* out: timer unit in ns */
};
enum mio_timer_pref { MIO_TIMER_AUTO, MIO_TIMER_TSC, MIO_TIMER_CLOCK };
enum mio_thp { MIO_THP_DEFAULT, MIO_THP_NEVER, MIO_THP_ALWAYS };

/* Output files of one chased region (NULL = not written). */
struct mio_outputs {
    const char *raw;
    const char *hist;
    const char *cdf;
    const char *summary_csv;
};

struct mio_config {
    const char *target;         /* "anon", a devdax device or a file */
    uint64_t target_size;       /* --target-size; 0 = detect */
    uint64_t offset;            /* --offset into the target */
    uint64_t wss_bytes;         /* effective request (bytes or ratio*cache) */
    double wss_ratio;           /* 0 when --wss-bytes was used */
    uint64_t cache_bytes;
    enum mio_pattern pattern;
    uint64_t stride;
    uint64_t seed;
    unsigned threads;
    int pin;                    /* --pin given */
    unsigned *pin_cpus;         /* --pin=LIST, NULL = process affinity */
    unsigned n_pin_cpus;
    uint64_t samples;           /* per thread */
    uint64_t loads_per_sample;
    uint64_t warmup_passes;
    double store_ratio;
    double miss_ns;             /* > 0: samples of at least this many ns are
                                 * misses, with their own statistics */
    struct mio_outputs out;     /* --raw, --hist, --cdf, --summary-csv */
    int append;                 /* append to the summary CSVs */
    /* --baseline: a second region (anon, devdax or file, offset 0) with the
     * same chains, sampled interleaved with the target (ABBA), so both see
     * the same machine conditions; its files are baseline_out. */
    const char *baseline;
    struct mio_outputs baseline_out;
    enum mio_timer_pref timer;
    double progress_s;          /* 0 disables progress lines */
    int subtract_overhead;
    enum mio_thp thp;
    int quiet;
    /* --verify */
    int verify;
    unsigned verify_passes;
    int verify_overlap;
    int inject_corruption;
    int inject_chain_break;     /* test hook: break thread 0's chain */
    struct mio_embed *embed;    /* in-process region (see above), or NULL */
};

/* opts.c */
int mio_parse_size(const char *s, uint64_t *out);
int mio_parse_cpu_list(const char *s, unsigned **cpus, unsigned *n);
/* Returns -1 to continue, otherwise an exit code (0 after --help). */
int mio_parse_args(int argc, char **argv, struct mio_config *cfg);
void mio_free_config(struct mio_config *cfg);

/* target.c */
enum mio_target_kind { MIO_TGT_ANON, MIO_TGT_DEVDAX, MIO_TGT_FILE,
                       MIO_TGT_EMBED };
struct mio_target {
    enum mio_target_kind kind;
    int fd;
    char *map;                  /* mapping of [offset, offset+map_len) */
    uint64_t map_len;
    uint64_t dev_size;          /* 0 for anon */
    uint64_t align;             /* mmap length granule */
};
const char *mio_target_kind_name(enum mio_target_kind k);
/* Length to map: need rounded up to align, 0 if it would exceed dev_size
 * (dev_size 0 = unlimited). */
uint64_t mio_map_length(uint64_t need, uint64_t align, uint64_t dev_size);
int mio_target_open(const struct mio_config *cfg, uint64_t need,
                    struct mio_target *t);
/* The --baseline region: embed->baseline_map if given, else --baseline
 * opened like a target at offset 0. */
int mio_baseline_open(const struct mio_config *cfg, uint64_t need,
                      struct mio_target *t);
void mio_target_close(struct mio_target *t);

/* chain.c: nodes are stride bytes apart; next pointer at offset 0, a
 * scratch word at offset 8 takes the stores of --store-ratio. */
struct mio_node {
    struct mio_node *next;
    uint64_t scratch;
};
/* next[i] = successor of node i; one cycle through all n nodes. */
int mio_chain_order(uint32_t *next, uint64_t n, enum mio_pattern pattern,
                    uint64_t seed);
/* Writes the chain into memory at base; progress counts nodes written
 * (added to *progress, so several chains can share one counter). */
int mio_chain_build(char *base, uint64_t n, uint64_t stride,
                    enum mio_pattern pattern, uint64_t seed,
                    _Atomic uint64_t *progress);
/* Walks from node 0 until back at node 0 (at most n+1 steps), checking that
 * every pointer lands on a node of the region.  Returns the number of
 * nodes visited in the cycle (n when intact; 0 if the walk left the
 * region or did not return).  hash: order-dependent hash of the visit.
 * progress: n is added when done. */
uint64_t mio_chain_check(char *base, uint64_t n, uint64_t stride,
                         uint64_t *hash, _Atomic uint64_t *progress);

/* timing.c */
enum mio_tmode { MIO_TM_RDTSCP, MIO_TM_LFENCE, MIO_TM_CLOCK };
struct mio_timer {
    enum mio_tmode mode;        /* what samples use */
    int has_tsc, has_rdtscp, invariant_tsc;
    double tsc_ghz;             /* calibrated (0 if not) */
    double cal_ghz[2];
    double ns_per_tick;         /* for samples: 1/tsc_ghz or 1 (clock) */
    double resolution_ns;       /* smallest step of the sample timer */
    const char *note;           /* why this timer */
};
void mio_timer_init(struct mio_timer *tm, enum mio_timer_pref pref,
                    int quiet);
double mio_now_s(void);

/* chase.c */
struct mio_sampler {
    void *p;                    /* current node */
    uint64_t loads;             /* per sample */
    enum mio_tmode tmode;
    int store_mode;             /* 0 none, 1 every visit, 2 fraction */
    uint64_t store_thresh;      /* fraction * 2^64 */
    uint64_t rng;               /* xorshift state for the mix */
    uint64_t dummy[8];          /* sink for skipped stores */
    uint64_t migrations;        /* samples whose start/stop CPU differed */
    uint64_t *starts;           /* NULL, or where mio_sample() stores each
                                 * sample's start timer value */
    const _Atomic int *stop;    /* NULL, or: stop sampling once set */
    uint64_t taken;             /* out: samples of the last mio_sample*() */
};
void mio_sampler_init(struct mio_sampler *s, void *start, uint64_t loads,
                      enum mio_tmode tmode, double store_ratio,
                      uint64_t seed);
/* Untimed walk of n loads (warm-up), progress every 4096 loads. */
void mio_walk(struct mio_sampler *s, uint64_t n, _Atomic uint64_t *progress);
/* count timed samples into out[] (timer units); fewer (s->taken) when
 * s->stop is set meanwhile. */
void mio_sample(struct mio_sampler *s, uint64_t *out, uint64_t count,
                _Atomic uint64_t *progress);
/* count samples on a and on b, interleaved: pair k times a then b for
 * even k, b then a for odd k (ABBA).  Progress counts both sides. */
void mio_sample_interleaved(struct mio_sampler *a, struct mio_sampler *b,
                            uint64_t *out_a, uint64_t *out_b, uint64_t count,
                            _Atomic uint64_t *progress);
/* Median cost of an empty sample, in timer units. */
uint64_t mio_timer_overhead(enum mio_tmode tmode);

/* stats.c */
struct mio_stats {
    uint64_t n;
    double mean, min, p50, p90, p99, p999, p9999, max;   /* ns */
};
void mio_sort_u64(uint64_t *a, size_t n);
/* Nearest-rank percentile of a sorted array: a[ceil(pct/100*n)-1]. */
uint64_t mio_percentile(const uint64_t *sorted, size_t n, double pct);
/* value_ns(x) = (x > sub ? x - sub : 0) * scale */
void mio_stats_compute(const uint64_t *sorted, size_t n, uint64_t sub,
                       double scale, struct mio_stats *st);
/* The statistics of the samples of a sorted array worth at least ns
 * (value_ns as above): its tail, the misses when ns is a miss threshold. */
void mio_stats_at_least(const uint64_t *sorted, size_t n, uint64_t sub,
                        double scale, double ns, struct mio_stats *st);
int mio_write_hist(FILE *f, const uint64_t *sorted, size_t n, uint64_t sub,
                   double scale);
int mio_write_cdf(FILE *f, const uint64_t *sorted, size_t n, uint64_t sub,
                  double scale);

/* progress.c */
enum mio_phase { MIO_PH_BUILD, MIO_PH_WARMUP, MIO_PH_CHECK, MIO_PH_MEASURE,
                 MIO_PH_WRITE, MIO_PH_VERIFY, MIO_PH_COUNT };
struct mio_progress_slot {
    _Atomic uint64_t done[MIO_PH_COUNT];    /* one cache line per thread */
} __attribute__((aligned(64)));
struct mio_progress;
struct mio_progress *mio_progress_new(unsigned threads, double interval_s);
struct mio_progress_slot *mio_progress_slot(struct mio_progress *p,
                                            unsigned t);
void mio_progress_set_total(struct mio_progress *p, enum mio_phase ph,
                            uint64_t total, const char *unit);
void mio_progress_set_phase(struct mio_progress *p, enum mio_phase ph);
void mio_progress_pass(struct mio_progress *p, unsigned pass,
                       unsigned passes);
/* Worker finished; wakes the waiter. */
void mio_progress_thread_done(struct mio_progress *p);
/* Blocks until every worker called thread_done, printing progress. */
void mio_progress_wait(struct mio_progress *p);
void mio_progress_free(struct mio_progress *p);

/* report.c */
struct mio_run_info {
    const struct mio_config *cfg;
    const struct mio_timer *tm;
    const char *prefix;         /* "mio" (target) or "mio-baseline" */
    const char *target;         /* name in reports */
    const char *target_kind;
    const struct mio_outputs *out;
    uint64_t wss_bytes;         /* effective: region * threads */
    uint64_t nodes;             /* per thread */
    uint64_t samples_total;     /* reported: inside the overlap window */
    uint64_t samples_taken;     /* by all threads (all stop when the first
                                 * has cfg->samples) */
    double overlap_fraction;    /* share of those taken while every thread
                                 * was sampling: T x the fewest one thread
                                 * has in the overlap window / taken */
    double overhead_ns;         /* median empty sample */
    uint64_t sub_ticks;         /* subtracted per sample (0 unless asked) */
    int chain_ok;
    uint64_t chain_hash;
    uint64_t migrations;
    double elapsed_s;
    struct mio_stats miss;      /* the samples >= cfg->miss_ns (when set) */
};
struct mio_thread_result {
    struct mio_stats st;
    struct mio_stats miss;
    int cpu;
    int chain_ok;
    uint64_t chain_hash;
    uint64_t visited;
};
void mio_print_thread(FILE *f, const struct mio_run_info *ri, unsigned t,
                      const struct mio_thread_result *tr);
void mio_print_summary(FILE *f, const struct mio_run_info *ri,
                       const struct mio_stats *st);
int mio_write_summary_csv(const struct mio_run_info *ri,
                          const struct mio_stats *all,
                          const struct mio_thread_result *tr);
/* samples in timer units: thread t's cnt[t] after thread t-1's; scale =
 * ns per unit / I */
int mio_write_raw(const char *path, const uint64_t *samples,
                  const uint64_t *cnt, unsigned threads, uint64_t sub,
                  double scale);
int mio_write_table(const char *path, const char *what,
                    const uint64_t *sorted, size_t n, uint64_t sub,
                    double scale);

/* run.c / verify.c */
int mio_run_chase(const struct mio_config *cfg);
int mio_run_verify(const struct mio_config *cfg);

/* Thread helpers (run.c) */
int mio_pin_thread(const struct mio_config *cfg, unsigned t, int *cpu_out);
uint64_t mio_region_bytes(uint64_t wss, unsigned threads, uint64_t stride);

#endif
