"""A point's latency distribution for the figures: its CDF (thinned from
the raw samples, else MIO's CDF file) and its miss percentiles (raw
samples, else MIO's histogram above the miss threshold, else MIO's own
percentiles), with bench/lib/stats.py's percentile definition."""

import math
import os

import stats
import tables


def ecdf(values, n_body=1000, tail_steps=20):
    """Thinned empirical CDF of @values: [(ns, cdf, ccdf)] where
    cdf = P(X <= x) and ccdf = P(X >= x) (so the largest sample has
    ccdf 1/n and shows on a log axis).  Body at 0.1 % steps; tail at
    tail_steps points per decade of the CCDF down to 1/n."""
    s = sorted(values)
    n = len(s)
    if not n:
        return []
    ranks = {1, n}
    for i in range(1, n_body):
        ranks.add(max(1, math.ceil(i / n_body * n)))
    j = 0
    while True:
        c = 10 ** (-2 - j / tail_steps)
        if c * n < 1:
            break
        ranks.add(min(n, max(1, n - math.floor(c * n) + 1)))
        j += 1
    return [(s[r - 1], r / n, (n - r + 1) / n) for r in sorted(ranks)]


def cdf_from_mio(pt):
    """[(ns, cdf, ccdf)] from MIO's CDF file (no raw samples)."""
    n = max(1, pt.samples_total())
    return [(ns, p / 100.0, max(1.0 - p / 100.0 + 1.0 / n, 1.0 / n))
            for p, ns in pt.cdf_file()]


def point_cdf(pt):
    raw = pt.raw()
    return ecdf(raw) if raw else cdf_from_mio(pt)


def hist_misses(pt):
    """(sorted [(lower, upper, count)] of MIO's histogram buckets at or
    above the miss threshold).  The bucket holding the threshold is split
    in proportion to its log-width."""
    out = []
    for r in tables.read_csv(os.path.join(pt.dir, "mio-dax-hist.csv")):
        lo, hi, c = float(r["latency_ns_lower"]), float(r["latency_ns_upper"]), int(r["count"])
        if c == 0 or hi <= pt.threshold:
            continue
        if lo < pt.threshold:
            frac = math.log(hi / pt.threshold) / math.log(hi / lo)
            lo, c = pt.threshold, c * frac
        out.append((lo, hi, c))
    return out


def hist_stats(buckets):
    """Percentiles and mean of histogram buckets (geometric interpolation
    within a bucket; MIO uses 16 buckets per octave, so within ~4 %)."""
    n = sum(c for _, _, c in buckets)
    if n <= 0:
        return {p: float("nan") for p in stats.PERCENTILES}, 0, float("nan")
    mean = sum(c * math.sqrt(lo * hi) for lo, hi, c in buckets) / n
    out = {}
    for p in stats.PERCENTILES:
        want, acc = p / 100.0 * n, 0.0
        for lo, hi, c in buckets:
            if acc + c >= want:
                out[p] = lo * (hi / lo) ** ((want - acc) / c if c else 0)
                break
            acc += c
        else:
            out[p] = buckets[-1][1]
    return out, n, mean


def percentiles(pt, misses_only=True):
    """({p: ns} for stats.PERCENTILES, count, mean, source).  Misses only:
    exact from the raw samples; without them, MIO's own percentiles when
    (almost) every sample is a miss (hit fraction < 0.001 from its CDF
    file), else MIO's histogram above the threshold.  misses_only=False:
    MIO's percentiles over all samples."""
    if misses_only:
        m = pt.miss_values()
        if m is not None:
            s = sorted(m)
            return ({p: stats.percentile(s, p) for p in stats.PERCENTILES}, len(s),
                    (sum(s) / len(s) if s else float("nan")), "raw misses")
        if pt.hit_fraction() >= 0.001:
            pc, n, mean = hist_stats(hist_misses(pt))
            return pc, int(round(n)), mean, "histogram above threshold"
    row = pt.rows.get("all", {})
    keys = {50: "p50_ns", 90: "p90_ns", 99: "p99_ns", 99.9: "p999_ns", 99.99: "p9999_ns"}
    out = {p: float(row[k]) if row.get(k) else float("nan") for p, k in keys.items()}
    return (out, pt.samples_total(), float(row.get("mean_ns", "nan") or "nan"),
            "all samples (MIO)")

