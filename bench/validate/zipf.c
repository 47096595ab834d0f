/* Zipf popularity and sampling by inverse CDF (zipf.h). */
#include "zipf.h"

#include <math.h>
#include <stdlib.h>

int zipf_init(struct zipf *z, uint32_t n, double s, struct rng *g)
{
    z->n = n;
    z->cdf = malloc(n * sizeof(*z->cdf));
    z->p = malloc(n * sizeof(*z->p));
    z->page = malloc(n * sizeof(*z->page));
    if (!z->cdf || !z->p || !z->page) {
        zipf_free(z);
        return -1;
    }
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        z->p[i] = pow(i + 1.0, -s);
        sum += z->p[i];
    }
    double acc = 0;
    for (uint32_t i = 0; i < n; i++) {
        z->p[i] /= sum;
        acc += z->p[i];
        z->cdf[i] = acc;
        z->page[i] = i;
    }
    z->cdf[n - 1] = 1.0;
    for (uint32_t i = n - 1; i > 0; i--) {      /* Fisher-Yates */
        uint32_t j = (uint32_t)rng_below(g, i + 1);
        uint32_t t = z->page[i];
        z->page[i] = z->page[j];
        z->page[j] = t;
    }
    return 0;
}

void zipf_free(struct zipf *z)
{
    free(z->cdf);
    free(z->p);
    free(z->page);
    z->cdf = z->p = NULL;
    z->page = NULL;
}

uint32_t zipf_sample(const struct zipf *z, struct rng *g)
{
    double u = rng_unit(g);
    uint32_t lo = 0, hi = z->n - 1;
    while (lo < hi) {                   /* first rank with cdf > u */
        uint32_t mid = lo + (hi - lo) / 2;
        if (z->cdf[mid] > u) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return z->page[lo];
}
