/*
 * The tests' and the validation's seeded generator: splitmix64 (Steele,
 * Lea, Flood, OOPSLA'14); the same seed gives the same sequence on every
 * run.  Each user adds the draws it needs (in [0, n), fills, fractions).
 */
#ifndef CXLSSD_TESTS_SPLITMIX64_H
#define CXLSSD_TESTS_SPLITMIX64_H

#include <stdint.h>

struct rng {
    uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
