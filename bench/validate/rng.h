/*
 * The validation's random numbers: splitmix64 (Steele, Lea, Flood,
 * OOPSLA'14), seeded per case so that every run prints the same table.
 */
#ifndef CXLSSD_VALIDATE_RNG_H
#define CXLSSD_VALIDATE_RNG_H

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

/* Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32
 * for the n used here). */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [0, 1). */
static inline double rng_unit(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1p-53;
}

#endif
