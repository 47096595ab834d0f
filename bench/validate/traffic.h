/*
 * The write traffic of the garbage-collection cases: a fraction r of the
 * writes to the first fraction f of the pages, uniform within each part
 * (Desnoyers' hot/cold traffic); r = 0: uniform over all pages.  The FTL
 * cases and the independent simulation draw the same sequence from the
 * same seed.
 */
#ifndef CXLSSD_VALIDATE_TRAFFIC_H
#define CXLSSD_VALIDATE_TRAFFIC_H

#include <stdint.h>

#include "rng.h"

struct traffic {
    uint64_t pages;
    double r, f;
};

static inline uint64_t traffic_next(struct rng *g, const struct traffic *t)
{
    if (t->r <= 0) {
        return rng_below(g, t->pages);
    }
    uint64_t hot = (uint64_t)(t->f * t->pages);
    if (rng_unit(g) < t->r) {
        return rng_below(g, hot);
    }
    return hot + rng_below(g, t->pages - hot);
}

#endif
