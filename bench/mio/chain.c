/* chain.c: build and check pointer chains.
 *
 * Node i lives at base + i*stride.  Sequential: i -> i+1 (last -> 0).
 * Random: a cyclic permutation drawn with Sattolo's algorithm, so one
 * cycle visits every node exactly once and the successor of a node is
 * unpredictable from its address.  The order is computed in ordinary
 * memory first and then written node by node in address order, so the
 * target sees one sequential write pass. */
#include "mio.h"
#include "rng.h"

#include <stdlib.h>

int mio_chain_order(uint32_t *next, uint64_t n, enum mio_pattern pattern,
                    uint64_t seed)
{
    if (n < 1 || n > UINT32_MAX)
        return -1;
    if (pattern == MIO_SEQ) {
        for (uint64_t i = 0; i < n; i++)
            next[i] = (uint32_t)((i + 1) % n);
        return 0;
    }
    /* Sattolo: a[] becomes a uniformly random n-cycle, next[i] = a[i]. */
    struct mio_rng r;
    mio_rng_seed(&r, seed);
    for (uint64_t i = 0; i < n; i++)
        next[i] = (uint32_t)i;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = mio_rng_below(&r, i);      /* 0 <= j < i */
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    return 0;
}

int mio_chain_build(char *base, uint64_t n, uint64_t stride,
                    enum mio_pattern pattern, uint64_t seed,
                    _Atomic uint64_t *progress)
{
    uint32_t *next = malloc(n * sizeof(*next));
    if (!next)
        return -1;
    if (mio_chain_order(next, n, pattern, seed)) {
        free(next);
        return -1;
    }
    uint64_t reported = 0;
    for (uint64_t i = 0; i < n; i++) {
        struct mio_node *node = (struct mio_node *)(base + i * stride);
        node->next = (struct mio_node *)(base + (uint64_t)next[i] * stride);
        node->scratch = 0;
        if (progress && !(i & 4095) && i) {
            atomic_fetch_add_explicit(progress, i - reported,
                                      memory_order_relaxed);
            reported = i;
        }
    }
    if (progress)
        atomic_fetch_add_explicit(progress, n - reported,
                                  memory_order_relaxed);
    free(next);
    return 0;
}

uint64_t mio_chain_check(char *base, uint64_t n, uint64_t stride,
                         uint64_t *hash, _Atomic uint64_t *progress)
{
    uint64_t h = 0x6d696f2d636861ULL ^ n;
    uint64_t count = 0, reported = 0;
    char *p = base;
    uint64_t span = n * stride;
    do {
        /* volatile: the check must read what is in memory now */
        char *q = (char *)*(struct mio_node *volatile *)p;
        uint64_t off = (uint64_t)((uintptr_t)q - (uintptr_t)base);
        if (off >= span || off % stride) {   /* wraps if q < base */
            count = 0;          /* left the region: broken chain */
            break;
        }
        count++;
        h = mio_mix64(h ^ (off / stride)) + count;
        if (progress && !(count & 4095) && count <= n) {
            atomic_fetch_add_explicit(progress, count - reported,
                                      memory_order_relaxed);
            reported = count;
        }
        p = q;
    } while (p != base && count <= n);
    if (count > n)
        count = 0;              /* cycle does not return to node 0 */
    if (progress)
        atomic_fetch_add_explicit(progress, n - reported,
                                  memory_order_relaxed);
    if (hash)
        *hash = h;
    return count;
}
