/* test-unit.c: TAP unit tests of MIO's modules (sizes, mapping length,
 * chains, percentiles, sorting, histogram, the hot loop's store mix, the
 * interleaved target/baseline sampling). */
#include "mio.h"
#include "rng.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static int size_is(const char *s, uint64_t want)
{
    uint64_t v = 0;
    return mio_parse_size(s, &v) == 0 && v == want;
}

static int size_bad(const char *s)
{
    uint64_t v;
    return mio_parse_size(s, &v) != 0;
}

static void test_sizes(void)
{
    tap_ok(size_is("4096", 4096) && size_is("4K", 4096) &&
           size_is("4k", 4096) &&
           size_is("2M", 2u << 20) && size_is("3GiB", 3ULL << 30) &&
           size_is("1T", 1ULL << 40) && size_is("0x1000", 4096) &&
           size_is("64MB", 64u << 20) && size_is("512B", 512),
           "parse_size accepts N, K/M/G/T, KiB/MB, hex");
    tap_ok(size_bad("") && size_bad("4X") && size_bad("-1") &&
           size_bad("1KK") &&
           size_bad("M") && size_bad("99999999999999999999"),
           "parse_size rejects junk");
    unsigned *cpus = NULL, n = 0;
    int r = mio_parse_cpu_list("0,2-3", &cpus, &n);
    tap_ok(r == 0 && n == 3 && cpus[0] == 0 && cpus[1] == 2 && cpus[2] == 3,
           "cpu list 0,2-3");
    free(cpus);
    tap_ok(mio_parse_cpu_list("3-1", &cpus, &n) != 0 &&
           mio_parse_cpu_list("", &cpus, &n) != 0, "bad cpu lists rejected");
}

static void test_map_length(void)
{
    const uint64_t M2 = 2u << 20;
    tap_ok(mio_map_length(1, M2, 0) == M2, "devdax length: 1 B -> 2 MiB");
    tap_ok(mio_map_length(M2, M2, 0) == M2, "devdax length: 2 MiB stays");
    tap_ok(mio_map_length(M2 + 1, M2, 0) == 2 * M2, "devdax length rounds up");
    tap_ok(mio_map_length(M2 + 1, M2, 4 * M2) == 2 * M2,
           "devdax length within device");
    tap_ok(mio_map_length(M2 + 1, M2, 3 * M2 / 2 + M2 / 2) == 2 * M2,
           "devdax length equal to device size");
    tap_ok(mio_map_length(2 * M2 + 1, M2, 2 * M2) == 0,
           "devdax length never beyond the device");
    tap_ok(mio_map_length(5000, MIO_PAGE, 0) == 8192,
           "anon length page-rounded");
}

static void test_region(void)
{
    tap_ok(mio_region_bytes(4u << 20, 1, 64) == 4u << 20, "region: 1 thread");
    tap_ok(mio_region_bytes(4u << 20, 3, 64) % MIO_PAGE == 0 &&
           mio_region_bytes(4u << 20, 3, 64) * 3 <= 4u << 20,
           "region: 3 threads page-aligned and disjoint");
    tap_ok(mio_region_bytes(1000, 1, 64) == 960,
           "region below a page: whole nodes");
}

/* Walks next[] from 0; returns cycle length, 0 if a node repeats early. */
static uint64_t cycle_len(const uint32_t *next, uint64_t n, uint8_t *seen)
{
    memset(seen, 0, n);
    uint64_t i = 0, len = 0;
    do {
        if (seen[i])
            return 0;
        seen[i] = 1;
        i = next[i];
        len++;
    } while (i != 0 && len <= n);
    return len;
}

static void test_chain_order(void)
{
    static const uint64_t sizes[] = { 1, 2, 3, 10, 1000, 65536 };
    uint32_t *a = malloc(65536 * sizeof(*a)), *b = malloc(65536 * sizeof(*b));
    uint8_t *seen = malloc(65536);
    for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        uint64_t n = sizes[k];
        mio_chain_order(a, n, MIO_SEQ, 1);
        tap_ok(cycle_len(a, n, seen) == n, "seq chain of %llu is one cycle",
               (unsigned long long)n);
        mio_chain_order(a, n, MIO_RAND, 42);
        tap_ok(cycle_len(a, n, seen) == n, "rand chain of %llu is one cycle",
               (unsigned long long)n);
    }
    mio_chain_order(a, 65536, MIO_RAND, 7);
    mio_chain_order(b, 65536, MIO_RAND, 7);
    tap_ok(!memcmp(a, b, 65536 * sizeof(*a)), "same seed, same chain");
    mio_chain_order(b, 65536, MIO_RAND, 8);
    tap_ok(memcmp(a, b, 65536 * sizeof(*a)) != 0, "other seed, other chain");
    uint64_t seqish = 0;
    for (uint64_t i = 0; i < 65536; i++)
        seqish += a[i] == i + 1;
    tap_ok(seqish < 16, "rand chain is not sequential (%llu i->i+1 links)",
           (unsigned long long)seqish);
    free(a);
    free(b);
    free(seen);
}

static void test_chain_memory(uint64_t stride)
{
    uint64_t n = 512;
    char *mem = aligned_alloc(4096, n * stride);
    for (int pat = 0; pat < 2; pat++) {
        enum mio_pattern p = pat ? MIO_RAND : MIO_SEQ;
        _Atomic uint64_t prog;
        atomic_init(&prog, 0);
        tap_ok(mio_chain_build(mem, n, stride, p, 3, &prog) == 0 &&
               atomic_load(&prog) == n, "build %s chain, stride %llu",
               pat ? "rand" : "seq", (unsigned long long)stride);
        uint64_t h1 = 0, h2 = 0;
        tap_ok(mio_chain_check(mem, n, stride, &h1, NULL) == n,
               "chain check passes (%s, stride %llu)", pat ? "rand" : "seq",
               (unsigned long long)stride);
        mio_chain_build(mem, n, stride, p, 3, NULL);
        mio_chain_check(mem, n, stride, &h2, NULL);
        tap_ok(h1 == h2, "chain hash reproducible");
        /* short-circuit: a node pointing back to node 0 */
        struct mio_node *n5 = (struct mio_node *)(mem + 5 * stride);
        struct mio_node *saved = n5->next;
        n5->next = (struct mio_node *)mem;
        uint64_t v = mio_chain_check(mem, n, stride, NULL, NULL);
        tap_ok(v != n, "check detects a shortened cycle (%llu)",
               (unsigned long long)v);
        n5->next = (struct mio_node *)(mem + n * stride);   /* outside */
        tap_ok(mio_chain_check(mem, n, stride, NULL, NULL) == 0,
               "check detects a pointer out of the region");
        n5->next = (struct mio_node *)(mem + 3);             /* misaligned */
        tap_ok(mio_chain_check(mem, n, stride, NULL, NULL) == 0,
               "check detects a misaligned pointer");
        n5->next = saved;
    }
    free(mem);
}

static void test_cycle_without_start(void)
{
    /* 0 -> 1 -> 2 -> 1: never returns to 0 */
    char mem[3 * 64] __attribute__((aligned(64)));
    struct mio_node *nd[3];
    for (int i = 0; i < 3; i++)
        nd[i] = (struct mio_node *)(mem + 64 * i);
    nd[0]->next = nd[1];
    nd[1]->next = nd[2];
    nd[2]->next = nd[1];
    tap_ok(mio_chain_check(mem, 3, 64, NULL, NULL) == 0,
           "check terminates on a cycle that skips node 0");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_sort_percentiles(void)
{
    size_t n = 200000;
    uint64_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
    struct mio_rng r;
    mio_rng_seed(&r, 99);
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] = (i % 7 == 0) ? mio_rng_next(&r)
                                   : mio_rng_next(&r) % 100000;
    mio_sort_u64(a, n);
    qsort(b, n, sizeof(*b), cmp_u64);
    tap_ok(!memcmp(a, b, n * sizeof(*a)), "radix sort matches qsort");

    uint64_t v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = (uint64_t)i + 1;
    tap_ok(mio_percentile(v, 1000, 50) == 500 &&
           mio_percentile(v, 1000, 90) == 900 &&
           mio_percentile(v, 1000, 99) == 990 &&
           mio_percentile(v, 1000, 99.9) == 999 &&
           mio_percentile(v, 1000, 99.99) == 1000 &&
           mio_percentile(v, 1000, 100) == 1000 &&
           mio_percentile(v, 1000, 0) == 1,
           "nearest-rank percentiles of 1..1000");
    tap_ok(mio_percentile(v, 1, 50) == 1 && mio_percentile(v, 1, 99.99) == 1,
           "percentiles of one sample");
    struct mio_stats st;
    mio_stats_compute(v, 1000, 0, 0.5, &st);
    tap_ok(st.n == 1000 && st.min == 0.5 && st.max == 500 && st.p50 == 250 &&
           st.mean == 250.25, "stats scale ticks to ns");
    tap_ok(st.min <= st.p50 && st.p50 <= st.p90 && st.p90 <= st.p99 &&
           st.p99 <= st.p999 && st.p999 <= st.p9999 && st.p9999 <= st.max,
           "stats monotonic");
    mio_stats_compute(v, 1000, 10, 1.0, &st);
    tap_ok(st.min == 0 && st.p50 == 490 && st.max == 990,
           "overhead subtraction clamps at 0");
    free(a);
    free(b);
}

static void test_hist(void)
{
    size_t n = 10000;
    uint64_t *v = malloc(n * sizeof(*v));
    struct mio_rng r;
    mio_rng_seed(&r, 5);
    for (size_t i = 0; i < n; i++)
        v[i] = 20 + mio_rng_below(&r, 100000);
    mio_sort_u64(v, n);
    FILE *f = tmpfile();
    tap_ok(f && mio_write_hist(f, v, n, 0, 0.5) == 0, "histogram written");
    rewind(f);
    char line[256];
    size_t sum = 0, rows = 0, last_cum = 0;
    int mono = 1;
    double prev_hi = 0;
    if (!fgets(line, sizeof(line), f))
        line[0] = 0;
    int header = !strncmp(line, "latency_ns_lower,latency_ns_upper,count", 39);
    while (fgets(line, sizeof(line), f)) {
        double lo, hi, frac;
        size_t c, cum;
        if (sscanf(line, "%lf,%lf,%zu,%zu,%lf", &lo, &hi, &c, &cum, &frac) != 5)
            break;
        sum += c;
        rows++;
        mono &= hi > lo && lo >= prev_hi - 1e-6 && cum == last_cum + c;
        prev_hi = hi;
        last_cum = cum;
    }
    fclose(f);
    tap_ok(header && sum == n && mono && rows > 10,
           "histogram: header, %zu rows, counts sum to %zu", rows, sum);
    f = tmpfile();
    tap_ok(f && mio_write_cdf(f, v, n, 0, 0.5) == 0, "cdf written");
    if (f)
        fclose(f);
    free(v);
}

static void test_sampler(void)
{
    uint64_t n = 4096, stride = 64;
    char *mem = aligned_alloc(4096, n * stride);
    mio_chain_build(mem, n, stride, MIO_RAND, 11, NULL);
    struct mio_sampler s;
    uint64_t out[1000];
    mio_sampler_init(&s, mem, 3, MIO_TM_CLOCK, 0, 1);
    mio_sample(&s, out, 1000, NULL);
    tap_ok(s.p != NULL, "sampler ran 1000 samples of 3 loads");
    /* after 3000 loads plus (n - 3000) more we are back at the start */
    mio_walk(&s, n - 3000, NULL);
    tap_ok(s.p == mem, "walk follows the chain (back at node 0 after n loads)");

    for (uint64_t i = 0; i < n; i++)
        ((struct mio_node *)(mem + i * stride))->scratch = 0;
    mio_sampler_init(&s, mem, 1, MIO_TM_CLOCK, 0.5, 2);
    mio_walk(&s, n, NULL);
    uint64_t dirty = 0;
    for (uint64_t i = 0; i < n; i++)
        dirty += ((struct mio_node *)(mem + i * stride))->scratch != 0;
    tap_ok(dirty > n * 4 / 10 && dirty < n * 6 / 10,
           "store ratio 0.5 stores to %llu of %llu nodes",
           (unsigned long long)dirty, (unsigned long long)n);
    tap_ok(mio_chain_check(mem, n, stride, NULL, NULL) == n,
           "stores leave the chain intact");
    mio_sampler_init(&s, mem, 1, MIO_TM_LFENCE, 1.0, 2);
    for (uint64_t i = 0; i < n; i++)
        ((struct mio_node *)(mem + i * stride))->scratch = 0;
    mio_sample(&s, out, 1000, NULL);
    mio_walk(&s, n - 1000, NULL);
    dirty = 0;
    for (uint64_t i = 0; i < n; i++)
        dirty += ((struct mio_node *)(mem + i * stride))->scratch != 0;
    tap_ok(dirty == n, "store ratio 1 stores to every node (%llu)",
           (unsigned long long)dirty);
    free(mem);
}

static void test_interleave(void)
{
    uint64_t n = 2048, stride = 128, loads = 5, count = 101;
    char *ma = aligned_alloc(4096, n * stride);
    char *mb = aligned_alloc(4096, n * stride);
    mio_chain_build(ma, n, stride, MIO_RAND, 21, NULL);
    mio_chain_build(mb, n, stride, MIO_RAND, 21, NULL);
    uint64_t ha = 0, hb = 0;
    tap_ok(mio_chain_check(ma, n, stride, &ha, NULL) == n &&
           mio_chain_check(mb, n, stride, &hb, NULL) == n && ha == hb,
           "baseline chain identical to the target's (same seed, hash %016llx)",
           (unsigned long long)ha);
    struct mio_sampler a, b;
    uint64_t oa[101], ob[101], sa[101], sb[101];
    mio_sampler_init(&a, ma, loads, MIO_TM_CLOCK, 0, 1);
    mio_sampler_init(&b, mb, loads, MIO_TM_CLOCK, 0, 1);
    a.starts = sa;
    b.starts = sb;
    _Atomic uint64_t prog;
    atomic_init(&prog, 0);
    mio_sample_interleaved(&a, &b, oa, ob, count, &prog);
    tap_ok(atomic_load(&prog) == 2 * count && a.starts == sa && b.starts == sb,
           "interleaved: progress counts both sides (%llu)",
           (unsigned long long)atomic_load(&prog));
    tap_ok((char *)a.p - ma == (char *)b.p - mb && a.p != ma,
           "interleaved: both sides walked the same nodes");
    int abba = 1;
    for (uint64_t k = 0; k < count; k++)
        abba &= (k & 1) ? sb[k] <= sa[k] : sa[k] <= sb[k];
    tap_ok(abba && sa[1] < sa[2] && sb[0] < sb[1],
           "interleaved: ABBA order (target first on even pairs)");
    mio_walk(&a, n - count * loads, NULL);
    mio_walk(&b, n - count * loads, NULL);
    tap_ok(a.p == ma && b.p == mb, "interleaved: each side stays on its chain");
    free(ma);
    free(mb);
}

static void test_rng(void)
{
    struct mio_rng r;
    mio_rng_seed(&r, 1);
    int ok1 = 1;
    uint64_t hist[10] = {0};
    for (int i = 0; i < 100000; i++) {
        ok1 &= mio_rng_below(&r, 1) == 0;
        hist[mio_rng_below(&r, 10)]++;
    }
    int flat = 1;
    for (int i = 0; i < 10; i++)
        flat &= hist[i] > 9000 && hist[i] < 11000;
    tap_ok(ok1 && flat, "rng_below bounds and spread");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_sizes();
    test_map_length();
    test_region();
    test_chain_order();
    test_chain_memory(64);
    test_chain_memory(4096);
    test_cycle_without_start();
    test_sort_percentiles();
    test_hist();
    test_sampler();
    test_interleave();
    test_rng();
    return tap_done();
}
