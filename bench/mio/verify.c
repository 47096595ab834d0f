/* verify.c: --verify, an integrity check of the target (used by the
 * emulator's tests).
 *
 * Each pass k writes word w (byte offset o = --offset + 8w) with
 * mix64(seed_k ^ o), using T threads, then reads every page back in a
 * random page order (a fresh permutation per pass) and counts words that
 * differ.  seed_k changes every pass, so with a working set larger than the
 * device cache pages are evicted dirty and refilled with new data.
 *
 *   disjoint (default): thread t writes pages [tP/T, (t+1)P/T) in address
 *       order; verification splits the shuffled page list the same way, so
 *       pages are mostly read by a thread other than their writer.
 *   --verify-overlap: thread t owns the words whose global index i has
 *       i % T == t in every page; all threads walk the same pages at the
 *       same time (writes in address order, reads in the shuffled order),
 *       so pages are shared between threads while the data stays
 *       deterministic.
 *   --inject-corruption: between the first write and verify phases one bit
 *       of one word is flipped; a correct run reports mismatches=1. */
#include "mio.h"
#include "rng.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WORDS_PER_PAGE (MIO_PAGE / 8)
#define MAX_REPORTED 10

struct vshared {
    const struct mio_config *cfg;
    char *map;
    uint64_t pages;
    uint32_t *perm;
    pthread_barrier_t bar;
    struct mio_progress *prog;
    _Atomic uint64_t mismatches;
    _Atomic unsigned reported;
    uint64_t pass_seed;
    double t_mark, write_s, verify_s;
    int injected;
};

struct vworker {
    pthread_t th;
    unsigned id;
    struct vshared *sh;
    struct mio_progress_slot *slot;
};

static uint64_t pass_seed(uint64_t seed, unsigned pass)
{
    return mio_mix64(seed ^ mio_mix64(0x7665726966790000ULL + pass));
}

static inline uint64_t pattern(uint64_t seed, uint64_t off)
{
    return mio_mix64(seed ^ off);
}

static void shuffle_pages(uint32_t *perm, uint64_t pages, uint64_t seed)
{
    struct mio_rng r;
    mio_rng_seed(&r, seed ^ 0x7065726dULL);
    for (uint64_t i = 0; i < pages; i++)
        perm[i] = (uint32_t)i;
    for (uint64_t i = pages - 1; i > 0; i--) {
        uint64_t j = mio_rng_below(&r, i + 1);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static void write_page(struct vshared *sh, uint64_t page, unsigned first,
                       unsigned step)
{
    volatile uint64_t *w = (volatile uint64_t *)(sh->map + page * MIO_PAGE);
    uint64_t off0 = sh->cfg->offset + page * MIO_PAGE;
    for (unsigned i = first; i < WORDS_PER_PAGE; i += step)
        w[i] = pattern(sh->pass_seed, off0 + 8ull * i);
}

static uint64_t check_page(struct vshared *sh, uint64_t page, unsigned first,
                           unsigned step, unsigned pass)
{
    volatile uint64_t *w = (volatile uint64_t *)(sh->map + page * MIO_PAGE);
    uint64_t off0 = sh->cfg->offset + page * MIO_PAGE;
    uint64_t bad = 0;
    for (unsigned i = first; i < WORDS_PER_PAGE; i += step) {
        uint64_t got = w[i];
        uint64_t want = pattern(sh->pass_seed, off0 + 8ull * i);
        if (got != want) {
            bad++;
            if (atomic_fetch_add(&sh->reported, 1) < MAX_REPORTED)
                fprintf(stderr, "mio-verify: mismatch pass=%u offset=0x%llx "
                        "expected=%016llx got=%016llx\n", pass + 1,
                        (unsigned long long)(off0 + 8ull * i),
                        (unsigned long long)want, (unsigned long long)got);
        }
    }
    return bad;
}

/* First index >= base with (index % T) == t, as an offset from base. */
static unsigned first_owned(uint64_t base_index, unsigned t, unsigned T)
{
    return (unsigned)((t + T - base_index % T) % T);
}

/* Between phases: one thread does the bookkeeping. */
static int serial_barrier(struct vshared *sh)
{
    int rc = pthread_barrier_wait(&sh->bar);
    return rc == PTHREAD_BARRIER_SERIAL_THREAD;
}

static void *vworker_main(void *arg)
{
    struct vworker *w = arg;
    struct vshared *sh = w->sh;
    const struct mio_config *cfg = sh->cfg;
    const unsigned T = cfg->threads, t = w->id;
    const uint64_t P = sh->pages;
    uint64_t lo = P * t / T, hi = P * (t + 1) / T;
    int dummy;

    if (cfg->pin && mio_pin_thread(cfg, t, &dummy) && !cfg->quiet)
        fprintf(stderr, "mio: warning: thread %u: pinning failed: %s\n", t,
                strerror(errno));

    for (unsigned pass = 0; pass < cfg->verify_passes; pass++) {
        /* write */
        uint64_t done = 0;
        if (cfg->verify_overlap) {
            for (uint64_t p = 0; p < P; p++) {
                write_page(sh, p, first_owned(p * WORDS_PER_PAGE, t, T), T);
                atomic_store_explicit(&w->slot->done[MIO_PH_WRITE],
                                      ++done, memory_order_relaxed);
            }
        } else {
            for (uint64_t p = lo; p < hi; p++) {
                write_page(sh, p, 0, 1);
                atomic_store_explicit(&w->slot->done[MIO_PH_WRITE],
                                      ++done, memory_order_relaxed);
            }
        }
        if (serial_barrier(sh)) {
            double now = mio_now_s();
            sh->write_s += now - sh->t_mark;
            if (cfg->inject_corruption && pass == 0) {
                uint64_t words = P * WORDS_PER_PAGE;
                uint64_t idx = mio_mix64(cfg->seed ^ 0x696e6a656374ULL) % words;
                volatile uint64_t *x = (volatile uint64_t *)sh->map + idx;
                *x ^= 1ULL << (idx % 64);
                sh->injected = 1;
                fprintf(stderr, "mio-verify: injected corruption at "
                        "offset=0x%llx\n",
                        (unsigned long long)(cfg->offset + idx * 8));
            }
            mio_progress_set_phase(sh->prog, MIO_PH_VERIFY);
            sh->t_mark = mio_now_s();
        }
        pthread_barrier_wait(&sh->bar);

        /* verify in shuffled page order */
        uint64_t bad = 0;
        done = 0;
        if (cfg->verify_overlap) {
            for (uint64_t k = 0; k < P; k++) {
                uint64_t p = sh->perm[k];
                bad += check_page(sh, p, first_owned(p * WORDS_PER_PAGE, t, T),
                                  T, pass);
                atomic_store_explicit(&w->slot->done[MIO_PH_VERIFY],
                                      ++done, memory_order_relaxed);
            }
        } else {
            for (uint64_t k = lo; k < hi; k++) {
                bad += check_page(sh, sh->perm[k], 0, 1, pass);
                atomic_store_explicit(&w->slot->done[MIO_PH_VERIFY],
                                      ++done, memory_order_relaxed);
            }
        }
        atomic_fetch_add(&sh->mismatches, bad);
        if (serial_barrier(sh)) {
            double now = mio_now_s();
            sh->verify_s += now - sh->t_mark;
            if (pass + 1 < cfg->verify_passes) {
                sh->pass_seed = pass_seed(cfg->seed, pass + 1);
                shuffle_pages(sh->perm, P, sh->pass_seed);
                mio_progress_pass(sh->prog, pass + 1, cfg->verify_passes);
                mio_progress_set_phase(sh->prog, MIO_PH_WRITE);
                for (unsigned i = 0; i < T; i++) {
                    struct mio_progress_slot *s = mio_progress_slot(sh->prog, i);
                    atomic_store(&s->done[MIO_PH_WRITE], 0);
                    atomic_store(&s->done[MIO_PH_VERIFY], 0);
                }
            }
            sh->t_mark = mio_now_s();
        }
        pthread_barrier_wait(&sh->bar);
    }
    mio_progress_thread_done(sh->prog);
    return NULL;
}

int mio_run_verify(const struct mio_config *cfg)
{
    const unsigned T = cfg->threads;
    uint64_t pages = cfg->wss_bytes / MIO_PAGE;
    if (pages < 1) {
        fprintf(stderr, "mio: --verify needs at least one 4 KiB page\n");
        return MIO_EXIT_USAGE;
    }
    if (pages > UINT32_MAX) {
        fprintf(stderr, "mio: --verify: too many pages\n");
        return MIO_EXIT_USAGE;
    }
    uint64_t bytes = pages * MIO_PAGE;
    if (bytes != cfg->wss_bytes && !cfg->quiet)
        fprintf(stderr, "mio: note: verify region rounded down to %llu "
                "bytes\n", (unsigned long long)bytes);
    double t0 = mio_now_s();

    struct mio_target tgt;
    if (mio_target_open(cfg, bytes, &tgt))
        return MIO_EXIT_ERROR;
    if (!cfg->quiet)
        fprintf(stderr, "mio: verify %s (%s) %llu pages, %u threads, %s, "
                "%u passes\n", cfg->target, mio_target_kind_name(tgt.kind),
                (unsigned long long)pages, T,
                cfg->verify_overlap ? "overlap" : "disjoint",
                cfg->verify_passes);

    int rc = MIO_EXIT_ERROR;
    struct vshared sh;
    memset(&sh, 0, sizeof(sh));
    sh.cfg = cfg;
    sh.map = tgt.map;
    sh.pages = pages;
    atomic_init(&sh.mismatches, 0);
    atomic_init(&sh.reported, 0);
    sh.perm = malloc(pages * sizeof(*sh.perm));
    sh.prog = mio_progress_new(T, cfg->quiet ? 0 : cfg->progress_s);
    struct vworker *ws = calloc(T, sizeof(*ws));
    if (!sh.perm || !sh.prog || !ws) {
        fprintf(stderr, "mio: out of memory\n");
        goto out;
    }
    uint64_t per = cfg->verify_overlap ? pages * T : pages;
    mio_progress_set_total(sh.prog, MIO_PH_WRITE, per, "pages");
    mio_progress_set_total(sh.prog, MIO_PH_VERIFY, per, "pages");
    mio_progress_set_phase(sh.prog, MIO_PH_WRITE);
    mio_progress_pass(sh.prog, 0, cfg->verify_passes);
    sh.pass_seed = pass_seed(cfg->seed, 0);
    shuffle_pages(sh.perm, pages, sh.pass_seed);
    pthread_barrier_init(&sh.bar, NULL, T);
    sh.t_mark = mio_now_s();
    for (unsigned t = 0; t < T; t++) {
        ws[t].id = t;
        ws[t].sh = &sh;
        ws[t].slot = mio_progress_slot(sh.prog, t);
        int e = pthread_create(&ws[t].th, NULL, vworker_main, &ws[t]);
        if (e) {
            fprintf(stderr, "mio: pthread_create: %s\n", strerror(e));
            exit(MIO_EXIT_ERROR);
        }
    }
    mio_progress_wait(sh.prog);
    for (unsigned t = 0; t < T; t++)
        pthread_join(ws[t].th, NULL);
    pthread_barrier_destroy(&sh.bar);

    uint64_t mism = atomic_load(&sh.mismatches);
    double mib = (double)bytes * cfg->verify_passes / (1024.0 * 1024.0);
    printf("mio-verify: bytes=%llu pages=%llu mismatches=%llu passes=%u "
           "threads=%u mode=%s seed=%llu injected=%d target=%s "
           "target_kind=%s write_mib_s=%.1f verify_mib_s=%.1f "
           "elapsed_s=%.3f\n",
           (unsigned long long)bytes, (unsigned long long)pages,
           (unsigned long long)mism, cfg->verify_passes, T,
           cfg->verify_overlap ? "overlap" : "disjoint",
           (unsigned long long)cfg->seed, sh.injected, cfg->target,
           mio_target_kind_name(tgt.kind),
           sh.write_s > 0 ? mib / sh.write_s : 0,
           sh.verify_s > 0 ? mib / sh.verify_s : 0, mio_now_s() - t0);
    fflush(stdout);
    rc = mism ? MIO_EXIT_MISMATCH : MIO_EXIT_OK;
out:
    free(ws);
    free(sh.perm);
    mio_progress_free(sh.prog);
    mio_target_close(&tgt);
    return rc;
}
