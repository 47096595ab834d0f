/* report.c: result lines and files.
 *
 * stdout gets one `mio:` summary line (key=value, machine-parseable; the
 * first keys are fixed, extra keys follow), preceded by one `mio-thread:`
 * line per thread when there are several.  Files: --summary-csv (same
 * numbers, one row for all threads and one per thread), --raw (every
 * sample in ns per load), --hist, --cdf.  With --baseline the baseline
 * gets the same lines and files under the prefix `mio-baseline` and the
 * --baseline-* paths (ri->prefix, ri->out). */
#include "mio.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static const char *pattern_name(enum mio_pattern p)
{
    return p == MIO_SEQ ? "seq" : "rand";
}

static const char *thp_name(enum mio_thp t)
{
    return t == MIO_THP_NEVER ? "never" : t == MIO_THP_ALWAYS ? "always"
                                                            : "default";
}

static const char *timer_name(const struct mio_timer *tm)
{
    return tm->mode == MIO_TM_CLOCK ? "clock" : "tsc";
}

/* " miss_threshold_ns=... misses=..." after a line, with --miss-ns */
static void print_misses(FILE *f, const struct mio_config *c,
                         const struct mio_stats *all,
                         const struct mio_stats *miss)
{
    if (!(c->miss_ns > 0))
        return;
    fprintf(f, " miss_threshold_ns=%g misses=%llu miss_fraction=%.4f "
            "miss_mean_ns=%.2f miss_p50_ns=%.2f miss_p90_ns=%.2f "
            "miss_p99_ns=%.2f miss_p999_ns=%.2f", c->miss_ns,
            (unsigned long long)miss->n,
            all->n ? (double)miss->n / (double)all->n : 0.0, miss->mean,
            miss->p50, miss->p90, miss->p99, miss->p999);
}

void mio_print_thread(FILE *f, const struct mio_run_info *ri, unsigned t,
                      const struct mio_thread_result *tr)
{
    const struct mio_stats *st = &tr->st;
    fprintf(f, "%s-thread: thread=%u cpu=%d samples=%llu mean_ns=%.2f "
            "min_ns=%.2f p50_ns=%.2f p90_ns=%.2f p99_ns=%.2f p999_ns=%.2f "
            "p9999_ns=%.2f max_ns=%.2f chain_check=%s chain_hash=%016llx",
            ri->prefix, t, tr->cpu, (unsigned long long)st->n, st->mean,
            st->min, st->p50, st->p90, st->p99, st->p999, st->p9999, st->max,
            tr->chain_ok ? "ok" : "fail",
            (unsigned long long)tr->chain_hash);
    print_misses(f, ri->cfg, st, &tr->miss);
    fputc('\n', f);
}

void mio_print_summary(FILE *f, const struct mio_run_info *ri,
                       const struct mio_stats *st)
{
    const struct mio_config *c = ri->cfg;
    fprintf(f, "%s: pattern=%s threads=%u wss_bytes=%llu stride=%llu "
            "samples=%llu loads_per_sample=%llu tsc_ghz=%.4f timer=%s "
            "mean_ns=%.2f p50_ns=%.2f p90_ns=%.2f p99_ns=%.2f p999_ns=%.2f "
            "p9999_ns=%.2f max_ns=%.2f chain_check=%s", ri->prefix,
            pattern_name(c->pattern), c->threads,
            (unsigned long long)ri->wss_bytes,
            (unsigned long long)c->stride,
            (unsigned long long)c->samples,
            (unsigned long long)c->loads_per_sample, ri->tm->tsc_ghz,
            timer_name(ri->tm), st->mean, st->p50, st->p90, st->p99,
            st->p999, st->p9999, st->max, ri->chain_ok ? "ok" : "fail");
    fprintf(f, " min_ns=%.2f samples_total=%llu target=%s target_kind=%s "
            "nodes_per_thread=%llu warmup_passes=%llu store_ratio=%g "
            "seed=%llu chain_hash=%016llx invariant_tsc=%d rdtscp=%d "
            "timer_overhead_ns=%.2f timer_resolution_ns=%.2f "
            "overhead_subtracted=%d "
            "cpu_migrations=%llu thp=%s wss_ratio=%g cache_bytes=%llu "
            "elapsed_s=%.3f samples_taken=%llu overlap_fraction=%.4f",
            st->min, (unsigned long long)ri->samples_total, ri->target,
            ri->target_kind, (unsigned long long)ri->nodes,
            (unsigned long long)c->warmup_passes, c->store_ratio,
            (unsigned long long)c->seed,
            (unsigned long long)ri->chain_hash, ri->tm->invariant_tsc,
            ri->tm->has_rdtscp, ri->overhead_ns, ri->tm->resolution_ns,
            c->subtract_overhead,
            (unsigned long long)ri->migrations, thp_name(c->thp),
            c->wss_ratio, (unsigned long long)c->cache_bytes, ri->elapsed_s,
            (unsigned long long)ri->samples_taken, ri->overlap_fraction);
    print_misses(f, c, st, &ri->miss);
    if (c->baseline)            /* the other side of the interleaved pair */
        fprintf(f, " interleaved_with=%s",
                strcmp(ri->prefix, "mio") ? c->target : c->baseline);
    fputc('\n', f);
}

static const char csv_header[] =
    "scope,pattern,threads,wss_bytes,stride_bytes,samples,loads_per_sample,"
    "tsc_ghz,timer,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,p999_ns,p9999_ns,"
    "max_ns,chain_check,seed,store_ratio,warmup_passes,target,"
    "timer_overhead_ns,timer_resolution_ns,overhead_subtracted,wss_ratio,"
    "cache_bytes,thp,overlap_fraction,miss_threshold_ns,misses,"
    "miss_fraction,miss_mean_ns,miss_p50_ns,miss_p99_ns\n";

static void csv_row(FILE *f, const char *scope, const struct mio_run_info *ri,
                    const struct mio_stats *st, const struct mio_stats *miss,
                    int chain_ok)
{
    const struct mio_config *c = ri->cfg;
    fprintf(f, "%s,%s,%u,%llu,%llu,%llu,%llu,%.4f,%s,%.2f,%.2f,%.2f,%.2f,"
            "%.2f,%.2f,%.2f,%.2f,%s,%llu,%g,%llu,%s,%.2f,%.2f,%d,%g,%llu,%s,"
            "%.4f,",
            scope, pattern_name(c->pattern), c->threads,
            (unsigned long long)ri->wss_bytes, (unsigned long long)c->stride,
            (unsigned long long)st->n,
            (unsigned long long)c->loads_per_sample, ri->tm->tsc_ghz,
            timer_name(ri->tm), st->mean, st->min, st->p50, st->p90,
            st->p99, st->p999, st->p9999, st->max, chain_ok ? "ok" : "fail",
            (unsigned long long)c->seed, c->store_ratio,
            (unsigned long long)c->warmup_passes, ri->target, ri->overhead_ns,
            ri->tm->resolution_ns, c->subtract_overhead, c->wss_ratio,
            (unsigned long long)c->cache_bytes, thp_name(c->thp),
            ri->overlap_fraction);
    if (c->miss_ns > 0)
        fprintf(f, "%g,%llu,%.4f,%.2f,%.2f,%.2f\n", c->miss_ns,
                (unsigned long long)miss->n,
                st->n ? (double)miss->n / (double)st->n : 0.0, miss->mean,
                miss->p50, miss->p99);
    else
        fputs(",,,,,\n", f);       /* no threshold: no miss columns */
}

static FILE *open_out(const char *path, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (!f)
        fprintf(stderr, "mio: open %s: %s\n", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "mio: write %s failed\n", path);
        return -1;
    }
    return 0;
}

int mio_write_summary_csv(const struct mio_run_info *ri,
                          const struct mio_stats *all,
                          const struct mio_thread_result *tr)
{
    const char *path = ri->out->summary_csv;
    FILE *f = open_out(path, ri->cfg->append ? "a" : "w");
    if (!f)
        return -1;
    struct stat st;
    if (!ri->cfg->append || (fstat(fileno(f), &st) == 0 && st.st_size == 0))
        fputs(csv_header, f);
    csv_row(f, "all", ri, all, &ri->miss, ri->chain_ok);
    for (unsigned t = 0; t < ri->cfg->threads; t++) {
        char scope[32];
        snprintf(scope, sizeof(scope), "thread%u", t);
        csv_row(f, scope, ri, &tr[t].st, &tr[t].miss, tr[t].chain_ok);
    }
    return close_out(f, path);
}

int mio_write_raw(const char *path, const uint64_t *samples,
                  const uint64_t *cnt, unsigned threads, uint64_t sub,
                  double scale)
{
    FILE *f = open_out(path, "w");
    if (!f)
        return -1;
    static char buf[1 << 16];
    setvbuf(f, buf, _IOFBF, sizeof(buf));
    /* thread 0's samples in time order, then thread 1's ... (with several
     * threads, those of the overlap window only: cnt[t] of thread t) */
    fputs("thread,ns_per_load\n", f);
    for (unsigned t = 0; t < threads; t++) {
        for (uint64_t i = 0; i < cnt[t]; i++, samples++) {
            uint64_t x = *samples > sub ? *samples - sub : 0;
            fprintf(f, "%u,%.3f\n", t, (double)x * scale);
        }
    }
    return close_out(f, path);
}

int mio_write_table(const char *path, const char *what,
                    const uint64_t *sorted, size_t n, uint64_t sub,
                    double scale)
{
    FILE *f = open_out(path, "w");
    if (!f)
        return -1;
    if (!strcmp(what, "hist"))
        mio_write_hist(f, sorted, n, sub, scale);
    else
        mio_write_cdf(f, sorted, n, sub, scale);
    return close_out(f, path);
}
