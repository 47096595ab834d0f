"""Percentiles and per-point summaries from MIO samples and device records.

One percentile definition for the whole project, the one MIO
(bench/mio/stats.c), the native tool and the joiner use: the nearest
rank, P-th percentile of n sorted values = the value of rank
ceil(P/100 * n) (at least 1), so it is always one of the samples."""

import math
import os

import tables

PERCENTILES = [50, 90, 99, 99.9, 99.99]


def nearest_rank(n, p):
    """0-based index of the P-th percentile among @n sorted values.  The
    epsilon (MIO's too) keeps a rank that is an integer in exact
    arithmetic from rounding up: P99.9 of 1000 values is rank 999."""
    return min(max(1, math.ceil(p / 100.0 * n - 1e-9)), n) - 1


def percentile(sorted_values, p):
    """Nearest-rank P-th percentile of @sorted_values (NaN if empty)."""
    if not sorted_values:
        return float("nan")
    return sorted_values[nearest_rank(len(sorted_values), p)]


def at_total(rows, ncols, percentiles=PERCENTILES):
    """Per percentile P, (P, window size, column means) of @rows (lists of
    @ncols numbers, the total last) whose total ranks within a window
    around the total's P-th percentile: +-10% of the tail mass above P, at
    least one row.  The means add up like the columns do (stacked bars);
    without rows, windows of 0 rows and NaN means."""
    n = len(rows)
    by_total = sorted(rows, key=lambda r: r[-1])
    out = []
    for p in percentiles:
        if not n:
            out.append((p, 0, [float("nan")] * ncols))
            continue
        k = nearest_rank(n, p)
        h = int(n * (1.0 - p / 100.0) / 10.0)
        win = by_total[max(0, k - h):min(n, k + h + 1)]
        out.append((p, len(win), [sum(r[j] for r in win) / len(win)
                                  for j in range(ncols)]))
    return out


def pct_key(p):
    return "p" + str(p).replace(".", "")


def pct_dict(values, prefix=""):
    s = sorted(values)
    out = {f"{prefix}{pct_key(p)}": percentile(s, p) for p in PERCENTILES}
    out[f"{prefix}count"] = len(s)
    out[f"{prefix}mean"] = sum(s) / len(s) if s else float("nan")
    return out


def configured_read_ns(point):
    """Uncontended read miss cost the device is configured for."""
    t_r = int(point.get("device.nand-read-ns", 3000))
    t_x = int(point.get("device.nand-xfer-ns", 3200))
    return t_r + t_x


def miss_threshold_ns(point):
    """Guest samples above this are misses: half the configured miss cost,
    far above any hit (tens to hundreds of ns) and below any miss."""
    return configured_read_ns(point) / 2


def wait_overshoots_us(records):
    """How late each fill's own NAND wait ended, t_wait_end - t_deadline
    (us): the host's share of its tail.  Misses that waited for another
    access's fill have no wait of their own."""
    return [(int(r["t_wait_end_ns"]) - int(r["t_deadline_ns"])) / 1000.0
            for r in records
            if r.get("waited_loading") == "0" and r["t_deadline_ns"] != "0"
            and r["t_wait_end_ns"] != "0"]


def late_waits(records):
    """Records flagged late_wait (past the device's late-wait-ns), as the
    device's own late_waits counts them."""
    return sum(r.get("late_wait") == "1" for r in records)


def summarize_point(outdir, point):
    summary = {}
    raw = tables.read_column(os.path.join(outdir, "mio-dax-raw.csv"), "ns_per_load")
    thr = miss_threshold_ns(point)
    if raw:
        hits = [v for v in raw if v < thr]
        misses = [v for v in raw if v >= thr]
        summary["miss_threshold_ns"] = thr
        summary["samples"] = len(raw)
        summary["hit_fraction"] = len(hits) / len(raw)
        summary.update(pct_dict(hits, "hit_ns_"))
        summary.update(pct_dict(misses, "miss_ns_"))
        read_ns = configured_read_ns(point)
        summary["configured_miss_ns"] = read_ns
        summary.update({f"miss_overhead_us_{pct_key(p)}":
                        (percentile(sorted(misses), p) - read_ns) / 1000.0
                        for p in PERCENTILES} if misses else {})
    for tag in ("dax", "ram"):
        rows = tables.read_csv(os.path.join(outdir, f"mio-{tag}-summary.csv"))
        if rows:
            summary[f"mio_{tag}"] = rows[0]
    records = tables.read_csv(os.path.join(outdir, "misses.csv"))
    if records:
        # the device's service: fault to the later of mapped and wait end
        # (delivery=tlb maps inside the wait, so t_mapped comes first)
        handler = sorted(max(int(r["t_mapped_ns"]), int(r["t_wait_end_ns"] or 0))
                         - int(r["t_fault_ns"])
                         for r in records if r["t_mapped_ns"] and r["t_fault_ns"])
        summary["device_records"] = len(records)
        summary.update(pct_dict([h / 1000.0 for h in handler], "device_miss_us_"))
        summary.update(pct_dict(wait_overshoots_us(records),
                                "wait_overshoot_us_"))
        summary["late_waits"] = late_waits(records)
    st = tables.read_json(os.path.join(outdir, "stats-cxl-vmem0.json"))
    if st is not None:
        summary["device_stats"] = st
        summary["device_misses"] = st.get("misses")
    return summary


def format_summary(summary):
    def fmt(key):
        v = summary.get(key)
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.0f}"
    lines = []
    if "samples" in summary:
        lines.append(f"  samples {summary['samples']}, hit fraction "
                     f"{summary['hit_fraction']:.3f} (miss = sample >= "
                     f"{summary['miss_threshold_ns']:.0f} ns)")
        lines.append("  hit  ns: " + "  ".join(
            f"{pct_key(p)}={fmt('hit_ns_' + pct_key(p))}" for p in PERCENTILES))
        lines.append("  miss ns: " + "  ".join(
            f"{pct_key(p)}={fmt('miss_ns_' + pct_key(p))}" for p in PERCENTILES)
            + f"  (configured {summary['configured_miss_ns']} ns)")
    if "device_misses" in summary:
        lines.append(f"  device misses {summary['device_misses']}, per-miss "
                     f"records {summary.get('device_records', 0)}")
    if summary.get("wait_overshoot_us_count"):
        lines.append("  wait overshoot us: " + "  ".join(
            f"{pct_key(p)}={summary['wait_overshoot_us_' + pct_key(p)]:.2f}"
            for p in PERCENTILES) + f"  (late waits {summary['late_waits']})")
    return "\n".join(lines)
