/* opts.c: MIO's command line. */
#include "mio.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void usage(FILE *f)
{
    fputs(
"usage: mio [options]\n"
"Pointer-chase latency benchmark (dependent loads timed with the TSC).\n"
"\n"
"Target and working set:\n"
"  --target anon|/dev/daxX.Y|FILE  memory to chase (default anon)\n"
"  --target-size N     device/file size (default: sysfs for devdax, file size)\n"
"  --offset N          byte offset into the target (default 0)\n"
"  --wss-bytes N       working set in bytes, N[K|M|G|T] (default 64M)\n"
"  --wss-ratio R       working set = R * --cache-bytes\n"
"  --cache-bytes N     device DRAM cache size (for --wss-ratio)\n"
"  --thp default|never|always   madvise for anon/file mappings (default: leave)\n"
"\n"
"Chain:\n"
"  --pattern seq|rand  sequential or random (Sattolo) cyclic chain (default rand)\n"
"  --stride N          bytes between nodes, power of two 64..4096 (default 64)\n"
"  --seed S            seed of the random chain and the store mix (default 1)\n"
"\n"
"Run:\n"
"  --threads T         T threads, each chasing its own region of WSS/T\n"
"  --pin[=LIST]        pin thread t to CPU LIST[t mod n] (default: allowed CPUs)\n"
"  --samples N         timed samples per thread (default 100000)\n"
"  --loads-per-sample I  dependent loads per timed sample (default 1)\n"
"  --warmup-passes P   untimed full passes over the chain first (default 1)\n"
"  --store-ratio F     fraction of visits that also store to the node (0..1)\n"
"  --miss-ns NS        samples of at least NS ns per load are misses: adds\n"
"                      misses=, miss_fraction= and miss_*_ns= (the percentiles\n"
"                      of those samples alone) to the summary and CSV\n"
"  --timer auto|tsc|clock  sample timer (default auto: TSC if calibrated)\n"
"  --subtract-overhead subtract the median empty-sample cost from samples\n"
"  --progress SEC      progress on stderr every SEC seconds (default 5, 0=off)\n"
"  --quiet             no informational lines on stderr\n"
"\n"
"Output (the summary line is always printed on stdout):\n"
"  --summary           accepted for compatibility (always on)\n"
"  --summary-csv FILE  summary as CSV (rows: all, thread0, ...)\n"
"  --append            append to --summary-csv (header only if empty)\n"
"  --raw FILE          every sample in ns per load, header line first\n"
"  --hist FILE         log-spaced latency histogram (CSV)\n"
"  --cdf FILE          exact CDF points (CSV: percentile,latency_ns)\n"
"\n"
"Baseline (the same chase on a second region, interleaved with the target):\n"
"  --baseline anon|/dev/daxX.Y|FILE  also chase this region (offset 0, --thp\n"
"                      applies): the same chains, built and warmed on both,\n"
"                      then samples alternate target/baseline in ABBA order\n"
"                      so both see the same machine conditions; prints\n"
"                      mio-baseline: and mio-interleave: lines too\n"
"  --baseline-summary-csv FILE, --baseline-raw FILE, --baseline-hist FILE,\n"
"  --baseline-cdf FILE  the baseline's files (same formats as the target's)\n"
"\n"
"Integrity mode:\n"
"  --verify            write a seed+address pattern over WSS, read it back in\n"
"                      random page order; exit 1 on mismatches\n"
"  --verify-passes K   K write/verify rounds with different seeds (default 1)\n"
"  --verify-overlap    threads write interleaved words of the same pages\n"
"  --inject-corruption (test hook) flip one word between write and verify\n"
"  --inject-chain-break (test hook) break thread 0's chain before the check\n"
"\n"
"Sizes accept K, M, G, T suffixes (binary: K = 1024).\n"
"Exit status: 0 ok, 1 verify mismatch, 2 usage, 3 chain check failed,\n"
"4 runtime error.\n", f);
}

int mio_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    char *end;
    int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        case 't': case 'T': shift = 40; break;
        case 'b': case 'B': shift = 0; end--; break;
        default: return -1;
        }
        end++;
        if (shift && (*end == 'i' || *end == 'I'))
            end++;
        if (*end == 'b' || *end == 'B')
            end++;
        if (*end)
            return -1;
    }
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

int mio_parse_cpu_list(const char *s, unsigned **cpus, unsigned *n)
{
    unsigned cap = 16, cnt = 0;
    unsigned *a = malloc(cap * sizeof(*a));
    if (!a)
        return -1;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long lo = strtoul(p, &end, 10), hi;
        if (errno || end == p || lo > 65535)
            goto bad;
        hi = lo;
        p = end;
        if (*p == '-') {
            p++;
            hi = strtoul(p, &end, 10);
            if (errno || end == p || hi < lo || hi > 65535)
                goto bad;
            p = end;
        }
        for (unsigned long c = lo; c <= hi; c++) {
            if (cnt == cap) {
                unsigned *b = realloc(a, 2 * cap * sizeof(*a));
                if (!b)
                    goto bad;
                a = b;
                cap *= 2;
            }
            a[cnt++] = (unsigned)c;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (!cnt)
        goto bad;
    *cpus = a;
    *n = cnt;
    return 0;
bad:
    free(a);
    return -1;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

enum {
    O_TARGET = 256, O_TARGET_SIZE, O_OFFSET, O_WSS_BYTES, O_WSS_RATIO,
    O_CACHE_BYTES, O_THP, O_PATTERN, O_STRIDE, O_SEED, O_THREADS, O_PIN,
    O_SAMPLES, O_LOADS, O_WARMUP, O_STORE_RATIO, O_MISS_NS, O_TIMER, O_SUBTRACT,
    O_PROGRESS, O_QUIET, O_SUMMARY, O_SUMMARY_CSV, O_APPEND, O_RAW, O_HIST,
    O_CDF, O_VERIFY, O_VERIFY_PASSES, O_VERIFY_OVERLAP, O_INJECT,
    O_INJECT_CHAIN, O_BASELINE, O_B_SUMMARY_CSV, O_B_RAW, O_B_HIST, O_B_CDF,
    O_HELP,
};

static const struct option longopts[] = {
    {"target", required_argument, 0, O_TARGET},
    {"target-size", required_argument, 0, O_TARGET_SIZE},
    {"offset", required_argument, 0, O_OFFSET},
    {"wss-bytes", required_argument, 0, O_WSS_BYTES},
    {"wss-ratio", required_argument, 0, O_WSS_RATIO},
    {"cache-bytes", required_argument, 0, O_CACHE_BYTES},
    {"thp", required_argument, 0, O_THP},
    {"pattern", required_argument, 0, O_PATTERN},
    {"stride", required_argument, 0, O_STRIDE},
    {"seed", required_argument, 0, O_SEED},
    {"threads", required_argument, 0, O_THREADS},
    {"pin", optional_argument, 0, O_PIN},
    {"miss-ns", required_argument, 0, O_MISS_NS},
    {"samples", required_argument, 0, O_SAMPLES},
    {"loads-per-sample", required_argument, 0, O_LOADS},
    {"warmup-passes", required_argument, 0, O_WARMUP},
    {"store-ratio", required_argument, 0, O_STORE_RATIO},
    {"timer", required_argument, 0, O_TIMER},
    {"subtract-overhead", no_argument, 0, O_SUBTRACT},
    {"progress", required_argument, 0, O_PROGRESS},
    {"quiet", no_argument, 0, O_QUIET},
    {"summary", no_argument, 0, O_SUMMARY},
    {"summary-csv", required_argument, 0, O_SUMMARY_CSV},
    {"append", no_argument, 0, O_APPEND},
    {"raw", required_argument, 0, O_RAW},
    {"hist", required_argument, 0, O_HIST},
    {"cdf", required_argument, 0, O_CDF},
    {"verify", no_argument, 0, O_VERIFY},
    {"verify-passes", required_argument, 0, O_VERIFY_PASSES},
    {"verify-overlap", no_argument, 0, O_VERIFY_OVERLAP},
    {"inject-corruption", no_argument, 0, O_INJECT},
    {"inject-chain-break", no_argument, 0, O_INJECT_CHAIN},
    {"baseline", required_argument, 0, O_BASELINE},
    {"baseline-summary-csv", required_argument, 0, O_B_SUMMARY_CSV},
    {"baseline-raw", required_argument, 0, O_B_RAW},
    {"baseline-hist", required_argument, 0, O_B_HIST},
    {"baseline-cdf", required_argument, 0, O_B_CDF},
    {"help", no_argument, 0, O_HELP},
    {0, 0, 0, 0},
};

#define BAD(...) do { fprintf(stderr, "mio: " __VA_ARGS__); \
        fputs("\n(mio --help for usage)\n", stderr); \
        return MIO_EXIT_USAGE; } while (0)

int mio_parse_args(int argc, char **argv, struct mio_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->target = "anon";
    cfg->pattern = MIO_RAND;
    cfg->stride = 64;
    cfg->seed = 1;
    cfg->threads = 1;
    cfg->samples = 100000;
    cfg->loads_per_sample = 1;
    cfg->warmup_passes = 1;
    cfg->progress_s = 5.0;
    cfg->verify_passes = 1;
    uint64_t wss_bytes = 0, v;
    int have_wss_bytes = 0, have_ratio = 0, have_cache = 0;

    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        const char *a = optarg;
        switch (c) {
        case O_TARGET: cfg->target = a; break;
        case O_TARGET_SIZE:
            if (mio_parse_size(a, &cfg->target_size) || !cfg->target_size)
                BAD("bad --target-size '%s'", a);
            break;
        case O_OFFSET:
            if (mio_parse_size(a, &cfg->offset))
                BAD("bad --offset '%s'", a);
            break;
        case O_WSS_BYTES:
            if (mio_parse_size(a, &wss_bytes) || !wss_bytes)
                BAD("bad --wss-bytes '%s'", a);
            have_wss_bytes = 1;
            break;
        case O_WSS_RATIO:
            if (parse_double(a, &cfg->wss_ratio) || cfg->wss_ratio <= 0)
                BAD("bad --wss-ratio '%s' (want a number > 0)", a);
            have_ratio = 1;
            break;
        case O_CACHE_BYTES:
            if (mio_parse_size(a, &cfg->cache_bytes) || !cfg->cache_bytes)
                BAD("bad --cache-bytes '%s'", a);
            have_cache = 1;
            break;
        case O_THP:
            if (!strcmp(a, "default")) cfg->thp = MIO_THP_DEFAULT;
            else if (!strcmp(a, "never")) cfg->thp = MIO_THP_NEVER;
            else if (!strcmp(a, "always")) cfg->thp = MIO_THP_ALWAYS;
            else BAD("bad --thp '%s' (default|never|always)", a);
            break;
        case O_PATTERN:
            if (!strcmp(a, "seq")) cfg->pattern = MIO_SEQ;
            else if (!strcmp(a, "rand")) cfg->pattern = MIO_RAND;
            else BAD("bad --pattern '%s' (seq|rand)", a);
            break;
        case O_STRIDE:
            if (mio_parse_size(a, &cfg->stride) || cfg->stride < 64 ||
                cfg->stride > 4096 || (cfg->stride & (cfg->stride - 1)))
                BAD("bad --stride '%s' (power of two, 64..4096)", a);
            break;
        case O_MISS_NS:
            if (parse_double(a, &cfg->miss_ns) || !(cfg->miss_ns > 0))
                BAD("bad --miss-ns '%s' (want a number of ns > 0)", a);
            break;
        case O_SEED:
            if (parse_u64(a, &cfg->seed))
                BAD("bad --seed '%s'", a);
            break;
        case O_THREADS:
            if (parse_u64(a, &v) || v < 1 || v > 1024)
                BAD("bad --threads '%s' (1..1024)", a);
            cfg->threads = (unsigned)v;
            break;
        case O_PIN:
            cfg->pin = 1;
            if (a) {
                free(cfg->pin_cpus);
                cfg->pin_cpus = NULL;
                if (mio_parse_cpu_list(a, &cfg->pin_cpus, &cfg->n_pin_cpus))
                    BAD("bad --pin list '%s' (e.g. 0,2-3)", a);
            }
            break;
        case O_SAMPLES:
            if (parse_u64(a, &cfg->samples) || !cfg->samples ||
                cfg->samples > (1ULL << 34))
                BAD("bad --samples '%s'", a);
            break;
        case O_LOADS:
            if (parse_u64(a, &cfg->loads_per_sample) ||
                !cfg->loads_per_sample)
                BAD("bad --loads-per-sample '%s' (>= 1)", a);
            break;
        case O_WARMUP:
            if (parse_u64(a, &cfg->warmup_passes))
                BAD("bad --warmup-passes '%s'", a);
            break;
        case O_STORE_RATIO:
            if (parse_double(a, &cfg->store_ratio) || cfg->store_ratio < 0 ||
                cfg->store_ratio > 1)
                BAD("bad --store-ratio '%s' (0..1)", a);
            break;
        case O_TIMER:
            if (!strcmp(a, "auto")) cfg->timer = MIO_TIMER_AUTO;
            else if (!strcmp(a, "tsc")) cfg->timer = MIO_TIMER_TSC;
            else if (!strcmp(a, "clock")) cfg->timer = MIO_TIMER_CLOCK;
            else BAD("bad --timer '%s' (auto|tsc|clock)", a);
            break;
        case O_SUBTRACT: cfg->subtract_overhead = 1; break;
        case O_PROGRESS:
            if (parse_double(a, &cfg->progress_s) || cfg->progress_s < 0)
                BAD("bad --progress '%s'", a);
            break;
        case O_QUIET: cfg->quiet = 1; break;
        case O_SUMMARY: break;
        case O_SUMMARY_CSV: cfg->out.summary_csv = a; break;
        case O_APPEND: cfg->append = 1; break;
        case O_RAW: cfg->out.raw = a; break;
        case O_HIST: cfg->out.hist = a; break;
        case O_CDF: cfg->out.cdf = a; break;
        case O_BASELINE: cfg->baseline = a; break;
        case O_B_SUMMARY_CSV: cfg->baseline_out.summary_csv = a; break;
        case O_B_RAW: cfg->baseline_out.raw = a; break;
        case O_B_HIST: cfg->baseline_out.hist = a; break;
        case O_B_CDF: cfg->baseline_out.cdf = a; break;
        case O_VERIFY: cfg->verify = 1; break;
        case O_VERIFY_PASSES:
            if (parse_u64(a, &v) || v < 1 || v > 1000000)
                BAD("bad --verify-passes '%s'", a);
            cfg->verify_passes = (unsigned)v;
            break;
        case O_VERIFY_OVERLAP: cfg->verify_overlap = 1; break;
        case O_INJECT: cfg->inject_corruption = 1; break;
        case O_INJECT_CHAIN: cfg->inject_chain_break = 1; break;
        case 'h':
        case O_HELP:
            usage(stdout);
            return MIO_EXIT_OK;
        case ':':
            BAD("option %s needs a value", argv[optind - 1]);
        default:
            BAD("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        BAD("unexpected argument '%s'", argv[optind]);

    if (have_wss_bytes && have_ratio)
        BAD("give either --wss-bytes or --wss-ratio, not both");
    if (have_ratio) {
        if (!have_cache)
            BAD("--wss-ratio needs --cache-bytes");
        double w = cfg->wss_ratio * (double)cfg->cache_bytes;
        if (w < 1 || w > 1.8e19)
            BAD("--wss-ratio * --cache-bytes out of range");
        cfg->wss_bytes = (uint64_t)w;
    } else {
        cfg->wss_bytes = have_wss_bytes ? wss_bytes : (64ULL << 20);
    }
    if ((cfg->verify_overlap || cfg->inject_corruption ||
         cfg->verify_passes != 1) && !cfg->verify)
        BAD("--verify-overlap/--verify-passes/--inject-corruption need --verify");
    if (cfg->offset % MIO_PAGE)
        BAD("--offset must be a multiple of 4096");
    if (cfg->append && !cfg->out.summary_csv &&
        !cfg->baseline_out.summary_csv)
        BAD("--append needs --summary-csv");
    const struct mio_outputs *bo = &cfg->baseline_out;
    if ((bo->summary_csv || bo->raw || bo->hist || bo->cdf) &&
        !cfg->baseline)
        BAD("--baseline-summary-csv/-raw/-hist/-cdf need --baseline");
    if (cfg->baseline && cfg->verify)
        BAD("--baseline applies to the chase, not to --verify");
    if (cfg->baseline && !*cfg->baseline)
        BAD("bad --baseline ''");
    return -1;
}

void mio_free_config(struct mio_config *cfg)
{
    free(cfg->pin_cpus);
    cfg->pin_cpus = NULL;
}
