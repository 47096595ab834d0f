/* chase.c: the hot loop.
 *
 * A sample is I dependent loads: each address is the value loaded by the
 * previous load (p = p->next), read through a volatile pointer so the
 * compiler keeps every load and cannot overlap them.  Timer reads are
 * fenced (rdtscp+lfence, or lfence+rdtsc+lfence, or clock_gettime between
 * lfences) so the loads complete inside the window.
 *
 * --store-ratio F: after loading a node's next pointer, the visit stores
 * to the node's scratch word (same cache line, not used by the chain)
 * with probability F.  The choice comes from a xorshift generator and is
 * branch-free (the store goes either to the node or to a private sink), so
 * a fractional mix adds no branch mispredictions. */
#include "mio.h"
#include "rng.h"
#include "timing.h"

#include <stdlib.h>
#include <string.h>

#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE void *load_next(void *p)
{
    return *(void *volatile *)p;
}

ALWAYS_INLINE uint64_t xorshift64(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

ALWAYS_INLINE void *chase(struct mio_sampler *s, void *p, uint64_t n,
                          const int store_mode)
{
    if (store_mode == 0) {
        for (uint64_t i = 0; i < n; i++)
            p = load_next(p);
    } else if (store_mode == 1) {
        uint64_t x = s->rng;
        for (uint64_t i = 0; i < n; i++) {
            void *next = load_next(p);
            x = xorshift64(x);
            ((volatile uint64_t *)p)[1] = x;
            p = next;
        }
        s->rng = x;
    } else {
        uint64_t x = s->rng, thresh = s->store_thresh;
        uintptr_t sink = (uintptr_t)&s->dummy[1];
        for (uint64_t i = 0; i < n; i++) {
            void *next = load_next(p);
            x = xorshift64(x);
            uintptr_t take = (uintptr_t)0 - (uintptr_t)(x < thresh);
            uintptr_t dst = (((uintptr_t)p + 8) & take) | (sink & ~take);
            *(volatile uint64_t *)dst = x;
            p = next;
        }
        s->rng = x;
    }
    __asm__ __volatile__("" : "+r"(p) :: "memory");
    return p;
}

void mio_sampler_init(struct mio_sampler *s, void *start, uint64_t loads,
                      enum mio_tmode tmode, double store_ratio,
                      uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    s->p = start;
    s->loads = loads;
    s->tmode = tmode;
    if (store_ratio <= 0) {
        s->store_mode = 0;
    } else if (store_ratio >= 1) {
        s->store_mode = 1;
    } else {
        s->store_mode = 2;
        s->store_thresh = (uint64_t)(store_ratio * 18446744073709551616.0);
    }
    s->rng = mio_mix64(seed ^ 0x73746f7265ULL) | 1;    /* nonzero */
}

void mio_walk(struct mio_sampler *s, uint64_t n, _Atomic uint64_t *progress)
{
    uint64_t done = 0;
    while (done < n) {
        uint64_t k = n - done < 4096 ? n - done : 4096;
        switch (s->store_mode) {
        case 0: s->p = chase(s, s->p, k, 0); break;
        case 1: s->p = chase(s, s->p, k, 1); break;
        default: s->p = chase(s, s->p, k, 2); break;
        }
        done += k;
        if (progress)
            atomic_fetch_add_explicit(progress, k, memory_order_relaxed);
    }
}

/* A sample's start or end time in @tmode's unit; *@aux gets the CPU's
 * id where the timer reads it (rdtscp). */
ALWAYS_INLINE uint64_t stamp(const enum mio_tmode tmode, uint32_t *aux)
{
    if (tmode == MIO_TM_RDTSCP) {
        return mio_rdtscp_fenced(aux);
    }
    if (tmode == MIO_TM_LFENCE) {
        return mio_rdtsc_fenced();
    }
    mio_lfence();
    uint64_t t = cxlssd_now_ns();
    mio_lfence();
    return t;
}

ALWAYS_INLINE void sample_loop(struct mio_sampler *s, uint64_t *out,
                               uint64_t count, _Atomic uint64_t *progress,
                               const enum mio_tmode tmode,
                               const int store_mode)
{
    void *p = s->p;
    const uint64_t loads = s->loads;
    uint64_t *const starts = s->starts;
    uint64_t migrations = 0;
    const _Atomic int *const stop = s->stop;
    uint64_t k;
    for (k = 0; k < count; k++) {
        if (stop && atomic_load_explicit(stop, memory_order_relaxed))
            break;
        uint32_t a0 = 0, a1 = 0;
        uint64_t t0 = stamp(tmode, &a0);
        p = chase(s, p, loads, store_mode);
        uint64_t t1 = stamp(tmode, &a1);
        out[k] = t1 > t0 ? t1 - t0 : 0;
        if (starts)
            starts[k] = t0;
        migrations += a0 != a1;
        if (progress)
            atomic_store_explicit(progress, k + 1, memory_order_relaxed);
    }
    s->p = p;
    s->migrations += migrations;
    s->taken = k;
}

#define SAMPLE_CASE(tm, sm) \
    case (tm) * 3 + (sm): sample_loop(s, out, count, progress, tm, sm); break

void mio_sample(struct mio_sampler *s, uint64_t *out, uint64_t count,
                _Atomic uint64_t *progress)
{
    switch ((int)s->tmode * 3 + s->store_mode) {
    SAMPLE_CASE(MIO_TM_RDTSCP, 0);
    SAMPLE_CASE(MIO_TM_RDTSCP, 1);
    SAMPLE_CASE(MIO_TM_RDTSCP, 2);
    SAMPLE_CASE(MIO_TM_LFENCE, 0);
    SAMPLE_CASE(MIO_TM_LFENCE, 1);
    SAMPLE_CASE(MIO_TM_LFENCE, 2);
    SAMPLE_CASE(MIO_TM_CLOCK, 0);
    SAMPLE_CASE(MIO_TM_CLOCK, 1);
    default: sample_loop(s, out, count, progress, MIO_TM_CLOCK, 2); break;
    }
}

/* One sample at a time, so the two sides share the machine conditions of
 * each pair; the order flips every pair, so neither side always runs right
 * after the other's loads (which leave their lines in the CPU caches). */
void mio_sample_interleaved(struct mio_sampler *a, struct mio_sampler *b,
                            uint64_t *out_a, uint64_t *out_b, uint64_t count,
                            _Atomic uint64_t *progress)
{
    uint64_t *const sa = a->starts, *const sb = b->starts;
    uint64_t k;
    for (k = 0; k < count; k++) {
        if (a->stop && atomic_load_explicit(a->stop, memory_order_relaxed))
            break;
        a->starts = sa ? sa + k : NULL;
        b->starts = sb ? sb + k : NULL;
        if (k & 1) {
            mio_sample(b, out_b + k, 1, NULL);
            mio_sample(a, out_a + k, 1, NULL);
        } else {
            mio_sample(a, out_a + k, 1, NULL);
            mio_sample(b, out_b + k, 1, NULL);
        }
        if (progress)
            atomic_store_explicit(progress, 2 * (k + 1),
                                  memory_order_relaxed);
    }
    a->starts = sa;
    b->starts = sb;
    a->taken = b->taken = k;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t mio_timer_overhead(enum mio_tmode tmode)
{
    enum { N = 2001 };
    uint64_t v[N];
    struct mio_node self = { &self, 0 };
    struct mio_sampler s;
    mio_sampler_init(&s, &self, 0, tmode, 0, 0);
    mio_sample(&s, v, N, NULL);
    qsort(v, N, sizeof(v[0]), cmp_u64);
    return v[N / 2];
}
