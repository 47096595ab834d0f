/*
 * Model benchmark: the cache engine alone, no waiting.  A 1 Mi-page (4 GiB)
 * device with the default 5% cache (52428 frames) and default NAND/FTL;
 * for each policy and for a uniformly random and a sequential page stream:
 *
 *   warm-up   the cache is filled first (its misses are not measured);
 *   measured  ACCESSES accesses, each: cxlssd_miss() (read), then as the
 *             glue would without waiting: evict_done() for every victim,
 *             fill_done() for the page (and any prefetches).
 *
 * model_ns_per_miss_<policy>_<pattern>: CPU time of the measured loop
 *   (CLOCK_THREAD_CPUTIME_ID: the loop is single-threaded and never
 *   blocks, so this is its wall time minus the time other processes held
 *   the CPU -- the project machines are shared) / misses, median of
 *   REPEATS runs, each on a fresh model.  The wall-clock median is printed
 *   as a comment.  Accesses that find the page resident (about 5% of the random
 *   stream, none of the sequential one) are in the time but not in the
 *   miss count, so the figure slightly overstates the cost of a miss.
 *   The time includes the model's two clock reads per miss
 *   (decision_start/end) and the FTL read timing.
 * model_instructions_per_miss_<policy>_<pattern>: instructions retired in
 *   the measured loop / misses, counted by valgrind --tool=callgrind with
 *   collection switched on only inside measured_loop() (--collect-atstart=no
 *   --toggle-collect=measured_loop), on a shorter run (INSTR_ACCESSES)
 *   after the same warm-up.  "NA" if valgrind is not installed.
 * metadata_bytes_per_page: cache + FTL metadata per device page
 *   (cxlssd_model_metadata_bytes_per_page), the largest over the policies
 *   (S3-FIFO, which adds the ghost ring); per-policy and per-part figures
 *   follow.
 *
 * Usage: bench_model              all figures
 *        bench_model --one P S N  internal: one measured run for callgrind
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ftl.h"
#include "model.h"

#define PAGES (1u << 20)
#define ACCESSES 2000000u
#define INSTR_ACCESSES 200000u
#define REPEATS 7

enum pattern { RANDOM, SEQUENTIAL, NPATTERNS };
static const char *const pattern_names[] = { "random", "sequential" };

static struct cxlssd_model *mk(enum cxlssd_policy pol)
{
    struct cxlssd_config cfg;
    char err[256];
    cxlssd_config_defaults(&cfg, (uint64_t)PAGES * 4096);
    cfg.policy = pol;
    struct cxlssd_model *m = cxlssd_model_new(&cfg, err, sizeof(err));
    if (!m) {
        fprintf(stderr, "bench_model: %s\n", err);
        exit(1);
    }
    return m;
}

static uint32_t *make_stream(enum pattern pat, uint32_t n, uint32_t start)
{
    uint32_t *s = malloc((size_t)n * sizeof(*s));
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (uint32_t i = 0; i < n; i++) {
        if (pat == RANDOM) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s[i] = (uint32_t)(x % PAGES);
        } else {
            s[i] = (start + i) % PAGES;
        }
    }
    return s;
}

static struct cxlssd_miss miss_buf;

/* Returns the number of misses (FILL outcomes). */
static inline __attribute__((always_inline))
uint64_t access_loop(struct cxlssd_model *m, const uint32_t *stream,
                     uint32_t n, uint64_t now)
{
    struct cxlssd_miss *x = &miss_buf;
    uint64_t misses = 0;
    for (uint32_t i = 0; i < n; i++) {
        now += 1000;
        cxlssd_miss(m, stream[i], false, now, x);
        if (x->outcome != CXLSSD_MISS_FILL) {
            continue;
        }
        misses++;
        for (uint32_t v = 0; v < x->nvictims; v++) {
            cxlssd_evict_done(m, x->victims[v].page);
        }
        cxlssd_fill_done(m, x->page);
        for (uint32_t p = 0; p < x->nprefetch; p++) {
            cxlssd_fill_done(m, x->prefetch[p].page);
        }
    }
    return misses;
}

/* Two copies, so callgrind can count the measured one only. */
__attribute__((noinline))
uint64_t warmup_loop(struct cxlssd_model *m, const uint32_t *stream,
                     uint32_t n, uint64_t now)
{
    return access_loop(m, stream, n, now);
}

__attribute__((noinline))
uint64_t measured_loop(struct cxlssd_model *m, const uint32_t *stream,
                       uint32_t n, uint64_t now)
{
    return access_loop(m, stream, n, now);
}

/* Fresh model, warm-up (fill the cache), then the measured stream. */
struct run_result {
    double ns_per_miss;         /* thread CPU time */
    double wall_ns_per_miss;
    uint64_t misses;
};

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct run_result run(enum cxlssd_policy pol, enum pattern pat,
                             uint32_t accesses)
{
    struct cxlssd_model *m = mk(pol);
    uint32_t frames = (uint32_t)cxlssd_model_frames(m);
    uint32_t *warm = make_stream(pat, frames * 2, 0);
    /* sequential: the measured stream continues where warm-up stopped */
    uint32_t *stream = make_stream(pat, accesses + frames * 2, 0);
    warmup_loop(m, warm, frames * 2, 0);
    uint64_t w0 = cxlssd_now_ns(), c0 = cpu_ns();
    uint64_t misses = measured_loop(m, stream + frames * 2, accesses,
                                    1000000000ull);
    uint64_t c1 = cpu_ns(), w1 = cxlssd_now_ns();
    struct run_result r = {
        .ns_per_miss = misses ? (double)(c1 - c0) / (double)misses : 0,
        .wall_ns_per_miss = misses ? (double)(w1 - w0) / (double)misses : 0,
        .misses = misses,
    };
    free(warm);
    free(stream);
    cxlssd_model_free(m);
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run ourselves under callgrind for one (policy, pattern); returns
 * instructions per miss or -1. */
static double instructions_per_miss(const char *self, enum cxlssd_policy pol,
                                    enum pattern pat)
{
    char out[64], cmd[4096 + 512];
    snprintf(out, sizeof(out), "/tmp/bench_model.cg.%d", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "valgrind --tool=callgrind --callgrind-out-file=%s "
             "--collect-atstart=no --toggle-collect=measured_loop "
             "'%s' --one %s %s %u 2>/dev/null",
             out, self, cxlssd_policy_name(pol), pattern_names[pat],
             INSTR_ACCESSES);
    FILE *p = popen(cmd, "r");
    if (!p) {
        return -1;
    }
    uint64_t misses = 0;
    char line[256];
    while (fgets(line, sizeof(line), p)) {
        sscanf(line, "misses=%" SCNu64, &misses);
    }
    int rc = pclose(p);
    FILE *f = fopen(out, "r");
    uint64_t ir = 0;
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            if (sscanf(line, "summary: %" SCNu64, &ir) == 1 ||
                sscanf(line, "totals: %" SCNu64, &ir) == 1) {
                /* keep the last one */
            }
        }
        fclose(f);
        unlink(out);
    }
    if (rc != 0 || misses == 0 || ir == 0) {
        return -1;
    }
    return (double)ir / (double)misses;
}

static int parse_policy(const char *s, enum cxlssd_policy *p)
{
    return cxlssd_policy_from_name(s, p);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--one") == 0) {
        enum cxlssd_policy pol;
        enum pattern pat = strcmp(argv[3], "random") == 0 ? RANDOM
                                                          : SEQUENTIAL;
        if (parse_policy(argv[2], &pol) < 0) {
            return 2;
        }
        struct run_result r = run(pol, pat, (uint32_t)atoi(argv[4]));
        printf("misses=%" PRIu64 "\n", r.misses);
        return 0;
    }

    printf("# model benchmark: %u-page device, 5%% cache, %u accesses x %d "
           "repeats (median), no waiting\n", PAGES, ACCESSES, REPEATS);
    /* Repeats interleaved over the configurations, so that load from
     * other processes on a shared machine spreads over all of them. */
    static double ns[CXLSSD_POLICY_COUNT][NPATTERNS][REPEATS];
    static double wall[CXLSSD_POLICY_COUNT][NPATTERNS][REPEATS];
    for (int i = 0; i < REPEATS; i++) {
        for (int pol = 0; pol < CXLSSD_POLICY_COUNT; pol++) {
            for (int pat = 0; pat < NPATTERNS; pat++) {
                struct run_result r = run((enum cxlssd_policy)pol,
                                          (enum pattern)pat, ACCESSES);
                ns[pol][pat][i] = r.ns_per_miss;
                wall[pol][pat][i] = r.wall_ns_per_miss;
            }
        }
    }
    for (int pol = 0; pol < CXLSSD_POLICY_COUNT; pol++) {
        for (int pat = 0; pat < NPATTERNS; pat++) {
            double *c = ns[pol][pat], *w = wall[pol][pat];
            qsort(c, REPEATS, sizeof(c[0]), cmp_double);
            qsort(w, REPEATS, sizeof(w[0]), cmp_double);
            printf("# %s %s: cpu min %.1f max %.1f, wall median %.1f ns\n",
                   cxlssd_policy_name((enum cxlssd_policy)pol),
                   pattern_names[pat], c[0], c[REPEATS - 1],
                   w[REPEATS / 2]);
            printf("model_ns_per_miss_%s_%s=%.1f\n",
                   cxlssd_policy_name((enum cxlssd_policy)pol),
                   pattern_names[pat], c[REPEATS / 2]);
            fflush(stdout);
        }
    }

    {
        uint64_t c0 = cpu_ns();
        volatile uint64_t sink = 0;
        for (int i = 0; i < 1000000; i++) {
            sink += cxlssd_now_ns();
        }
        (void)sink;
        printf("# clock_gettime(CLOCK_MONOTONIC) here: %.1f ns per call; "
               "each miss reads it once (decision_end)\n",
               (double)(cpu_ns() - c0) / 1e6);
    }

    bool have_valgrind = system("command -v valgrind >/dev/null 2>&1") == 0;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len > 0) {
        self[len] = '\0';
    } else {
        snprintf(self, sizeof(self), "%s", argv[0]);
    }
    if (!have_valgrind) {
        printf("# valgrind not installed: instruction counts unavailable\n");
    }
    for (int pol = 0; pol < CXLSSD_POLICY_COUNT; pol++) {
        for (int pat = 0; pat < NPATTERNS; pat++) {
            double ipm = have_valgrind ?
                instructions_per_miss(self, (enum cxlssd_policy)pol,
                                      (enum pattern)pat) : -1;
            if (ipm < 0) {
                printf("model_instructions_per_miss_%s_%s=NA\n",
                       cxlssd_policy_name((enum cxlssd_policy)pol),
                       pattern_names[pat]);
            } else {
                printf("model_instructions_per_miss_%s_%s=%.0f\n",
                       cxlssd_policy_name((enum cxlssd_policy)pol),
                       pattern_names[pat], ipm);
            }
            fflush(stdout);
        }
    }

    double worst = 0;
    double per[CXLSSD_POLICY_COUNT];
    double cache_part = 0, ftl_part = 0;
    for (int pol = 0; pol < CXLSSD_POLICY_COUNT; pol++) {
        struct cxlssd_model *m = mk((enum cxlssd_policy)pol);
        per[pol] = cxlssd_model_metadata_bytes_per_page(m);
        if (per[pol] >= worst) {
            worst = per[pol];
            cache_part = (double)cxlssd_model_cache_metadata_bytes(m) / PAGES;
            ftl_part = (double)ftl_metadata_bytes(cxlssd_model_ftl(m)) / PAGES;
        }
        cxlssd_model_free(m);
    }
    printf("metadata_bytes_per_page=%.2f\n", worst);
    for (int pol = 0; pol < CXLSSD_POLICY_COUNT; pol++) {
        printf("metadata_bytes_per_page_%s=%.2f\n",
               cxlssd_policy_name((enum cxlssd_policy)pol), per[pol]);
    }
    printf("metadata_cache_bytes_per_page=%.2f\n", cache_part);
    printf("metadata_ftl_bytes_per_page=%.2f\n", ftl_part);
    return 0;
}
