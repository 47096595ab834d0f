/*
 * Analytic models of greedy garbage collection (gc_ref.h).
 *
 * Desnoyers: P. Desnoyers, "Analytic modeling of SSD write performance",
 * SYSTOR'12; extended as "Analytic models of SSD write performance", ACM
 * TOS 10(2), 2014.  Van Houdt: B. Van Houdt, "A mean field model for a
 * class of garbage collection algorithms in flash-based solid state
 * drives", SIGMETRICS'13.  Equations are numbered as in the SYSTOR paper.
 */
#include "gc_ref.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* Root of @g in [lo, hi], where g(lo) and g(hi) have opposite signs. */
static double bisect(double (*g)(double, const double *), const double *k,
                     double lo, double hi)
{
    double glo = g(lo, k);
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        double gm = g(mid, k);
        if ((gm < 0) == (glo < 0)) {
            lo = mid;
            glo = gm;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

/* Eq. 4 is WA = alpha / (alpha + W0(-alpha e^-alpha)); with u the valid
 * fraction of a cleaned block, that is WA = 1 / (1 - u) for the root of
 * u = exp(-alpha (1 - u)) in (0, 1/alpha), found here by bisection. */
static double lrw_root(double u, const double *k)
{
    return u - exp(-k[0] * (1.0 - u));
}

double desnoyers_lrw_waf(double alpha)
{
    if (!(alpha > 1.0)) {
        return INFINITY;
    }
    double k[1] = { alpha };
    double u = bisect(lrw_root, k, 0.0, 1.0 / alpha);
    return 1.0 / (1.0 - u);
}

/* Eq. 12: the LRW result at alpha scaled by 1 + 1/(2 Np). */
double desnoyers_greedy_waf(double alpha, uint32_t b)
{
    double k = 1.0 + 1.0 / (2.0 * b);
    return desnoyers_lrw_waf(k * alpha) / k;
}

/* Eq. 14: WA = 1 + sum over the two parts of
 * r_i / (exp((r_i / f_i) alpha / WA) - 1). */
static double hc_root(double x, const double *k)
{
    double alpha = k[0], r = k[1], f = k[2];
    double hot = r / expm1((r / f) * alpha / x);
    double cold = (1.0 - r) / expm1(((1.0 - r) / (1.0 - f)) * alpha / x);
    return 1.0 + hot + cold - x;
}

double desnoyers_lrw_hc_waf(double alpha, double r, double f)
{
    if (!(alpha > 1.0)) {
        return INFINITY;
    }
    double k[3] = { alpha, r, f };
    double hi = 2.0;
    while (hc_root(hi, k) > 0 && hi < 1e9) {
        hi *= 2.0;
    }
    return bisect(hc_root, k, 1.0 + 1e-12, hi);
}

/* Eq. 16: Eq. 14 with the same block-size scaling as Eq. 12. */
double desnoyers_greedy_hc_waf(double alpha, uint32_t b, double r, double f)
{
    double k = 1.0 + 1.0 / (2.0 * b);
    return desnoyers_lrw_hc_waf(k * alpha, r, f) / k;
}

/*
 * Mean field, greedy (d -> infinity), per host write and N blocks of b
 * pages holding U = rho N b valid pages.  A closed block with i valid
 * pages loses one at rate i / U; garbage collection takes r blocks per
 * host write from the lowest occupied level j, a of them after they
 * dropped to j - 1, and each collected block is refilled to b valid
 * pages.  In the fixed point the flux through every level above j is r,
 * so n_i = r U / i for j < i <= b, n_j = a U / j, and
 *   sum n_i = N:             rho b (r (H_b - H_j) + a / j) = 1
 *   free pages = host pages:  r (b - j) + a = 1
 * with 0 <= a <= r; then WA = r b.  One linear equation per j; the level
 * whose solution is feasible is the fixed point.
 */
double meanfield_greedy_waf(double alpha, uint32_t b)
{
    if (!(alpha > 1.0)) {
        return INFINITY;
    }
    double rho = 1.0 / alpha;
    double *h = malloc((b + 1) * sizeof(*h));
    if (!h) {
        return NAN;
    }
    h[0] = 0.0;
    for (uint32_t i = 1; i <= b; i++) {
        h[i] = h[i - 1] + 1.0 / i;
    }
    double waf = 1.0;           /* j = 0: victims hold no valid page */
    for (uint32_t j = b - 1; j >= 1; j--) {
        double den = h[b] - h[j] - (double)(b - j) / j;
        double r = (1.0 / (rho * b) - 1.0 / j) / den;
        if (r >= 1.0 / (b - j + 1) && r <= 1.0 / (b - j)) {
            waf = r * b;
            break;
        }
    }
    free(h);
    return waf;
}

/*
 * One cycle of the FTL's GC on a LUN (ftl.c): collection starts at the
 * host write that finds gc_low - 1 free blocks and takes victims until
 * gc_high are free.  Free blocks only rise at a victim whose copies fit
 * in the open block, so the cycle's last victim leaves the open block
 * with room uniform in [0, b - v) (v: a victim's valid pages), x =
 * (b - v) / 2 = b / (2 WA) on average.  The host then writes x pages at
 * gc_high free blocks, b pages at each of gc_high - 1 .. gc_low, and one
 * page at gc_low - 1.  Averaged over those host writes: the free blocks,
 * and the free fraction of the open block.
 */
double ftl_held_blocks(uint32_t gc_low, uint32_t gc_high, uint32_t b,
                       double waf)
{
    double lo = gc_low < 2 ? 2 : gc_low;
    double hi = gc_high < lo ? lo : gc_high;
    double x = b / (2.0 * waf);
    double writes = x + (hi - lo) * b + 1.0;
    double free_blocks = hi * x + (lo - 1.0);
    for (double k = lo; k < hi; k++) {
        free_blocks += k * b;
    }
    double open_free = x * x / (2.0 * b) + (hi - lo) * (b - 1.0) / 2.0 +
                       (b - 1.0) / b;
    return (free_blocks + open_free) / writes;
}

static double pool_waf(const struct gc_pool *p, double alpha)
{
    if (p->model == GC_MEANFIELD) {
        return meanfield_greedy_waf(alpha, p->b);
    }
    if (p->hot_writes > 0) {
        return desnoyers_greedy_hc_waf(alpha, p->b, p->hot_writes,
                                       p->hot_space);
    }
    return desnoyers_greedy_waf(alpha, p->b);
}

/*
 * Spread of one LUN's valid pages V under round-robin host writes: every
 * luns-th host write lands on the LUN (hot with probability r), and each
 * write kills the old copy of a random hot (or cold) page, which is on
 * the LUN with probability H/Uh (C/Uc).  Linearised, (H, C) is an
 * Ornstein-Uhlenbeck process with drift rates a_h = r/Uh, a_c = (1-r)/Uc
 * and noise D (Bernoulli hot/cold choice of the births, Poisson deaths),
 * starting from zero spread after the sequential fill:
 *   Var_ij(t) = D_ij / (a_i + a_j) * (1 - exp(-(a_i + a_j) t)),
 * averaged here over the measurement window [t0, t1] (host writes), and
 * scaled by 1 - 1/luns because the LUNs' pages sum to the logical pages.
 * Uniform writes, t -> infinity: Var V = U_lun / 2.
 */
static double occupancy_var(const struct gc_pool *p, double t0, double t1)
{
    double u = p->pages * p->luns;
    double r = p->hot_writes > 0 ? p->hot_writes : 0.5;
    double f = p->hot_writes > 0 ? p->hot_space : 0.5;
    double a[2] = { r / (f * u), (1.0 - r) / ((1.0 - f) * u) };
    double bern = r * (1.0 - r);
    double d[2][2] = { { (bern + r) / p->luns, -bern / p->luns },
                       { -bern / p->luns, (bern + 1.0 - r) / p->luns } };
    double var = 0.0;
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            double s = a[i] + a[j];
            /* t1 == 0: stationary */
            double mean_decay = t1 > t0
                ? (exp(-s * t0) - exp(-s * t1)) / (s * (t1 - t0)) : 0.0;
            var += d[i][j] / s * (1.0 - mean_decay);
        }
    }
    return var * (1.0 - 1.0 / p->luns);
}

/* The model averaged over V ~ Normal(pages, sd^2), Simpson's rule over
 * +-6 sd, leaving out occupancies the LUN could not hold (alpha <= 1). */
static double pool_waf_spread(const struct gc_pool *p, double held,
                              double sd)
{
    double space = (p->blocks - held) * p->b;
    if (sd <= 0) {
        return pool_waf(p, space / p->pages);
    }
    const int n = 240;
    double sum = 0.0, wsum = 0.0;
    for (int i = 0; i <= n; i++) {
        double z = -6.0 + 12.0 * i / n;
        double v = p->pages + z * sd;
        double alpha = space / v;
        if (!(alpha > 1.0 + 1e-9)) {
            continue;
        }
        double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        w *= exp(-0.5 * z * z);
        sum += w * pool_waf(p, alpha);
        wsum += w;
    }
    return sum / wsum;
}

struct gc_ref gc_reference(const struct gc_pool *p)
{
    struct gc_ref out = { 0 };
    bool hold = p->gc_low || p->gc_high;
    out.sd_pages = p->luns > 1
        ? sqrt(occupancy_var(p, p->window_start, p->window_end)) : 0.0;
    double waf = pool_waf(p, (double)p->blocks * p->b / p->pages);
    for (int i = 0; i < 50; i++) {
        double held = hold ? ftl_held_blocks(p->gc_low, p->gc_high, p->b,
                                             waf) : 0.0;
        double next = pool_waf_spread(p, held, out.sd_pages);
        out.held_blocks = held;
        if (fabs(next - waf) < 1e-12 * waf) {
            waf = next;
            break;
        }
        waf = next;
    }
    out.waf = waf;
    out.alpha = (p->blocks - out.held_blocks) * p->b / p->pages;
    return out;
}
