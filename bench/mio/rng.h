/* rng.h: small deterministic generators shared by chain building, the
 * load/store mix and the verify pattern.  Pure integer arithmetic, so a
 * seed gives the same sequence on every machine and in the guest. */
#ifndef MIO_RNG_H
#define MIO_RNG_H

#include <stdint.h>

/* SplitMix64 finaliser: a bijection on 64-bit words. */
static inline uint64_t mio_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t mio_splitmix64(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ULL;
    return mio_mix64(*state);
}

/* xoshiro256** */
struct mio_rng {
    uint64_t s[4];
};

static inline void mio_rng_seed(struct mio_rng *r, uint64_t seed)
{
    uint64_t st = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = mio_splitmix64(&st);
}

static inline uint64_t mio_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t mio_rng_next(struct mio_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = mio_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = mio_rotl(s[3], 45);
    return result;
}

/* Uniform integer in [0, bound), bound > 0 (Lemire, with rejection). */
static inline uint64_t mio_rng_below(struct mio_rng *r, uint64_t bound)
{
    unsigned __int128 m = (unsigned __int128)mio_rng_next(r) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = -bound % bound;
        while (low < threshold) {
            m = (unsigned __int128)mio_rng_next(r) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Per-thread seed derived from the user seed. */
static inline uint64_t mio_thread_seed(uint64_t seed, unsigned thread)
{
    return mio_mix64(seed ^ mio_mix64(0x6d696f0000000000ULL + thread));
}

#endif
