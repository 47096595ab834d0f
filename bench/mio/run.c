/* run.c: the pointer-chase benchmark.
 *
 * The working set is split into T disjoint regions (region = WSS/T rounded
 * down to whole 4 KiB pages, or to whole nodes below a page), one per
 * thread, laid out back to back from the start of the mapping.  Each
 * thread: builds its chain (first touch by the owner), checks it, runs the
 * warm-up passes, then takes its samples.  Phases are separated by
 * barriers so no thread measures while another still builds or warms, and
 * the warm-up ends for every thread when the last one has done its passes
 * (warm_up(): the measured phase starts from the cache of all threads
 * chasing together).
 * The measured phase starts at a barrier and ends for every thread when the
 * first one has all its samples (a thread left running alone would have the
 * cache to itself: at WSS 1.5x, two threads' regions of 0.75x each fit).
 * Only samples inside the overlap window (last thread's first sample start
 * to first thread's last sample end) are reported; overlap_fraction is
 * T x the fewest samples one thread has in it over the samples taken (1 =
 * every thread sampled at the same rate through one window; a thread that
 * was descheduled brings it down).  The main thread only waits and
 * prints progress.
 *
 * --baseline: a second mapping gets the same regions and, per thread, the
 * same chain (same seed, so the same node order); every phase runs on both
 * (build, check, warm-up pass by pass), and the samples alternate between
 * the target and the baseline (mio_sample_interleaved, ABBA), so the two
 * see the same machine conditions.  Each side is reported on its own. */
#include "mio.h"
#include "rng.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

uint64_t mio_region_bytes(uint64_t wss, unsigned threads, uint64_t stride)
{
    uint64_t per = wss / threads;
    uint64_t g = per >= MIO_PAGE ? MIO_PAGE : stride;
    return per / g * g;
}

int mio_pin_thread(const struct mio_config *cfg, unsigned t, int *cpu_out)
{
    int cpu = -1;
    if (cfg->pin_cpus) {
        cpu = (int)cfg->pin_cpus[t % cfg->n_pin_cpus];
    } else {
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        if (sched_getaffinity(0, sizeof(allowed), &allowed))
            return -1;
        int count = CPU_COUNT(&allowed);
        if (count <= 0)
            return -1;
        int want = (int)(t % (unsigned)count);
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET(c, &allowed) && want-- == 0) {
                cpu = c;
                break;
            }
        }
    }
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (rc) {
        errno = rc;
        return -1;
    }
    *cpu_out = cpu;
    return 0;
}

struct shared {
    const struct mio_config *cfg;
    const struct mio_timer *tm;
    pthread_barrier_t bar;
    struct mio_progress *prog;
    _Atomic int failed;         /* build error or broken chain */
    _Atomic int stop;           /* a thread has all its samples */
    _Atomic unsigned warming;   /* threads not done with their warm-up
                                 * passes */
    uint64_t nodes;
    unsigned sides;             /* 1, or 2 with --baseline */
};

/* One chased region of one thread: side 0 the target, side 1 the
 * baseline. */
struct side {
    char *base;
    uint64_t *samples;
    uint64_t *starts;           /* timer value at each sample's start */
    int chain_ok, build_ok;
    uint64_t visited, hash, migrations;
    uint64_t taken;             /* samples taken (<= cfg->samples) */
};

struct worker {
    pthread_t th;
    unsigned id;
    struct shared *sh;
    struct side side[2];
    struct mio_progress_slot *slot;
    int cpu;
};

/* Barrier; the serial thread moves the progress display to phase ph. */
static void phase_barrier(struct shared *sh, enum mio_phase ph)
{
    int rc = pthread_barrier_wait(&sh->bar);
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD && sh->prog)
        mio_progress_set_phase(sh->prog, ph);
    pthread_barrier_wait(&sh->bar);
}

/* The warm-up passes, then, while another thread has passes left, more
 * chasing.  A thread that waited at the barrier instead would leave the
 * cache to the others: at WSS 1.5x the last one done would start the
 * measured phase with its whole region resident and the first with a third
 * of its own, run through its samples on hits and end the window before
 * the other had a turn (measured: 20000 samples against 500, hit fraction
 * 0.98 against 1/WSS). */
static void warm_up(struct worker *w, struct mio_sampler *s)
{
    struct shared *sh = w->sh;
    for (uint64_t pass = 0; pass < sh->cfg->warmup_passes; pass++)
        for (unsigned i = 0; i < sh->sides; i++)
            mio_walk(&s[i], sh->nodes, &w->slot->done[MIO_PH_WARMUP]);
    atomic_fetch_sub(&sh->warming, 1);
    while (atomic_load(&sh->warming))
        for (unsigned i = 0; i < sh->sides; i++)
            mio_walk(&s[i], 64, NULL);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    const struct mio_config *cfg = sh->cfg;
    const unsigned S = sh->sides;
    uint64_t n = sh->nodes;
    uint64_t seed = mio_thread_seed(cfg->seed, w->id);

    if (cfg->embed && cfg->embed->tids)
        cfg->embed->tids[w->id] = (int)syscall(SYS_gettid);
    w->cpu = -1;
    if (cfg->pin && mio_pin_thread(cfg, w->id, &w->cpu) && !cfg->quiet)
        fprintf(stderr, "mio: warning: thread %u: pinning failed: %s\n",
                w->id, strerror(errno));

    for (unsigned i = 0; i < S; i++) {
        struct side *d = &w->side[i];
        d->build_ok = !mio_chain_build(d->base, n, cfg->stride, cfg->pattern,
                                       seed, &w->slot->done[MIO_PH_BUILD]);
        if (!d->build_ok)
            atomic_store(&sh->failed, 1);
    }
    phase_barrier(sh, MIO_PH_CHECK);

    if (cfg->inject_chain_break && w->id == 0)
        ((struct mio_node *)w->side[0].base)->next =
            (struct mio_node *)w->side[0].base;
    for (unsigned i = 0; i < S; i++) {
        struct side *d = &w->side[i];
        if (!d->build_ok)
            continue;
        d->visited = mio_chain_check(d->base, n, cfg->stride, &d->hash,
                                     &w->slot->done[MIO_PH_CHECK]);
        d->chain_ok = d->visited == n;
        if (!d->chain_ok)
            atomic_store(&sh->failed, 1);
    }
    phase_barrier(sh, MIO_PH_WARMUP);

    /* the same seed: both sides get the same store mix */
    struct mio_sampler s[2];
    for (unsigned i = 0; i < S; i++)
        mio_sampler_init(&s[i], w->side[i].base, cfg->loads_per_sample,
                         sh->tm->mode, cfg->store_ratio, seed);
    if (!atomic_load(&sh->failed))
        warm_up(w, s);
    phase_barrier(sh, MIO_PH_MEASURE);

    if (!atomic_load(&sh->failed)) {
        for (unsigned i = 0; i < S; i++)
            s[i].p = w->side[i].base;   /* from node 0: the warm-up's
                                         * extra chasing ends anywhere */
        for (unsigned i = 0; i < S; i++) {
            s[i].starts = w->side[i].starts;
            s[i].stop = &sh->stop;
        }
        if (S == 2)
            mio_sample_interleaved(&s[0], &s[1], w->side[0].samples,
                                   w->side[1].samples, cfg->samples,
                                   &w->slot->done[MIO_PH_MEASURE]);
        else
            mio_sample(&s[0], w->side[0].samples, cfg->samples,
                       &w->slot->done[MIO_PH_MEASURE]);
        /* the first thread done ends everyone's measured phase: all
         * threads sample over the same window */
        atomic_store(&sh->stop, 1);
        for (unsigned i = 0; i < S; i++) {
            w->side[i].migrations = s[i].migrations;
            w->side[i].taken = s[i].taken;
        }
    }
    if (!cfg->pin)
        w->cpu = sched_getcpu();
    if (sh->prog)
        mio_progress_thread_done(sh->prog);
    return NULL;
}

/* Statistics, summary line and files of one side.  samples: thread t's
 * cnt[t] samples after thread t-1's (sorted in place).  Returns MIO_EXIT_OK or
 * MIO_EXIT_ERROR. */
static int report_side(struct mio_run_info *ri, uint64_t *samples,
                       const uint64_t *cnt, struct mio_thread_result *tr,
                       struct mio_stats *all)
{
    const struct mio_config *cfg = ri->cfg;
    const unsigned T = cfg->threads;
    const uint64_t K = ri->samples_total;
    const struct mio_outputs *o = ri->out;
    double scale = ri->tm->ns_per_tick / (double)cfg->loads_per_sample;
    int rc = MIO_EXIT_OK;

    if (o->raw && mio_write_raw(o->raw, samples, cnt, T, ri->sub_ticks, scale))
        rc = MIO_EXIT_ERROR;
    size_t off = 0;
    for (unsigned t = 0; t < T; t++) {
        mio_sort_u64(samples + off, cnt[t]);
        mio_stats_compute(samples + off, cnt[t], ri->sub_ticks, scale,
                          &tr[t].st);
        if (cfg->miss_ns > 0)
            mio_stats_at_least(samples + off, cnt[t], ri->sub_ticks, scale,
                               cfg->miss_ns, &tr[t].miss);
        off += cnt[t];
    }
    const uint64_t *sorted = samples;
    uint64_t *merged = NULL;
    if (T > 1) {
        merged = malloc((K ? K : 1) * sizeof(*merged));
        if (!merged) {
            fprintf(stderr, "mio: out of memory merging samples\n");
            return MIO_EXIT_ERROR;
        }
        memcpy(merged, samples, K * sizeof(*merged));
        mio_sort_u64(merged, K);
        sorted = merged;
    }
    mio_stats_compute(sorted, K, ri->sub_ticks, scale, all);
    if (cfg->miss_ns > 0)
        mio_stats_at_least(sorted, K, ri->sub_ticks, scale, cfg->miss_ns,
                           &ri->miss);
    if (T > 1)
        for (unsigned t = 0; t < T; t++)
            mio_print_thread(stdout, ri, t, &tr[t]);
    mio_print_summary(stdout, ri, all);
    fflush(stdout);
    if (o->hist && mio_write_table(o->hist, "hist", sorted, K,
                                   ri->sub_ticks, scale))
        rc = MIO_EXIT_ERROR;
    if (o->cdf && mio_write_table(o->cdf, "cdf", sorted, K,
                                  ri->sub_ticks, scale))
        rc = MIO_EXIT_ERROR;
    if (o->summary_csv && mio_write_summary_csv(ri, all, tr))
        rc = MIO_EXIT_ERROR;
    free(merged);
    return rc;
}

/* The overlap window: from the last thread's first sample start to the
 * first thread's last sample end (over both sides).  taken[i*T+t]: samples
 * side i of thread t took (at [(i*T+t)*N]).  Keeps the samples inside the
 * window, compacted per side in thread order, their counts in cnt[i*T+t].
 * Returns T times the smallest per-thread count of side 0: the samples of
 * the window that have a partner from every other thread (a thread that
 * was descheduled through the window has few). */
static uint64_t keep_overlapped(uint64_t *samples, const uint64_t *starts,
                                const uint64_t *taken, unsigned T,
                                unsigned S, uint64_t N, uint64_t *cnt)
{
    uint64_t lo = 0, hi = UINT64_MAX;
    for (unsigned t = 0; t < T; t++) {
        uint64_t first = UINT64_MAX, last = 0;
        for (unsigned i = 0; i < S; i++) {
            size_t b = ((size_t)i * T + t) * N;
            uint64_t n = taken[(size_t)i * T + t];
            if (!n)
                continue;
            uint64_t end = starts[b + n - 1] + samples[b + n - 1];
            first = starts[b] < first ? starts[b] : first;
            last = end > last ? end : last;
        }
        lo = first > lo ? first : lo;
        hi = last < hi ? last : hi;
    }
    uint64_t kept0_min = UINT64_MAX;
    for (unsigned i = 0; i < S; i++) {
        uint64_t *dst = samples + (size_t)i * T * N;
        for (unsigned t = 0; t < T; t++) {
            size_t b = ((size_t)i * T + t) * N;
            uint64_t c = 0;
            for (uint64_t k = 0; k < taken[(size_t)i * T + t]; k++)
                if (starts[b + k] >= lo && starts[b + k] + samples[b + k] <= hi)
                    dst[c++] = samples[b + k];
            dst += c;
            cnt[(size_t)i * T + t] = c;
            if (i == 0 && c < kept0_min)
                kept0_min = c;
        }
    }
    return kept0_min * T;
}

int mio_run_chase(const struct mio_config *cfg)
{
    const unsigned T = cfg->threads;
    const uint64_t N = cfg->samples;
    const unsigned S = cfg->baseline ? 2 : 1;
    int rc = MIO_EXIT_ERROR;
    double t_start = mio_now_s();

    uint64_t region = mio_region_bytes(cfg->wss_bytes, T, cfg->stride);
    uint64_t n = region / cfg->stride;
    if (n < 2) {
        fprintf(stderr, "mio: working set %llu bytes over %u threads gives "
                "fewer than 2 nodes of %llu bytes per thread\n",
                (unsigned long long)cfg->wss_bytes, T,
                (unsigned long long)cfg->stride);
        return MIO_EXIT_USAGE;
    }
    if (n > UINT32_MAX) {
        fprintf(stderr, "mio: more than 2^32-1 nodes per thread; use a "
                "larger stride or more threads\n");
        return MIO_EXIT_USAGE;
    }
    if (N > SIZE_MAX / sizeof(uint64_t) / T / 4) {
        fprintf(stderr, "mio: too many samples\n");
        return MIO_EXIT_USAGE;
    }
    if (region * T != cfg->wss_bytes && !cfg->quiet)
        fprintf(stderr, "mio: note: working set rounded to %llu bytes "
                "(%u x %llu)\n", (unsigned long long)(region * T), T,
                (unsigned long long)region);

    struct mio_timer tm;
    mio_timer_init(&tm, cfg->timer, cfg->quiet);
    uint64_t overhead = mio_timer_overhead(tm.mode);

    struct mio_target tgt[2];
    memset(&tgt[1], 0, sizeof(tgt[1]));
    tgt[1].fd = -1;
    if (mio_target_open(cfg, region * T, &tgt[0]))
        return MIO_EXIT_ERROR;
    if (S == 2 && mio_baseline_open(cfg, region * T, &tgt[1])) {
        mio_target_close(&tgt[0]);
        return MIO_EXIT_ERROR;
    }
    if (!cfg->quiet) {
        fprintf(stderr, "mio: target %s (%s) mapped %llu bytes at offset "
                "%llu; %u x %llu nodes of %llu bytes\n", cfg->target,
                mio_target_kind_name(tgt[0].kind),
                (unsigned long long)tgt[0].map_len,
                (unsigned long long)cfg->offset, T, (unsigned long long)n,
                (unsigned long long)cfg->stride);
        if (S == 2)
            fprintf(stderr, "mio: baseline %s (%s) mapped %llu bytes; the "
                    "same chains, sampled interleaved with the target "
                    "(ABBA)\n", cfg->baseline,
                    mio_target_kind_name(tgt[1].kind),
                    (unsigned long long)tgt[1].map_len);
    }

    uint64_t *samples = malloc(N * T * S * sizeof(*samples));
    uint64_t *starts = malloc(N * T * S * sizeof(*starts));
    uint64_t *cnt = calloc((size_t)T * S, sizeof(*cnt));
    uint64_t *taken = calloc((size_t)T * S, sizeof(*taken));
    struct worker *ws = calloc(T, sizeof(*ws));
    struct mio_thread_result *tr = calloc((size_t)T * S, sizeof(*tr));
    struct shared sh = { .cfg = cfg, .tm = &tm, .nodes = n, .sides = S };
    atomic_init(&sh.failed, 0);
    atomic_init(&sh.warming, T);
    sh.prog = mio_progress_new(T, cfg->quiet ? 0 : cfg->progress_s);
    if (!samples || !starts || !cnt || !taken || !ws || !tr || !sh.prog) {
        fprintf(stderr, "mio: out of memory for %llu samples\n",
                (unsigned long long)(N * T * S));
        goto out;
    }
    /* fault the sample buffers in now, not inside the timed loop */
    memset(samples, 0, N * T * S * sizeof(*samples));
    memset(starts, 0, N * T * S * sizeof(*starts));
    mio_progress_set_total(sh.prog, MIO_PH_BUILD, n * T * S, "nodes");
    mio_progress_set_total(sh.prog, MIO_PH_WARMUP,
                           cfg->warmup_passes * n * T * S, "loads");
    mio_progress_set_total(sh.prog, MIO_PH_CHECK, n * T * S, "nodes");
    mio_progress_set_total(sh.prog, MIO_PH_MEASURE, N * T * S, "samples");
    pthread_barrier_init(&sh.bar, NULL, T);

    unsigned started = 0;
    for (unsigned t = 0; t < T; t++) {
        ws[t].id = t;
        ws[t].sh = &sh;
        for (unsigned i = 0; i < S; i++) {
            ws[t].side[i].base = tgt[i].map + (uint64_t)t * region;
            ws[t].side[i].samples = samples + ((size_t)i * T + t) * N;
            ws[t].side[i].starts = starts + ((size_t)i * T + t) * N;
        }
        ws[t].slot = mio_progress_slot(sh.prog, t);
        int e = pthread_create(&ws[t].th, NULL, worker_main, &ws[t]);
        if (e) {
            /* the barrier counts T threads: cannot continue */
            fprintf(stderr, "mio: pthread_create: %s\n", strerror(e));
            exit(MIO_EXIT_ERROR);
        }
        started++;
    }
    mio_progress_wait(sh.prog);
    for (unsigned t = 0; t < started; t++)
        pthread_join(ws[t].th, NULL);
    pthread_barrier_destroy(&sh.bar);

    static const char *const prefix[2] = { "mio", "mio-baseline" };
    struct mio_run_info ri[2];
    for (unsigned i = 0; i < S; i++) {
        ri[i] = (struct mio_run_info){
            .cfg = cfg, .tm = &tm, .prefix = prefix[i],
            .target = i ? cfg->baseline : cfg->target,
            .target_kind = mio_target_kind_name(tgt[i].kind),
            .out = i ? &cfg->baseline_out : &cfg->out,
            .wss_bytes = region * T, .nodes = n, .samples_total = N * T,
            .samples_taken = N * T, .overlap_fraction = 1,
            .overhead_ns = (double)overhead * tm.ns_per_tick,
            .sub_ticks = cfg->subtract_overhead ? overhead : 0,
            .chain_ok = !atomic_load(&sh.failed),
        };
        uint64_t h = 0x6d696f;
        for (unsigned t = 0; t < T; t++) {
            const struct side *d = &ws[t].side[i];
            struct mio_thread_result *r = &tr[(size_t)i * T + t];
            h = mio_mix64(h ^ d->hash);
            ri[i].migrations += d->migrations;
            r->cpu = ws[t].cpu;
            r->chain_ok = d->chain_ok;
            r->chain_hash = d->hash;
            r->visited = d->visited;
            taken[(size_t)i * T + t] = d->taken;
        }
        ri[i].chain_hash = h;
    }
    struct mio_stats all[2];
    memset(all, 0, sizeof(all));

    if (!ri[0].chain_ok) {
        for (unsigned i = 0; i < S; i++)
            for (unsigned t = 0; t < T; t++) {
                const struct side *d = &ws[t].side[i];
                if (!d->chain_ok)
                    fprintf(stderr, "mio: %sthread %u: chain check FAILED: "
                            "%s (visited %llu of %llu nodes)\n",
                            i ? "baseline " : "", t,
                            d->build_ok ? "cycle broken" : "build failed",
                            (unsigned long long)d->visited,
                            (unsigned long long)n);
            }
        ri[0].samples_total = 0;
        ri[0].elapsed_s = mio_now_s() - t_start;
        mio_print_summary(stdout, &ri[0], &all[0]);
        rc = MIO_EXIT_CHAIN;
        goto out;
    }

    rc = MIO_EXIT_OK;
    if (cfg->embed) {
        cfg->embed->clock_timer = tm.mode == MIO_TM_CLOCK;
        cfg->embed->ns_per_tick = tm.ns_per_tick;
        if (cfg->embed->samples)
            memcpy(cfg->embed->samples, samples, N * T * sizeof(*samples));
        if (cfg->embed->starts)
            memcpy(cfg->embed->starts, starts, N * T * sizeof(*starts));
        if (cfg->embed->taken)
            memcpy(cfg->embed->taken, taken, T * sizeof(*taken));
    }
    uint64_t paired = keep_overlapped(samples, starts, taken, T, S, N, cnt);
    uint64_t taken0 = 0;
    for (unsigned t = 0; t < T; t++)
        taken0 += taken[t];
    for (unsigned i = 0; i < S; i++) {
        uint64_t k = 0;
        for (unsigned t = 0; t < T; t++)
            k += cnt[(size_t)i * T + t];
        ri[i].samples_total = k;
        ri[i].samples_taken = taken0;
        ri[i].overlap_fraction = taken0 ? (double)paired / (double)taken0 : 0;
        ri[i].elapsed_s = mio_now_s() - t_start;
        int r = report_side(&ri[i], samples + (size_t)i * T * N,
                            cnt + (size_t)i * T, tr + (size_t)i * T,
                            &all[i]);
        if (r != MIO_EXIT_OK)
            rc = r;
    }
    if (S == 2) {
        /* the pair at a glance: target / baseline */
        printf("mio-interleave: order=abba pairs=%llu target_p50_ns=%.2f "
               "baseline_p50_ns=%.2f ratio_p50=%.4f target_mean_ns=%.2f "
               "baseline_mean_ns=%.2f ratio_mean=%.4f\n",
               (unsigned long long)ri[1].samples_total, all[0].p50, all[1].p50,
               all[1].p50 > 0 ? all[0].p50 / all[1].p50 : 0.0, all[0].mean,
               all[1].mean, all[1].mean > 0 ? all[0].mean / all[1].mean
                                            : 0.0);
        fflush(stdout);
    }
out:
    free(samples);
    free(starts);
    free(cnt);
    free(taken);
    free(ws);
    free(tr);
    mio_progress_free(sh.prog);
    mio_target_close(&tgt[1]);
    mio_target_close(&tgt[0]);
    return rc;
}
