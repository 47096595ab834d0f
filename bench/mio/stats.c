/* stats.c: exact percentiles from the full sample array, plus tables for
 * plotting (log-spaced histogram, CDF points).
 *
 * Samples are kept in timer units (TSC ticks or ns) for a whole sample of
 * I loads; value_ns = (x - sub) * scale with scale = ns_per_tick / I.
 * That map is monotonic, so percentiles of the sorted raw array are the
 * percentiles of the ns values. */
#include "mio.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* LSD radix sort on 16-bit digits; digits that are equal across all keys
 * are skipped (latencies in ticks rarely exceed 32 bits). */
void mio_sort_u64(uint64_t *a, size_t n)
{
    if (n < 2)
        return;
    if (n < 4096) {
        qsort(a, n, sizeof(*a), cmp_u64);
        return;
    }
    uint64_t *tmp = malloc(n * sizeof(*a));
    size_t *cnt = malloc(65536 * sizeof(*cnt));
    if (!tmp || !cnt) {
        free(tmp);
        free(cnt);
        qsort(a, n, sizeof(*a), cmp_u64);
        return;
    }
    uint64_t or_all = 0, and_all = ~0ULL;
    for (size_t i = 0; i < n; i++) {
        or_all |= a[i];
        and_all &= a[i];
    }
    uint64_t *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 16) {
        if (!(((or_all ^ and_all) >> shift) & 0xffff))
            continue;           /* same digit everywhere */
        memset(cnt, 0, 65536 * sizeof(*cnt));
        for (size_t i = 0; i < n; i++)
            cnt[(src[i] >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 0xffff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof(*a));
    free(tmp);
    free(cnt);
}

uint64_t mio_percentile(const uint64_t *sorted, size_t n, double pct)
{
    if (!n)
        return 0;
    /* nearest rank; the epsilon keeps e.g. 99.9% of 1000 at rank 999 */
    double r = ceil(pct / 100.0 * (double)n - 1e-9);
    size_t rank = r < 1 ? 1 : (size_t)r;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static double to_ns(uint64_t x, uint64_t sub, double scale)
{
    return (double)(x > sub ? x - sub : 0) * scale;
}

void mio_stats_compute(const uint64_t *sorted, size_t n, uint64_t sub,
                       double scale, struct mio_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->n = n;
    if (!n)
        return;
    long double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i] > sub ? sorted[i] - sub : 0;
    st->mean = (double)(sum / n) * scale;
    st->min = to_ns(sorted[0], sub, scale);
    st->max = to_ns(sorted[n - 1], sub, scale);
    st->p50 = to_ns(mio_percentile(sorted, n, 50), sub, scale);
    st->p90 = to_ns(mio_percentile(sorted, n, 90), sub, scale);
    st->p99 = to_ns(mio_percentile(sorted, n, 99), sub, scale);
    st->p999 = to_ns(mio_percentile(sorted, n, 99.9), sub, scale);
    st->p9999 = to_ns(mio_percentile(sorted, n, 99.99), sub, scale);
}

void mio_stats_at_least(const uint64_t *sorted, size_t n, uint64_t sub,
                        double scale, double ns, struct mio_stats *st)
{
    size_t lo = 0, hi = n;      /* first index with value_ns >= ns */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (to_ns(sorted[mid], sub, scale) < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    mio_stats_compute(sorted + lo, n - lo, sub, scale, st);
}

/* Buckets 2^(j/16) ns wide on a log scale (~4.4 % per bucket), from the
 * bucket holding the minimum to the one holding the maximum, empty buckets
 * included so the file plots directly. */
#define HIST_PER_OCTAVE 16

static long bucket_of(double ns)
{
    if (ns <= 0)
        return LONG_MIN / 2;
    return (long)ceil(log2(ns) * HIST_PER_OCTAVE - 1e-9);
}

static double bucket_upper(long b)
{
    return exp2((double)b / HIST_PER_OCTAVE);
}

int mio_write_hist(FILE *f, const uint64_t *sorted, size_t n, uint64_t sub,
                   double scale)
{
    fprintf(f, "latency_ns_lower,latency_ns_upper,count,cumulative_count,"
            "cumulative_fraction\n");
    if (!n)
        return ferror(f) ? -1 : 0;
    size_t i = 0, cum = 0;
    /* zero-latency samples (possible with --subtract-overhead) */
    size_t zeros = 0;
    while (i < n && to_ns(sorted[i], sub, scale) <= 0)
        i++, zeros++;
    if (zeros) {
        cum = zeros;
        fprintf(f, "0,0,%zu,%zu,%.9f\n", zeros, cum, (double)cum / n);
    }
    if (i < n) {
        long b = bucket_of(to_ns(sorted[i], sub, scale));
        long last = bucket_of(to_ns(sorted[n - 1], sub, scale));
        for (; b <= last; b++) {
            double hi = bucket_upper(b);
            size_t c = 0;
            while (i < n && (b == last ||
                                to_ns(sorted[i], sub, scale) <= hi))
                i++, c++;
            cum += c;
            fprintf(f, "%.4f,%.4f,%zu,%zu,%.9f\n", bucket_upper(b - 1), hi,
                    c, cum, (double)cum / n);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* Exact nearest-rank latencies at 0.1 % steps, then the tail at
 * 99.91..99.99, 99.991..99.999 and 100. */
int mio_write_cdf(FILE *f, const uint64_t *sorted, size_t n, uint64_t sub,
                  double scale)
{
    fprintf(f, "percentile,latency_ns\n");
    if (!n)
        return ferror(f) ? -1 : 0;
    for (int k = 1; k <= 999; k++) {
        double pct = k / 10.0;
        fprintf(f, "%.1f,%.3f\n", pct,
                to_ns(mio_percentile(sorted, n, pct), sub, scale));
    }
    for (int k = 1; k <= 9; k++) {
        double pct = 99.9 + k / 100.0;
        fprintf(f, "%.2f,%.3f\n", pct,
                to_ns(mio_percentile(sorted, n, pct), sub, scale));
    }
    for (int k = 1; k <= 9; k++) {
        double pct = 99.99 + k / 1000.0;
        fprintf(f, "%.3f,%.3f\n", pct,
                to_ns(mio_percentile(sorted, n, pct), sub, scale));
    }
    fprintf(f, "100,%.3f\n", to_ns(sorted[n - 1], sub, scale));
    return ferror(f) ? -1 : 0;
}
