/*
 * The semantics test's trace: one line per call, its arguments, return
 * value, errno where it failed, and a hash of what it read; two runs that
 * made the same calls with the same results write the same trace.  Plus
 * the seeded generator the calls come from and the hash of what they read.
 */
#ifndef TDM_TEST_TRACE_H
#define TDM_TEST_TRACE_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "splitmix64.h"

/* uniform in [0, n); 0 for n = 0 */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}

static inline void rng_fill(struct rng *r, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n >= 8) {
        uint64_t v = rng_next(r);
        memcpy(p, &v, 8);
        p += 8;
        n -= 8;
    }
    uint64_t v = rng_next(r);
    memcpy(p, &v, n);
}

static inline uint64_t hash_bytes(uint64_t h, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0x100000001b3ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    while (n--) {
        h = (h ^ *p++) * 0x100000001b3ull;
    }
    return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

/* the trace (tdm_ops.c): numbered lines, trace_lines counts them */
extern FILE *trace_out;
extern unsigned long trace_lines;

__attribute__((format(printf, 1, 2)))
void tr(const char *fmt, ...);

/* " -> RET" and, where it failed, " errno=NAME" */
__attribute__((unused))
static const char *result(long ret, int err, char *buf, size_t size)
{
    if (ret < 0) {
        snprintf(buf, size, "-> %ld errno=%d", ret, err);
    } else {
        snprintf(buf, size, "-> %ld", ret);
    }
    return buf;
}

#endif
