/*
 * Reference simulations of the cache policies, written from the
 * policies' definitions (below and docs/validation.md), sharing no code
 * with the model's policy_*.c; and Che's approximation for FIFO.
 *
 * Every access is seen (as the model's cxlssd_hit() sees trapped hits).
 *   fifo    evict the page inserted longest ago
 *   lifo    evict the page inserted most recently
 *   clock   frames in a ring swept by a hand; a hit sets the frame's
 *           reference bit, a new page enters with it clear; the hand
 *           clears set bits and evicts the first clear one; empty frames
 *           fill in ring order before any eviction
 *   s3fifo  S3-FIFO (Yang et al., SOSP'23) as the model configures it:
 *           small queue S of frames/10 (at least 1), main queue M, ghost
 *           queue G of frames - |S target| page ids; frequency 0..3, +1
 *           per hit; a miss found in G leaves G and enters M, others
 *           enter S, both with frequency 0; eviction takes from S while
 *           |S| >= its target (or M is empty): S's head moves to M with
 *           frequency 0 if it was hit at least once, else it is evicted
 *           into G; from M: the head is reinserted at the tail with its
 *           frequency minus one while that is > 0, else evicted
 */
#ifndef CXLSSD_VALIDATE_CACHE_REF_H
#define CXLSSD_VALIDATE_CACHE_REF_H

#include <stdint.h>

#include "config.h"

/* Misses among accesses [warm, n) of @trace over @pages pages, with
 * @frames frames, starting empty; -1 on allocation failure. */
int64_t ref_cache_misses(enum cxlssd_policy policy, const uint32_t *trace,
                         uint64_t n, uint64_t warm, uint32_t pages,
                         uint32_t frames);

/* Che's approximation for FIFO under independent references with
 * probabilities @p[0..n): the characteristic time T solves
 * sum_i p_i T / (1 + p_i T) = frames; the miss ratio is
 * sum_i p_i / (1 + p_i T). */
double che_fifo_miss_ratio(const double *p, uint32_t n, uint32_t frames);

#endif
