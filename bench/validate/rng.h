/*
 * The validation's random numbers: tests/splitmix64.h, seeded per case so
 * that every run prints the same table.
 */
#ifndef CXLSSD_VALIDATE_RNG_H
#define CXLSSD_VALIDATE_RNG_H

#include <stdint.h>

#include "splitmix64.h"

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
