/*
 * Published analytic models of greedy garbage collection, and how the
 * FTL's own structure enters them (docs/validation.md has the sources and
 * the derivations).
 *
 * Over-provisioning: the models take alpha = T / U, physical over logical
 * pages (Desnoyers' spare factor Sf = 1 - 1/alpha, Van Houdt's
 * rho = 1/alpha); the project's over-provisioning=OP is T = U (1 + OP)
 * rounded up to whole blocks per LUN.
 */
#ifndef CXLSSD_VALIDATE_GC_REF_H
#define CXLSSD_VALIDATE_GC_REF_H

#include <stdint.h>

/* Desnoyers, Eq. 4: LRW (FIFO) cleaning, uniform writes. */
double desnoyers_lrw_waf(double alpha);
/* Desnoyers, Eq. 12: greedy cleaning, uniform writes, @b pages per block. */
double desnoyers_greedy_waf(double alpha, uint32_t b);
/* Desnoyers, Eq. 14: LRW cleaning, a fraction @r of the writes going to a
 * fraction @f of the logical pages (uniform within each part). */
double desnoyers_lrw_hc_waf(double alpha, double r, double f);
/* Desnoyers, Eq. 16: greedy cleaning under the same hot/cold traffic. */
double desnoyers_greedy_hc_waf(double alpha, uint32_t b, double r, double f);

/* Van Houdt's mean-field model of greedy GC (the d-choices model as
 * d -> infinity), uniform writes: the fixed point of the per-level block
 * balance, solved exactly. */
double meanfield_greedy_waf(double alpha, uint32_t b);

/*
 * The space the FTL keeps out of the pool garbage collection chooses
 * from, in blocks: the free blocks (gc-low..gc-high hysteresis) and the
 * free part of the open block, both averaged over host writes, for an FTL
 * whose write amplification is @waf.
 */
double ftl_held_blocks(uint32_t gc_low, uint32_t gc_high, uint32_t b,
                       double waf);

/* A reference model of one LUN: write amplification at alpha = T/U. */
enum gc_model {
    GC_DESNOYERS,       /* Eq. 12, or Eq. 16 when hot_writes > 0 */
    GC_MEANFIELD,       /* uniform only */
};

struct gc_pool {
    enum gc_model model;
    uint32_t b;                 /* pages per block */
    uint32_t blocks;            /* blocks per LUN */
    double pages;               /* logical pages per LUN (mean) */
    uint32_t luns;              /* pools fed round-robin */
    uint32_t gc_low, gc_high;   /* the FTL's thresholds; 0, 0: hold none */
    double hot_writes, hot_space;   /* r, f; 0, 0: uniform */
    /* the measurement window, in host writes since the sequential fill
     * (the LUNs' occupancies spread from zero); 0, 0: stationary */
    double window_start, window_end;
};

struct gc_ref {
    double waf;
    double held_blocks;         /* taken out of each LUN's spare space */
    double alpha;               /* effective, at the mean occupancy */
    double sd_pages;            /* of a LUN's valid pages */
};

/*
 * The reference write amplification of @p: the model at the effective
 * alpha = (blocks - held) * b / pages, averaged over the spread of the
 * LUNs' valid pages that round-robin host writes leave (none with one
 * LUN).  Without thresholds (gc_low = gc_high = 0) nothing is held: one
 * ideal pool per LUN.
 */
struct gc_ref gc_reference(const struct gc_pool *p);

#endif
