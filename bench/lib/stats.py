"""Percentiles and per-point summaries from MIO samples and device records."""

import csv
import json
import math
import os

PERCENTILES = [50, 90, 99, 99.9, 99.99]
DEFAULT_READ_NS = 3000 + 3200


def percentile(sorted_values, p):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def pct_key(p):
    return "p" + str(p).replace(".", "")


def pct_dict(values, prefix=""):
    s = sorted(values)
    out = {f"{prefix}{pct_key(p)}": percentile(s, p) for p in PERCENTILES}
    out[f"{prefix}count"] = len(s)
    out[f"{prefix}mean"] = sum(s) / len(s) if s else float("nan")
    return out


def read_column(path, column):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [float(r[column]) for r in csv.DictReader(f) if r.get(column)]


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def configured_read_ns(point):
    """Uncontended read miss cost the device is configured for."""
    t_r = int(point.get("device.nand-read-ns", 3000))
    t_x = int(point.get("device.nand-xfer-ns", 3200))
    return t_r + t_x


def miss_threshold_ns(point):
    """Guest samples above this are misses: half the configured miss cost,
    far above any hit (tens to hundreds of ns) and below any miss."""
    return configured_read_ns(point) / 2


def summarize_point(outdir, point):
    summary = {}
    raw = read_column(os.path.join(outdir, "mio-dax-raw.csv"), "ns_per_load")
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
        rows = read_csv(os.path.join(outdir, f"mio-{tag}-summary.csv"))
        if rows:
            summary[f"mio_{tag}"] = rows[0]
    records = read_csv(os.path.join(outdir, "misses.csv"))
    if records:
        handler = sorted(int(r["t_mapped_ns"]) - int(r["t_fault_ns"])
                         for r in records if r["t_mapped_ns"] and r["t_fault_ns"])
        summary["device_records"] = len(records)
        summary.update(pct_dict([h / 1000.0 for h in handler], "device_miss_us_"))
    stats_path = os.path.join(outdir, "stats-cxl-vmem0.json")
    if os.path.exists(stats_path):
        with open(stats_path) as f:
            st = json.load(f)
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
    return "\n".join(lines)
