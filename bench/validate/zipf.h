/*
 * Independent-reference traces: page i of n is accessed with probability
 * proportional to 1 / rank(i)^s, the ranks a random permutation of the
 * pages (so that popularity does not follow page numbers).
 */
#ifndef CXLSSD_VALIDATE_ZIPF_H
#define CXLSSD_VALIDATE_ZIPF_H

#include <stdint.h>

#include "rng.h"

struct zipf {
    uint32_t n;
    double *cdf;                /* by rank */
    double *p;                  /* by rank */
    uint32_t *page;             /* rank -> page */
};

int zipf_init(struct zipf *z, uint32_t n, double s, struct rng *g);
void zipf_free(struct zipf *z);
uint32_t zipf_sample(const struct zipf *z, struct rng *g);

#endif
