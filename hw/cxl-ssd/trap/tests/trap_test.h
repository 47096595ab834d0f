/*
 * Helpers shared by the trap engine tests (TAP output from tests/tap.h): a
 * memfd with two MAP_SHARED views (A registered with the trap, B
 * unregistered like QEMU's own pointer), model construction and an
 * alarm()-based watchdog.
 * Header-only; each test is a single translation unit.
 */
#ifndef CXLSSD_TRAP_TEST_H
#define CXLSSD_TRAP_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../model/tests/model_test.h"
#include "../trap.h"
#include "tap.h"      /* tests/tap.h */

#define PG 4096u

static void watchdog_fired(int sig)
{
    (void)sig;
    static const char msg[] = "not ok 999 - watchdog: test hung\n";
    ssize_t r = write(1, msg, sizeof(msg) - 1);
    (void)r;
    _exit(3);
}

static inline void watchdog(unsigned seconds)
{
    signal(SIGALRM, watchdog_fired);
    alarm(seconds);
}

struct env {
    int fd;
    size_t len;
    uint64_t npages;
    unsigned char *a;   /* registered with the trap */
    unsigned char *b;   /* plain view of the same memfd */
};

static inline int env_open(struct env *e, uint64_t npages)
{
    memset(e, 0, sizeof(*e));
    e->npages = npages;
    e->len = npages * PG;
    e->fd = memfd_create("cxlssd-trap-test", MFD_CLOEXEC);
    if (e->fd < 0 || ftruncate(e->fd, (off_t)e->len) < 0 ||
        fallocate(e->fd, 0, 0, (off_t)e->len) < 0) {
        perror("memfd");
        return -1;
    }
    e->a = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
    e->b = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
    if (e->a == MAP_FAILED || e->b == MAP_FAILED) {
        perror("mmap");
        return -1;
    }
    return 0;
}

static inline void env_close(struct env *e)
{
    munmap(e->a, e->len);
    munmap(e->b, e->len);
    close(e->fd);
}

/* Model config for a small device: @npages pages, @frames cache frames.
 * Read timing is the default (tR 3 us + 3.2 us transfer); program and
 * erase are shortened (10 us, 50 us) so that dirty writebacks and GC on
 * these tiny devices do not stretch the data-path tests into minutes. */
static inline void test_model_config(struct cxlssd_config *c, uint64_t npages,
                              uint64_t frames)
{
    cxlssd_config_defaults(c, npages * PG);
    c->cache_size = frames * PG;
    c->t_prog_ns = 10000;
    c->t_erase_ns = 50000;
    c->evict_low_pct = 10;
    c->evict_high_pct = 25;
}

static inline struct cxlssd_model *test_model(const struct cxlssd_config *c)
{
    return test_model_new(c, "cxlssd_model_new");
}

/* A test_model_config() model with policy @pol, next-@prefetch prefetch
 * and eviction @ev; NULL after a failed check named @what. */
static inline struct cxlssd_model *test_policy_model(uint64_t npages,
                                                     uint64_t frames,
                                                     enum cxlssd_policy pol,
                                                     uint32_t prefetch,
                                                     enum cxlssd_eviction ev,
                                                     const char *what)
{
    struct cxlssd_config mc;
    test_model_config(&mc, npages, frames);
    mc.policy = pol;
    mc.prefetch = prefetch;
    mc.eviction = ev;
    struct cxlssd_model *m = test_model(&mc);
    if (!m) {
        tap_ok(0, "%s: model", what);
    }
    return m;
}

static inline void test_trap_config(struct cxlssd_trap_config *tc,
                             enum cxlssd_delivery d, uint32_t threads)
{
    memset(tc, 0, sizeof(*tc));
    tc->delivery = d;
    tc->handler_threads = threads;
    tc->handler_cpus = "";
    tc->compensate = false;
    tc->track_dirty = true;
    tc->record_path = NULL;
    tc->mode_name = "uffd";
    tc->accel_name = "native";
}

/* Word @i of page @p for pattern @seed. */
static inline uint64_t pat(uint64_t seed, uint64_t p, uint64_t i)
{
    uint64_t x = seed ^ (p * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull);
    x ^= x >> 29;
    return x;
}

static inline void fill_pattern(unsigned char *base, uint64_t npages, uint64_t seed)
{
    for (uint64_t p = 0; p < npages; p++) {
        uint64_t *w = (uint64_t *)(base + p * PG);
        for (uint64_t i = 0; i < PG / 8; i++) {
            w[i] = pat(seed, p, i);
        }
    }
}

/* Mismatching words of page @p. */
static inline uint64_t check_page(const unsigned char *base, uint64_t p,
                           uint64_t seed)
{
    const volatile uint64_t *w = (const volatile uint64_t *)(base + p * PG);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < PG / 8; i++) {
        bad += w[i] != pat(seed, p, i);
    }
    return bad;
}

/* Mismatching words of pages [0, @npages) of @base. */
static inline uint64_t check_pages(const unsigned char *base, uint64_t npages,
                                   uint64_t seed)
{
    uint64_t bad = 0;
    for (uint64_t p = 0; p < npages; p++) {
        bad += check_page(base, p, seed);
    }
    return bad;
}

static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/*
 * One random access of a shadow-checking worker, from random bits @r: a
 * write (bit 40) stores a fresh value in word @slot of page @p and in
 * *@shadow; a read compares them.  Returns 1 on a mismatch.
 */
static inline int shadow_access(unsigned char *base, uint64_t p,
                                uint64_t slot, uint64_t *shadow, uint64_t r,
                                uint64_t *rs)
{
    volatile uint64_t *word = (volatile uint64_t *)(base + p * PG) + slot;
    if ((r >> 40) & 1) {
        uint64_t v = rng_next(rs) | 1;
        *word = v;
        *shadow = v;
        return 0;
    }
    return *word != *shadow;
}

/*
 * A shadow-checking worker: thread @id of @nthreads on @e's view A owns
 * words id, id + nthreads, ... of every page (PG / 8 / nthreads of them)
 * and keeps their last values in its shadow.
 */
struct shadow_worker {
    struct env *e;
    uint32_t id, nthreads;
    uint64_t ops, bad;
    uint64_t *shadow;   /* [page * own + k]: word id + k * nthreads */
};

/* One random access of @w (shadow_access()), counted in its ops and bad. */
static inline void shadow_step(struct shadow_worker *w, uint64_t *rs)
{
    uint64_t own = PG / 8 / w->nthreads;
    uint64_t r = rng_next(rs);
    uint64_t p = r % w->e->npages;
    uint64_t j = (r >> 16) % own;
    w->bad += shadow_access(w->e->a, p, j * w->nthreads + w->id,
                            &w->shadow[p * own + j], r, rs);
    w->ops++;
}

/* Words of @w that view @base (A or B of its env) holds otherwise than
 * its shadow. */
static inline uint64_t shadow_mismatches(const unsigned char *base,
                                         const struct shadow_worker *w)
{
    uint64_t own = PG / 8 / w->nthreads, bad = 0;
    for (uint64_t p = 0; p < w->e->npages; p++) {
        const volatile uint64_t *page =
            (const volatile uint64_t *)(base + p * PG);
        for (uint64_t j = 0; j < own; j++) {
            bad += page[j * w->nthreads + w->id] != w->shadow[p * own + j];
        }
    }
    return bad;
}

/* The handler wakes the faulter (UFFDIO_CONTINUE) just before it calls
 * cxlssd_fill_done(): wait for the model to catch up before asserting. */
static inline void settle(struct cxlssd_model *m, uint64_t page)
{
    for (int i = 0; i < 1000000 &&
         (cxlssd_page_state(m, page) == CXLSSD_LOADING ||
          cxlssd_page_state(m, page) == CXLSSD_EVICTING); i++) {
        usleep(1);
    }
}

/* Entries in a /proc directory ("/proc/self/fd", "/proc/self/task"). */
#include <dirent.h>
static inline int count_dir(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    if (!d) {
        return -1;
    }
    while (readdir(d)) {
        n++;
    }
    closedir(d);
    return n;
}

static inline int access_ok_or_skip(void)
{
    if (access("/dev/userfaultfd", F_OK) != 0 && geteuid() != 0) {
        return 0;
    }
    return 1;
}

/*
 * The start of every trap test: line-buffered TAP, the whole test skipped
 * without userfaultfd access or a memfd, a watchdog of @seconds, and @e
 * with @npages pages.
 */
static inline void test_start(struct env *e, uint64_t npages,
                              unsigned seconds)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!access_ok_or_skip()) {
        tap_skip_all("no userfaultfd access (need root or /dev/userfaultfd)");
    }
    watchdog(seconds);
    if (env_open(e, npages) < 0) {
        tap_skip_all("memfd/fallocate unavailable");
    }
}

/*
 * A trap for model @m (NULL: its creation failed) with @tc and @hooks on
 * @e's view A.  On failure reports a failed check named @what, frees @m
 * and returns NULL.
 */
static inline struct cxlssd_trap *test_trap_new(struct cxlssd_model *m,
                                                struct env *e,
                                                const struct cxlssd_trap_config *tc,
                                                const struct cxlssd_trap_hooks *hooks,
                                                const char *what)
{
    char err[256];
    struct cxlssd_trap *t = m ? cxlssd_trap_new(m, e->a, e->len, tc, hooks,
                                                err, sizeof(err)) : NULL;
    if (!t) {
        tap_ok(0, "%s: trap: %s", what, m ? err : "model");
        cxlssd_model_free(m);
    }
    return t;
}

/* test_trap_new with delivery @d, one handler and the record CSV at @rec,
 * no hooks. */
static inline struct cxlssd_trap *recorded_trap_new(struct cxlssd_model *m,
                                                    struct env *e,
                                                    enum cxlssd_delivery d,
                                                    const char *rec,
                                                    const char *what)
{
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, d, 1);
    tc.record_path = rec;
    return test_trap_new(m, e, &tc, NULL, what);
}

/* A trap with @tc for model @m (NULL: its creation failed) must be
 * refused with a message naming @prop: checked as @what. */
static inline void check_refused(struct cxlssd_model *m, struct env *e,
                                 const struct cxlssd_trap_config *tc,
                                 const char *prop, const char *what)
{
    char err[256] = "model";
    struct cxlssd_trap *t = m ? cxlssd_trap_new(m, e->a, e->len, tc, NULL,
                                                err, sizeof(err)) : NULL;
    tap_ok(m && !t && strstr(err, prop), "%s: %s", what,
           t ? "(accepted)" : err);
    if (t) {
        cxlssd_trap_free(t);
    }
}

/* Waits (at most 2 s) until no page of @m is EVICTING: background
 * eviction may still be unmapping a batch after the accesses ended, and
 * the model counts an eviction when it picks the victim, the trap its
 * unmap only after that. */
static inline void settle_evictions(const struct cxlssd_model *m)
{
    uint64_t npages = cxlssd_model_pages(m);
    for (int i = 0; i < 20000; i++) {
        uint64_t p = 0;
        while (p < npages && cxlssd_page_state(m, p) != CXLSSD_EVICTING) {
            p++;
        }
        if (p == npages) {
            return;
        }
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
}

/* The end of a data-path case: the model's and the trap's statistics once
 * evictions settled, then the trap freed; returns whether dirty tracking
 * ran. */
static inline bool finish_trap(struct cxlssd_trap *t, struct cxlssd_model *m,
                               struct cxlssd_stats *s,
                               struct cxlssd_trap_stats *ts)
{
    settle_evictions(m);
    cxlssd_model_get_stats(m, s);
    cxlssd_trap_get_stats(t, ts);
    bool wp = cxlssd_trap_dirty_tracking(t);
    cxlssd_trap_free(t);
    return wp;
}

/*
 * A model with @frames frames (next-@prefetch prefetch) over all of @e and
 * a trap (delivery @d, one handler, @hooks or none) on view A; *@mp gets
 * the model.  On failure reports a failed check named @what and returns
 * NULL with nothing left allocated.
 */
static inline struct cxlssd_trap *open_trap(struct env *e,
                                            enum cxlssd_delivery d,
                                            uint64_t frames, uint32_t prefetch,
                                            const struct cxlssd_trap_hooks *hooks,
                                            struct cxlssd_model **mp,
                                            const char *what)
{
    struct cxlssd_config mc;
    test_model_config(&mc, e->npages, frames);
    mc.prefetch = prefetch;
    struct cxlssd_model *m = test_model(&mc);
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, d, 1);
    char name[128];
    snprintf(name, sizeof(name), "%s (%s)", what, cxlssd_delivery_name(d));
    struct cxlssd_trap *t = test_trap_new(m, e, &tc, hooks, name);
    if (t) {
        *mp = m;
    }
    return t;
}

static inline struct cxlssd_trap *open_small_trap(struct env *e,
                                                  enum cxlssd_delivery d,
                                                  uint64_t frames,
                                                  struct cxlssd_model **mp,
                                                  const char *what)
{
    return open_trap(e, d, frames, 0, NULL, mp, what);
}

/*
 * A page the model holds resident loses its mapping behind the engine's
 * back (an outside MADV_DONTNEED): the next access must map it again, not
 * fault forever (wake alone would livelock).  Checked for @d; the caller's
 * watchdog turns a livelock into a failure.
 */
static inline void check_lost_mapping(struct env *e,
                                      enum cxlssd_delivery d)
{
    struct cxlssd_model *m;
    struct cxlssd_trap *t = open_small_trap(e, d, 16, &m, "lost mapping");
    if (!t) {
        return;
    }
    fill_pattern(e->b, 4, 0x1057);
    uint64_t bad = check_page(e->a, 3, 0x1057);     /* miss: mapped */
    settle(m, 3);
    madvise(e->a + 3 * PG, PG, MADV_DONTNEED);      /* behind its back */
    bad += check_page(e->a, 3, 0x1057);             /* read: remapped */
    settle(m, 3);
    madvise(e->a + 3 * PG, PG, MADV_DONTNEED);
    *(volatile uint64_t *)(e->a + 3 * PG) = pat(0x1057, 3, 0);  /* write */
    struct cxlssd_trap_stats ts;
    /* the handler counts a remap after the CONTINUE that woke us */
    for (int i = 0; i < 100000; i++) {
        cxlssd_trap_get_stats(t, &ts);
        if (ts.remaps >= 2) {
            break;
        }
        usleep(10);
    }
    bool cached = cxlssd_page_state(m, 3) == CXLSSD_CACHED;
    cxlssd_trap_free(t);
    cxlssd_model_free(m);
    tap_ok(bad == 0 && cached && ts.remaps == 2,
       "lost mapping (%s): a resident page unmapped from outside is mapped "
       "again on its next read and write (remaps=%llu, mismatches=%llu)",
       cxlssd_delivery_name(d), (unsigned long long)ts.remaps,
       (unsigned long long)bad);
}

#endif
