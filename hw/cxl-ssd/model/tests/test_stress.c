/*
 * Stress: 8 threads hammer random pages of a small cache (1024 pages, 64
 * frames) with prefetch on, for every policy, with synchronous and with
 * background eviction (an evictor thread driven by cxlssd_evict_needed()).
 * Each thread behaves like the glue: unmap victims, evict_done(), "map"
 * the page and its prefetches, fill_done(); LOADING -> wait for the other
 * fill; EVICTING -> retry.  The test keeps its own "mapped" bitmap and
 * checks, while running:
 *   - mapped pages <= frames (victims are unmapped before fills map),
 *   - a victim was mapped; a filled page was not, and no two fills of one
 *     page run at once (each fill charged once),
 * and at the end, quiesced:
 *   - CACHED <=> mapped, nothing LOADING/EVICTING, CACHED + free = frames
 *     (no page both free and resident), resident stat = CACHED count,
 *   - NAND host reads == fills (misses + prefetches): each fill charged
 *     once, LOADING waiters charged nothing; FTL consistent.
 * Must be clean under ThreadSanitizer (the model-tsan build runs it).
 * STRESS_OPS=<n> overrides the operations per thread (20000; 5000 under
 * ThreadSanitizer).
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "ftl.h"
#include "model.h"
#include "tap.h"

#define PAGES 1024
#define FRAMES 64
#define THREADS 8

struct run {
    struct cxlssd_model *m;
    _Atomic uint8_t mapped[PAGES];
    _Atomic uint8_t filling[PAGES];
    _Atomic int64_t mapped_count;
    _Atomic uint64_t fills;
    _Atomic uint64_t violations;
    _Atomic uint64_t loading_waits, evicting_retries, resident, hits;
    _Atomic uint64_t bg_victims;
    _Atomic int stop;
    uint64_t ops;
    char first_violation[256];
    _Atomic int have_violation;
};

static void violation(struct run *r, const char *what, uint64_t page)
{
    atomic_fetch_add(&r->violations, 1);
    int expected = 0;
    if (atomic_compare_exchange_strong(&r->have_violation, &expected, 1)) {
        snprintf(r->first_violation, sizeof(r->first_violation),
                 "%s (page %" PRIu64 ")", what, page);
    }
}

static void unmap(struct run *r, uint64_t page)
{
    if (atomic_exchange(&r->mapped[page], 0) != 1) {
        violation(r, "victim was not mapped", page);
    }
    atomic_fetch_sub(&r->mapped_count, 1);
    cxlssd_evict_done(r->m, page);
}

static void begin_fill(struct run *r, uint64_t page)
{
    if (atomic_exchange(&r->filling[page], 1) != 0) {
        violation(r, "two fills of one page at once", page);
    }
}

static void map_and_fill(struct run *r, uint64_t page)
{
    if (atomic_exchange(&r->mapped[page], 1) != 0) {
        violation(r, "filled page already mapped", page);
    }
    int64_t c = atomic_fetch_add(&r->mapped_count, 1) + 1;
    if (c > FRAMES) {
        violation(r, "more pages mapped than frames", page);
    }
    atomic_fetch_add(&r->fills, 1);
    atomic_store(&r->filling[page], 0);
    cxlssd_fill_done(r->m, page);
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

struct worker {
    struct run *r;
    int id;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct run *r = w->r;
    uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(w->id + 1);
    struct cxlssd_miss *x = malloc(sizeof(*x));

    for (uint64_t i = 0; i < r->ops; i++) {
        uint64_t rnd = xorshift(&seed);
        /* skewed: half the accesses go to the first 128 pages */
        uint64_t page = (rnd & 1) ? (rnd >> 8) % 128 : (rnd >> 8) % PAGES;
        bool write = ((rnd >> 40) % 10) == 0;

        if ((rnd >> 50) % 8 == 0) {
            cxlssd_mark_dirty(r->m, page);  /* WP fault on a clean page */
        }
        if (cxlssd_hit(r->m, page, write)) {
            atomic_fetch_add_explicit(&r->hits, 1, memory_order_relaxed);
            continue;
        }
        for (int attempt = 0; attempt < 1000; attempt++) {
            cxlssd_miss(r->m, page, write, cxlssd_now_ns(), x);
            if (x->outcome == CXLSSD_MISS_FILL) {
                begin_fill(r, page);
                for (uint32_t p = 0; p < x->nprefetch; p++) {
                    begin_fill(r, x->prefetch[p].page);
                }
                for (uint32_t v = 0; v < x->nvictims; v++) {
                    unmap(r, x->victims[v].page);
                }
                map_and_fill(r, page);
                for (uint32_t p = 0; p < x->nprefetch; p++) {
                    map_and_fill(r, x->prefetch[p].page);
                }
                break;
            } else if (x->outcome == CXLSSD_MISS_LOADING) {
                atomic_fetch_add_explicit(&r->loading_waits, 1,
                                          memory_order_relaxed);
                uint64_t spins = 0;
                while (cxlssd_page_state(r->m, page) == CXLSSD_LOADING) {
                    if (++spins > 100000000ull) {
                        violation(r, "LOADING never completed", page);
                        break;
                    }
                    sched_yield();
                }
            } else if (x->outcome == CXLSSD_MISS_EVICTING) {
                atomic_fetch_add_explicit(&r->evicting_retries, 1,
                                          memory_order_relaxed);
                sched_yield();
            } else {
                atomic_fetch_add_explicit(&r->resident, 1,
                                          memory_order_relaxed);
                break;
            }
        }
    }
    free(x);
    return NULL;
}

static void *evictor_main(void *arg)
{
    struct run *r = arg;
    struct cxlssd_victim v[32];
    while (!atomic_load(&r->stop)) {
        if (!cxlssd_evict_needed(r->m)) {
            sched_yield();
            continue;
        }
        uint32_t n = cxlssd_evict_background(r->m, cxlssd_now_ns(), v, 32);
        atomic_fetch_add(&r->bg_victims, n);
        for (uint32_t i = 0; i < n; i++) {
            unmap(r, v[i].page);
        }
        if (n == 0) {
            sched_yield();
        }
    }
    return NULL;
}

static void *checker_main(void *arg)
{
    struct run *r = arg;
    struct cxlssd_stats *st = malloc(sizeof(*st));
    while (!atomic_load(&r->stop)) {
        cxlssd_model_get_stats(r->m, st);
        if (st->free_frames > FRAMES) {
            violation(r, "free frames above capacity (underflow)", 0);
        }
        if (atomic_load(&r->mapped_count) > FRAMES ||
            atomic_load(&r->mapped_count) < 0) {
            violation(r, "mapped count out of range", 0);
        }
        sched_yield();
    }
    free(st);
    return NULL;
}

static void run_one(enum cxlssd_policy pol, enum cxlssd_eviction ev,
                    uint64_t ops)
{
    struct cxlssd_config cfg;
    char err[256];
    char name[64];
    snprintf(name, sizeof(name), "%s/%s", cxlssd_policy_name(pol),
             cxlssd_eviction_name(ev));
    cxlssd_config_defaults(&cfg, (uint64_t)PAGES * 4096);
    cfg.cache_size = (uint64_t)FRAMES * 4096;
    cfg.policy = pol;
    cfg.eviction = ev;
    cfg.prefetch = 2;
    cfg.precondition = true;
    cfg.channels = 2;
    cfg.luns_per_channel = 2;
    cfg.pages_per_block = 16;
    cfg.evict_low_pct = 10;
    cfg.evict_high_pct = 25;

    struct run *r = calloc(1, sizeof(*r));
    r->m = cxlssd_model_new(&cfg, err, sizeof(err));
    if (!tap_ok(r->m != NULL, "%s: model created %s", name,
                r->m ? "" : err)) {
        free(r);
        return;
    }
    r->ops = ops;

    pthread_t th[THREADS], evictor, checker;
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].r = r;
        w[i].id = i;
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    if (ev == CXLSSD_EVICTION_BACKGROUND) {
        pthread_create(&evictor, NULL, evictor_main, r);
    }
    pthread_create(&checker, NULL, checker_main, r);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
    }
    /*
     * Eight workers on a loaded 2-core host can finish before the evictor
     * thread ever ran while eviction was needed; the workers leave the
     * cache full, so give it up to 10 s to act on it now.
     */
    if (ev == CXLSSD_EVICTION_BACKGROUND) {
        for (int ms = 0; ms < 10000 && atomic_load(&r->bg_victims) == 0 &&
             cxlssd_evict_needed(r->m); ms++) {
            nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
        }
    }
    atomic_store(&r->stop, 1);
    if (ev == CXLSSD_EVICTION_BACKGROUND) {
        pthread_join(evictor, NULL);
    }
    pthread_join(checker, NULL);

    tap_ok(atomic_load(&r->violations) == 0,
           "%s: no invariant violated while running (%" PRIu64 "; first: %s)",
           name, atomic_load(&r->violations),
           atomic_load(&r->have_violation) ? r->first_violation : "none");

    /* quiesced checks */
    uint64_t cached = 0, odd = 0, mismatch = 0;
    for (uint64_t p = 0; p < PAGES; p++) {
        enum cxlssd_page_state s = cxlssd_page_state(r->m, p);
        bool mapped = atomic_load(&r->mapped[p]) == 1;
        if (s == CXLSSD_CACHED) {
            cached++;
        } else if (s != CXLSSD_NOT_CACHED) {
            odd++;
        }
        if ((s == CXLSSD_CACHED) != mapped) {
            mismatch++;
        }
    }
    struct cxlssd_stats *st = malloc(sizeof(*st));
    cxlssd_model_get_stats(r->m, st);
    tap_ok(odd == 0 && mismatch == 0,
           "%s: quiesced: nothing LOADING/EVICTING (%" PRIu64 "), CACHED <=> "
           "mapped (%" PRIu64 " mismatches)", name, odd, mismatch);
    tap_ok(cached + st->free_frames == FRAMES && st->resident_pages == cached
           && cached <= FRAMES,
           "%s: CACHED %" PRIu64 " + free %" PRIu64 " = %d frames, resident "
           "stat %" PRIu64, name, cached, st->free_frames, FRAMES,
           st->resident_pages);
    uint64_t fills = atomic_load(&r->fills);
    struct ftl_stats fs;
    ftl_get_stats(cxlssd_model_ftl(r->m), &fs);
    uint64_t host_reads = fs.reads - fs.gc_pages_moved;
    tap_ok(fills == st->misses + st->prefetch_issued && host_reads == fills,
           "%s: each fill charged once: fills %" PRIu64 " = misses %" PRIu64
           " + prefetches %" PRIu64 " = NAND host reads %" PRIu64, name,
           fills, st->misses, st->prefetch_issued, host_reads);
    tap_ok(st->evictions_clean + st->evictions_dirty + cached == fills &&
           st->evictions_dirty > 0 && st->host_writes == st->evictions_dirty,
           "%s: evictions %" PRIu64 " clean + %" PRIu64 " dirty + %" PRIu64
           " resident = fills; host writes %" PRIu64, name,
           st->evictions_clean, st->evictions_dirty, cached,
           st->host_writes);
    tap_ok(ftl_check(cxlssd_model_ftl(r->m)) == 0, "%s: FTL consistent",
           name);
    tap_ok(st->prefetch_used <= st->prefetch_issued &&
           st->prefetch_late <= st->prefetch_used,
           "%s: prefetch late %" PRIu64 " <= used %" PRIu64 " <= issued %"
           PRIu64, name, st->prefetch_late, st->prefetch_used,
           st->prefetch_issued);
    if (ev == CXLSSD_EVICTION_BACKGROUND) {
        tap_ok(atomic_load(&r->bg_victims) > 0,
               "%s: background evictor chose %" PRIu64 " victims", name,
               atomic_load(&r->bg_victims));
    }
    tap_diag("%s: hits %" PRIu64 " misses %" PRIu64 " loading waits %" PRIu64
             " evicting retries %" PRIu64 " duplicate faults %" PRIu64
             " gc runs %" PRIu64, name, atomic_load(&r->hits), st->misses,
             atomic_load(&r->loading_waits),
             atomic_load(&r->evicting_retries), atomic_load(&r->resident),
             st->gc_runs);
    free(st);
    cxlssd_model_free(r->m);
    free(r);
}

int main(void)
{
    uint64_t ops = 20000;
#if defined(__SANITIZE_THREAD__)
    ops = 5000;         /* ThreadSanitizer: ~10x slower, races show early */
#endif
    const char *e = getenv("STRESS_OPS");
    if (e && atoll(e) > 0) {
        ops = (uint64_t)atoll(e);
    }
    for (int p = 0; p < CXLSSD_POLICY_COUNT; p++) {
        run_one((enum cxlssd_policy)p, CXLSSD_EVICTION_SYNC, ops);
        run_one((enum cxlssd_policy)p, CXLSSD_EVICTION_BACKGROUND, ops);
    }
    return tap_done();
}
