/* run.c: the pointer-chase benchmark.
 *
 * The working set is split into T disjoint regions (region = WSS/T rounded
 * down to whole 4 KiB pages, or to whole nodes below a page), one per
 * thread, laid out back to back from the start of the mapping.  Each
 * thread: builds its chain (first touch by the owner), runs the warm-up
 * passes, checks its chain, then takes its samples.  Phases are separated
 * by barriers so no thread measures while another still builds or warms.
 * The main thread only waits and prints progress. */
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
    uint64_t nodes;
};

struct worker {
    pthread_t th;
    unsigned id;
    struct shared *sh;
    char *base;
    uint64_t *samples;
    struct mio_progress_slot *slot;
    int cpu, chain_ok, build_ok;
    uint64_t visited, hash, migrations;
};

/* Barrier; the serial thread moves the progress display to phase ph. */
static void phase_barrier(struct shared *sh, enum mio_phase ph)
{
    int rc = pthread_barrier_wait(&sh->bar);
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD && sh->prog)
        mio_progress_set_phase(sh->prog, ph);
    pthread_barrier_wait(&sh->bar);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    const struct mio_config *cfg = sh->cfg;
    uint64_t n = sh->nodes;
    uint64_t seed = mio_thread_seed(cfg->seed, w->id);

    if (cfg->embed && cfg->embed->tids)
        cfg->embed->tids[w->id] = (int)syscall(SYS_gettid);
    w->cpu = -1;
    if (cfg->pin && mio_pin_thread(cfg, w->id, &w->cpu) && !cfg->quiet)
        fprintf(stderr, "mio: warning: thread %u: pinning failed: %s\n",
                w->id, strerror(errno));

    w->build_ok = !mio_chain_build(w->base, n, cfg->stride, cfg->pattern,
                                   seed, &w->slot->done[MIO_PH_BUILD]);
    if (!w->build_ok)
        atomic_store(&sh->failed, 1);
    phase_barrier(sh, MIO_PH_WARMUP);

    struct mio_sampler s;
    mio_sampler_init(&s, w->base, cfg->loads_per_sample, sh->tm->mode,
                     cfg->store_ratio, seed);
    if (!atomic_load(&sh->failed) && cfg->warmup_passes)
        mio_walk(&s, cfg->warmup_passes * n, &w->slot->done[MIO_PH_WARMUP]);
    phase_barrier(sh, MIO_PH_CHECK);

    if (cfg->inject_chain_break && w->id == 0)
        ((struct mio_node *)w->base)->next = (struct mio_node *)w->base;
    if (w->build_ok) {
        w->visited = mio_chain_check(w->base, n, cfg->stride, &w->hash,
                                     &w->slot->done[MIO_PH_CHECK]);
        w->chain_ok = w->visited == n;
        if (!w->chain_ok)
            atomic_store(&sh->failed, 1);
    }
    phase_barrier(sh, MIO_PH_MEASURE);

    if (!atomic_load(&sh->failed)) {
        s.p = w->base;          /* warm-up passes end where they began */
        if (cfg->embed && cfg->embed->starts)
            s.starts = cfg->embed->starts + (size_t)w->id * cfg->samples;
        mio_sample(&s, w->samples, cfg->samples,
                   &w->slot->done[MIO_PH_MEASURE]);
        w->migrations = s.migrations;
    }
    if (!cfg->pin)
        w->cpu = sched_getcpu();
    if (sh->prog)
        mio_progress_thread_done(sh->prog);
    return NULL;
}

int mio_run_chase(const struct mio_config *cfg)
{
    const unsigned T = cfg->threads;
    const uint64_t N = cfg->samples;
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
    if (N > SIZE_MAX / sizeof(uint64_t) / T / 2) {
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

    struct mio_target tgt;
    if (mio_target_open(cfg, region * T, &tgt))
        return MIO_EXIT_ERROR;
    if (!cfg->quiet)
        fprintf(stderr, "mio: target %s (%s) mapped %llu bytes at offset "
                "%llu; %u x %llu nodes of %llu bytes\n", cfg->target,
                mio_target_kind_name(tgt.kind),
                (unsigned long long)tgt.map_len,
                (unsigned long long)cfg->offset, T, (unsigned long long)n,
                (unsigned long long)cfg->stride);

    uint64_t *samples = malloc(N * T * sizeof(*samples));
    struct worker *ws = calloc(T, sizeof(*ws));
    struct mio_thread_result *tr = calloc(T, sizeof(*tr));
    uint64_t *merged = NULL;
    struct shared sh = { .cfg = cfg, .tm = &tm, .nodes = n };
    atomic_init(&sh.failed, 0);
    sh.prog = mio_progress_new(T, cfg->quiet ? 0 : cfg->progress_s);
    if (!samples || !ws || !tr || !sh.prog) {
        fprintf(stderr, "mio: out of memory for %llu samples\n",
                (unsigned long long)(N * T));
        goto out;
    }
    /* fault the sample buffer in now, not inside the timed loop */
    memset(samples, 0, N * T * sizeof(*samples));
    mio_progress_set_total(sh.prog, MIO_PH_BUILD, n * T, "nodes");
    mio_progress_set_total(sh.prog, MIO_PH_WARMUP,
                           cfg->warmup_passes * n * T, "loads");
    mio_progress_set_total(sh.prog, MIO_PH_CHECK, n * T, "nodes");
    mio_progress_set_total(sh.prog, MIO_PH_MEASURE, N * T, "samples");
    pthread_barrier_init(&sh.bar, NULL, T);

    unsigned started = 0;
    for (unsigned t = 0; t < T; t++) {
        ws[t].id = t;
        ws[t].sh = &sh;
        ws[t].base = tgt.map + (uint64_t)t * region;
        ws[t].samples = samples + (size_t)t * N;
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

    struct mio_run_info ri = {
        .cfg = cfg, .tm = &tm, .target_kind = mio_target_kind_name(tgt.kind),
        .wss_bytes = region * T, .nodes = n, .samples_total = N * T,
        .overhead_ns = (double)overhead * tm.ns_per_tick,
        .sub_ticks = cfg->subtract_overhead ? overhead : 0,
        .chain_ok = !atomic_load(&sh.failed),
    };
    uint64_t h = 0x6d696f;
    for (unsigned t = 0; t < T; t++) {
        h = mio_mix64(h ^ ws[t].hash);
        ri.migrations += ws[t].migrations;
        tr[t].cpu = ws[t].cpu;
        tr[t].chain_ok = ws[t].chain_ok;
        tr[t].chain_hash = ws[t].hash;
        tr[t].visited = ws[t].visited;
    }
    ri.chain_hash = h;
    double scale = tm.ns_per_tick / (double)cfg->loads_per_sample;
    struct mio_stats all;
    memset(&all, 0, sizeof(all));

    if (!ri.chain_ok) {
        for (unsigned t = 0; t < T; t++)
            if (!ws[t].chain_ok)
                fprintf(stderr, "mio: thread %u: chain check FAILED: %s "
                        "(visited %llu of %llu nodes)\n", t,
                        ws[t].build_ok ? "cycle broken" : "build failed",
                        (unsigned long long)ws[t].visited,
                        (unsigned long long)n);
        ri.samples_total = 0;
        ri.elapsed_s = mio_now_s() - t_start;
        mio_print_summary(stdout, &ri, &all);
        rc = MIO_EXIT_CHAIN;
        goto out;
    }

    rc = MIO_EXIT_OK;
    if (cfg->embed) {
        cfg->embed->clock_timer = tm.mode == MIO_TM_CLOCK;
        cfg->embed->ns_per_tick = tm.ns_per_tick;
        if (cfg->embed->samples)
            memcpy(cfg->embed->samples, samples, N * T * sizeof(*samples));
    }
    if (cfg->raw_path &&
        mio_write_raw(cfg->raw_path, samples, N, T, ri.sub_ticks, scale))
        rc = MIO_EXIT_ERROR;
    for (unsigned t = 0; t < T; t++) {
        mio_sort_u64(samples + (size_t)t * N, N);
        mio_stats_compute(samples + (size_t)t * N, N, ri.sub_ticks, scale,
                          &tr[t].st);
    }
    const uint64_t *sorted = samples;
    if (T > 1) {
        merged = malloc(N * T * sizeof(*merged));
        if (!merged) {
            fprintf(stderr, "mio: out of memory merging samples\n");
            rc = MIO_EXIT_ERROR;
            goto out;
        }
        memcpy(merged, samples, N * T * sizeof(*merged));
        mio_sort_u64(merged, N * T);
        sorted = merged;
    }
    mio_stats_compute(sorted, N * T, ri.sub_ticks, scale, &all);
    ri.elapsed_s = mio_now_s() - t_start;
    if (T > 1)
        for (unsigned t = 0; t < T; t++)
            mio_print_thread(stdout, &ri, t, &tr[t]);
    mio_print_summary(stdout, &ri, &all);
    fflush(stdout);
    if (cfg->hist_path && mio_write_table(cfg->hist_path, "hist", sorted,
                                          N * T, ri.sub_ticks, scale))
        rc = MIO_EXIT_ERROR;
    if (cfg->cdf_path && mio_write_table(cfg->cdf_path, "cdf", sorted,
                                         N * T, ri.sub_ticks, scale))
        rc = MIO_EXIT_ERROR;
    if (cfg->summary_csv_path && mio_write_summary_csv(&ri, &all, tr))
        rc = MIO_EXIT_ERROR;
out:
    free(merged);
    free(samples);
    free(ws);
    free(tr);
    mio_progress_free(sh.prog);
    mio_target_close(&tgt);
    return rc;
}
