/*
 * An independent simulation of greedy garbage collection, written from
 * the FTL's documented rules (ftl.h, the comment at the top of ftl.c)
 * and sharing no code with ftl.c: the reference for traffic the analytic
 * models do not describe the way the FTL collects.
 *
 *   - pages: lpn -> (LUN, block, page); host writes go round-robin over
 *     the LUNs (to the next one when a LUN cannot take a write)
 *   - per LUN one open block takes host writes and GC copies alike; a
 *     host write never opens the LUN's last free block
 *   - batch collection (the FTL's): at a host write that finds fewer than
 *     gc_low free blocks, take greedy victims (fewest valid pages) until
 *     gc_high blocks are free; the victim's valid pages are copied into
 *     the open block, then it is erased
 *   - continuous collection (for comparison; not the FTL's): before every
 *     host write, one greedy victim at a time while the free space (free
 *     blocks and the open block's room) is below gc_high blocks, so that
 *     every block mixes copies and host writes
 *
 * The traffic: every page once in order, then the random writes of
 * traffic.h, the same sequence as the FTL case with the same seed.
 */
#ifndef CXLSSD_VALIDATE_GC_SIM_H
#define CXLSSD_VALIDATE_GC_SIM_H

#include <stdbool.h>
#include <stdint.h>

struct gc_sim_params {
    uint32_t luns, blocks_per_lun, b;
    uint64_t pages;
    uint32_t gc_low, gc_high;
    bool continuous;
    double r, f;
    double warm, window;        /* host writes, in logical pages */
    uint64_t seed;
};

/* Write amplification over the window; NAN if out of memory. */
double gc_sim_waf(const struct gc_sim_params *p);

#endif
