"""Aggregation and plotting for `make figures` (bench/figures/README.md).

Reads the point folders bench/run wrote (manifest.json, summary.json,
stats-cxl-vmem0.json, mio-dax-*.csv, mio-dax.out), writes one CSV per table
and one self-contained gnuplot script (data inline) per figure, and runs
gnuplot on it to make the PNG.  Python 3 standard library only.
"""

import csv
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import stats  # noqa: E402

PAGE = 4096
DEVICE_ID = "cxl-vmem0"


# ---------------------------------------------------------------- points

def parse_mio_line(path):
    """key=value pairs of the "mio:" summary line in mio-dax.out."""
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("mio: ") and "samples_total=" in line:
                    for tok in line.split()[1:]:
                        if "=" in tok:
                            k, v = tok.split("=", 1)
                            out[k] = v
    return out


class Point:
    """One completed point of an experiment."""

    def __init__(self, pdir):
        self.dir = pdir
        self.name = os.path.basename(pdir)
        with open(os.path.join(pdir, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.ok = self.manifest.get("status") == "ok"
        self.params = self.manifest.get("parameters", {})
        self.summary = _read_json(os.path.join(pdir, "summary.json")) or {}
        self.stats = _read_json(os.path.join(pdir, f"stats-{DEVICE_ID}.json")) or {}
        self.mio = parse_mio_line(os.path.join(pdir, "mio-dax.out"))
        self.rows = {r["scope"]: r for r in
                     stats.read_csv(os.path.join(pdir, "mio-dax-summary.csv"))}
        self.threshold = stats.miss_threshold_ns(self.params)
        self._raw = None

    def p(self, key, default=None):
        return self.params.get(key, default)

    def mio_int(self, key, default=0):
        try:
            return int(float(self.mio.get(key, default)))
        except ValueError:
            return default

    @property
    def threads(self):
        return self.mio_int("threads", int(self.p("mio.threads", "1")))

    @property
    def wss_ratio(self):
        return float(self.p("mio.wss-ratio", "nan"))

    def raw(self):
        """Every sample (ns per load), thread 0's first; None without raw."""
        if self._raw is None:
            path = os.path.join(self.dir, "mio-dax-raw.csv")
            self._raw = stats.read_column(path, "ns_per_load") if os.path.exists(path) else []
        return self._raw or None

    def cdf_file(self):
        """MIO's exact CDF points: [(percentile, ns)]."""
        rows = stats.read_csv(os.path.join(self.dir, "mio-dax-cdf.csv"))
        return [(float(r["percentile"]), float(r["latency_ns"])) for r in rows]

    def samples_total(self):
        return self.mio_int("samples_total")

    def hit_fraction(self):
        """Fraction of samples below the miss threshold (bench/lib/stats.py:
        half the configured miss cost).  Exact from the raw samples; without
        them, from MIO's CDF file (0.1 % steps: within 0.001)."""
        raw = self.raw()
        if raw:
            return sum(1 for v in raw if v < self.threshold) / len(raw)
        below = [p for p, ns in self.cdf_file() if ns < self.threshold]
        return max(below) / 100.0 if below else 0.0

    def thread_hit_fractions(self):
        raw = self.raw()
        n = self.mio_int("samples")
        if not raw or not n or len(raw) != n * self.threads:
            return []
        return [sum(1 for v in raw[t * n:(t + 1) * n] if v < self.threshold) / n
                for t in range(self.threads)]

    def miss_values(self):
        raw = self.raw()
        return [v for v in raw if v >= self.threshold] if raw else None

    def accesses(self):
        """Chase accesses over the whole run, all threads: the build pass
        (one write per node), the warm-up passes, the chain check (one full
        pass) and the timed samples (samples x loads per sample)."""
        n = self.mio_int("nodes_per_thread")
        w = self.mio_int("warmup_passes")
        s = self.mio_int("samples")
        i = self.mio_int("loads_per_sample", 1)
        return self.threads * (n * (2 + w) + s * i)

    def page_first_touches(self):
        """Sequential chase: touches of a page that are its first in a pass
        (one per page per pass; the timed samples start at node 0), all
        threads, over the whole run."""
        n = self.mio_int("nodes_per_thread")
        w = self.mio_int("warmup_passes")
        s = self.mio_int("samples") * self.mio_int("loads_per_sample", 1)
        stride = self.mio_int("stride", int(self.p("mio.stride", "64")))
        per_page = max(1, PAGE // stride)
        pages = -(-n // per_page)
        timed = (s // n) * pages + -(-(s % n) // per_page)
        return self.threads * (pages * (2 + w) + timed)

    def stat(self, key, default=0):
        v = self.stats.get(key, default)
        return v if isinstance(v, (int, float)) else default


def _read_json(path):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return None


def load_points(run_dir):
    """(completed points, names of failed points) of one bench/run folder."""
    ok, failed = [], []
    if not os.path.isdir(run_dir):
        return ok, failed
    for name in sorted(os.listdir(run_dir)):
        pdir = os.path.join(run_dir, name)
        if ".incomplete-" in name or not os.path.exists(os.path.join(pdir, "manifest.json")):
            continue
        pt = Point(pdir)
        (ok if pt.ok else failed).append(pt if pt.ok else name)
    return ok, failed


# ---------------------------------------------------------------- helpers

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
    for r in stats.read_csv(os.path.join(pt.dir, "mio-dax-hist.csv")):
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


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([fmt(v) for v in r])


def fmt(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.6g}"
    return v


def gp_value(v):
    if isinstance(v, str):
        return '"' + v.replace('"', "'") + '"'
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "NaN"
    return str(fmt(v))


def datablock(name, rows, comment=""):
    lines = [f"${name} << EOD"]
    if comment:
        lines.append("# " + comment)
    lines += [" ".join(gp_value(v) for v in r) for r in rows]
    lines.append("EOD")
    return "\n".join(lines) + "\n"


def preamble(png, width, height):
    return (f'set terminal pngcairo size {width},{height} enhanced font "DejaVu Sans,11"\n'
            f'set output "{os.path.basename(png)}"\n'
            "set grid\n"
            "set key box opaque samplen 2\n"
            "set datafile missing NaN\n")


def gnuplot(gp_path):
    """Run gnuplot in the script's folder; return the PNG path or raise."""
    outdir = os.path.dirname(gp_path)
    r = subprocess.run(["gnuplot", os.path.basename(gp_path)], cwd=outdir,
                       capture_output=True, text=True)
    png = os.path.splitext(gp_path)[0] + ".png"
    if r.returncode != 0 or not os.path.exists(png) or os.path.getsize(png) == 0:
        raise RuntimeError(f"gnuplot {gp_path} failed: {r.stderr.strip()[-800:]}")
    return png


def save_plot(outdir, name, script):
    gp = os.path.join(outdir, name + ".gp")
    with open(gp, "w") as f:
        f.write(script)
    return gnuplot(gp)


def ident(s):
    return "".join(c if c.isalnum() else "_" for c in s)


def sizestr(nbytes):
    for unit, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= mult and nbytes % mult == 0:
            return f"{nbytes // mult} {unit}iB"
    return f"{nbytes} B"


def cache_desc(pts):
    sizes = sorted({int(p.rows.get("all", {}).get("cache_bytes", 0) or 0) for p in pts})
    sizes = [s for s in sizes if s]
    return ("cache " + "/".join(sizestr(s) for s in sizes)) if sizes else ""


def accel_desc(pts):
    acc = sorted({p.manifest.get("accelerator", "?") for p in pts})
    return "/".join(acc).upper()


# ---------------------------------------------------------------- one point

def fig_point_cdf(pt, name="cdf"):
    """CDF of one point's chase latencies (make run's plot), in the point's
    folder, with the configured device latency (tR + transfer) and the
    miss threshold marked.  Returns the PNG path, or None without samples."""
    data = point_cdf(pt)
    if not data:
        return None
    conf = stats.configured_read_ns(pt.params)
    write_csv(os.path.join(pt.dir, name + ".csv"), ["latency_ns", "cdf", "ccdf"], data)
    script = preamble(os.path.join(pt.dir, name + ".png"), 1000, 600)
    script += datablock("d", data, "latency_ns cdf ccdf")
    script += (f'set title "MIO {pt.p("mio.pattern", "")} chase on cxl-ssd, {pt.name}: '
               f'{pt.samples_total()} samples, hit fraction {pt.hit_fraction():.3f}\\n'
               f'({accel_desc([pt])}, {cache_desc([pt])}, WSS {pt.wss_ratio}x cache)"\n'
               "set logscale x\nset format x '10^{%L}'\nset xrange [5:*]\n"
               "set xlabel 'latency per load (ns)'\nset yrange [0:1]\n"
               "set ylabel 'fraction of samples <= x'\nset key top left\n"
               f"set arrow 1 from {conf},graph 0 to {conf},graph 1 nohead lw 2 "
               "dt 2 lc rgb '#d62728'\n"
               f"set arrow 2 from {pt.threshold},graph 0 to {pt.threshold},graph 1 "
               "nohead dt 3 lc rgb 'gray40'\n"
               "plot $d using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'CDF', \\\n"
               f"     NaN with lines lw 2 dt 2 lc rgb '#d62728' "
               f"title 'configured device latency {conf / 1000:g} us', \\\n"
               f"     NaN with lines dt 3 lc rgb 'gray40' "
               f"title 'miss threshold {pt.threshold:.0f} ns'\n")
    return save_plot(pt.dir, name, script)


# ---------------------------------------------------------------- Fig. 5

def fig_cdf(pts, outdir, name="fig5-cdf"):
    """CDFs of sequential and random chases (1 and N threads, each WSS),
    with the tail as a CCDF."""
    rows = []
    series = []
    for pt in sorted(pts, key=lambda p: (p.wss_ratio, p.p("mio.pattern"), p.threads)):
        pat, thr_n, wss = pt.p("mio.pattern"), pt.threads, pt.wss_ratio
        pts_cdf = point_cdf(pt)
        label = f"{pat}, {thr_n} thread{'s' if thr_n > 1 else ''}"
        series.append((wss, pat, thr_n, label, pts_cdf, pt))
        for ns, c, cc in pts_cdf:
            rows.append([pat, thr_n, wss, int(pt.p("mio.stride", "64")),
                         pt.samples_total(), ns, c, cc])
    if not series:
        return None
    write_csv(os.path.join(outdir, name + ".csv"),
              ["pattern", "threads", "wss_ratio", "stride", "samples", "latency_ns",
               "cdf", "ccdf"], rows)
    wss_list = sorted({s[0] for s in series})
    thr = series[0][5].threshold
    colors = {"seq": "#1f77b4", "rand": "#d62728"}
    script = preamble(os.path.join(outdir, name + ".png"), 1400, 520 * len(wss_list))
    blocks = []
    for i, (wss, pat, tn, label, data, pt) in enumerate(series):
        blocks.append(datablock(f"s{i}", [(ns, c, cc) for ns, c, cc in data],
                                f"{label}, WSS {wss}: latency_ns cdf ccdf"))
    script += "".join(blocks)
    strides = sorted({int(s[5].p("mio.stride", "64")) for s in series})
    script += (f'set multiplot layout {len(wss_list)},2 title "Fig. 5: MIO pointer-chase '
               f'latency on cxl-ssd ({accel_desc(pts)}, {cache_desc(pts)}, stride '
               f'{"/".join(map(str, strides))} B; miss = sample >= {thr:.0f} ns)" '
               'font ",13"\n')
    script += ("set logscale x\nset format x '10^{%L}'\nset xlabel 'latency per load (ns)'\n"
               "set xrange [5:*]\n")
    script += f"set arrow 1 from {thr},graph 0 to {thr},graph 1 nohead dt 3 lc rgb 'gray40'\n"
    for wss in wss_list:
        idx = [i for i, s in enumerate(series) if s[0] == wss]

        def plots(col):
            parts = []
            for i in idx:
                _, pat, tn, label, _, _ = series[i]
                dt = 1 if tn == 1 else 2
                parts.append(f"$s{i} using 1:{col} with lines lw 2 dt {dt} "
                             f"lc rgb '{colors.get(pat, 'black')}' title '{label}'")
            return ", \\\n     ".join(parts)
        script += (f"set title 'WSS {wss}x cache: CDF'\nunset logscale y\n"
                   "set format y '%g'\nset yrange [0:1]\nset ylabel 'fraction of samples <= x'\n"
                   "set key bottom right\n"
                   f"plot {plots(2)}\n")
        script += (f"set title 'WSS {wss}x cache: tail (CCDF)'\nset logscale y\n"
                   "set format y '10^{%L}'\nset yrange [*:1]\n"
                   "set ylabel 'fraction of samples >= x'\nset key bottom left\n"
                   f"plot {plots(3)}\n")
    script += "unset multiplot\n"
    return save_plot(outdir, name, script)


# ---------------------------------------------------------------- Fig. 6

def fig_misslat(pts, outdir, name="fig6-miss-percentiles"):
    """Guest-observed miss latency percentiles against the configured
    device latency (tR + transfer)."""
    rows = []
    for pt in sorted(pts, key=lambda p: stats.configured_read_ns(p.params)):
        conf = stats.configured_read_ns(pt.params)
        pc, nmiss, mean, src = percentiles(pt)
        rows.append([int(pt.p("device.nand-read-ns", 3000)), int(pt.p("device.nand-xfer-ns", 3200)),
                     conf / 1000.0, pt.samples_total(), pt.hit_fraction(), nmiss]
                    + [pc[p] / 1000.0 for p in stats.PERCENTILES]
                    + [mean / 1000.0, pt.summary.get("device_miss_us_p50", float("nan")), src])
    if not rows:
        return None
    pnames = [stats.pct_key(p) for p in stats.PERCENTILES]
    write_csv(os.path.join(outdir, name + ".csv"),
              ["nand_read_ns", "nand_xfer_ns", "configured_us", "samples", "hit_fraction",
               "miss_samples"] + [f"{k}_us" for k in pnames]
              + ["mean_us", "device_service_p50_us", "percentiles_of"], rows)
    script = preamble(os.path.join(outdir, name + ".png"), 1200, 700)
    script += datablock("d", [r[2:3] + r[6:6 + len(pnames)] + [r[-2]] for r in rows],
                        "configured_us " + " ".join(pnames) + " device_service_p50_us")
    lo, hi = min(r[2] for r in rows), max(r[2] for r in rows)
    script += (f'set title "Fig. 6: miss latency percentiles vs configured device latency\\n'
               f'(random chase, stride 4096: every sample a miss; {accel_desc(pts)}, '
               f'{cache_desc(pts)})"\n'
               "set logscale xy\nset xlabel 'configured miss latency tR + transfer (us)'\n"
               "set ylabel 'guest-observed miss latency (us)'\nset key outside right top\n"
               f"set xrange [{lo * 0.8:.3g}:{hi * 1.25:.3g}]\nset yrange [1:*]\n"
               "set xtics (" + ", ".join(f"'{r[2]:g}' {r[2]:g}" for r in rows) + ")\n")
    labels = ["P50", "P90", "P99", "P99.9", "P99.99"]
    parts = [f"$d using 1:{i + 2} with linespoints lw 2 pt 7 title '{labels[i]}'"
             for i in range(len(pnames))]
    parts.append(f"$d using 1:{len(pnames) + 2} with linespoints lw 1 dt 2 pt 6 lc rgb 'gray30' "
                 "title 'device service P50 (fault to mapped)'")
    parts.append("x with lines lw 2 dt 3 lc rgb 'black' title 'configured (y = x)'")
    script += "plot " + ", \\\n     ".join(parts) + "\n"
    return save_plot(outdir, name, script)


# ---------------------------------------------------------------- scaling

def scaling_table(pts):
    """[(bql, threads, samples, hit_fraction, mean_miss_us, p50_us, p99_us)]
    and {bql: ratio of the mean miss latency at the most threads over 1}."""
    rows = []
    for pt in sorted(pts, key=lambda p: (p.p("device.bql", "off"), p.threads)):
        pc, nmiss, mean, src = percentiles(pt)
        rows.append([pt.p("device.bql", "off"), pt.threads, pt.samples_total(),
                     pt.hit_fraction(), nmiss, mean / 1000.0, pc[50] / 1000.0,
                     pc[99] / 1000.0, src])
    ratios = {}
    for bql in sorted({r[0] for r in rows}):
        by_t = {r[1]: r for r in rows if r[0] == bql}
        if 1 in by_t and len(by_t) > 1:
            tmax = max(by_t)
            ratios[bql] = (tmax, by_t[tmax][5] / by_t[1][5], by_t[tmax][6] / by_t[1][6])
    for r in rows:
        base = next((x for x in rows if x[0] == r[0] and x[1] == 1), None)
        r.insert(8, r[5] / base[5] if base else float("nan"))
    return rows, ratios


def fig_scaling(pts, outdir, name="fig-thread-scaling"):
    rows, ratios = scaling_table(pts)
    if not rows:
        return None, ratios
    write_csv(os.path.join(outdir, name + ".csv"),
              ["bql", "threads", "samples", "hit_fraction", "miss_samples", "mean_miss_us",
               "p50_miss_us", "p99_miss_us", "ratio_vs_1_thread", "miss_stats_from"], rows)
    threads = sorted({r[1] for r in rows})
    block = []
    for bql in sorted({r[0] for r in rows}):
        by_t = {r[1]: r for r in rows if r[0] == bql}
        block.append([f"bql={bql}"] + [by_t[t][5] if t in by_t else float("nan") for t in threads]
                     + [by_t[t][8] if t in by_t else float("nan") for t in threads])
    nt = len(threads)
    script = preamble(os.path.join(outdir, name + ".png"), 900, 650)
    script += datablock("d", block, "group " + " ".join(f"mean_us_t{t}" for t in threads)
                        + " " + " ".join(f"ratio_t{t}" for t in threads))
    wss = pts[0].wss_ratio
    script += (f'set title "Thread scaling: mean miss latency, N threads vs 1 (label: ratio '
               f'to 1 thread)\\n(random chase, stride 4096, WSS {wss:g}x cache split over the '
               f'threads; {accel_desc(pts)}, {cache_desc(pts)})"\n'
               "set style data histogram\nset style histogram clustered gap 1\n"
               "set style fill solid 0.8 border -1\nset boxwidth 0.9\n"
               "set ylabel 'mean miss latency (us)'\nset yrange [0:*]\nset key top left\n"
               "set grid ytics\nunset grid\nset grid ytics\n")
    parts = []
    for j, t in enumerate(threads):
        color = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"][j % 4]
        parts.append(f"$d using {j + 2}{':xtic(1)' if j == 0 else ''} lc rgb '{color}' "
                     f"title '{t} thread{'s' if t > 1 else ''}'")
    width = 1.0 / (nt + 1)
    for j, t in enumerate(threads):
        off = -0.5 + width * (j + 1)
        parts.append(f"$d using ($0+{off:.4f}):{j + 2}:(sprintf('%.2fx', ${nt + 2 + j})) "
                     "with labels offset 0,0.8 notitle")
    script += "plot " + ", \\\n     ".join(parts) + "\n"
    return save_plot(outdir, name, script), ratios


# ---------------------------------------------------------------- policy

def evictions(pt):
    acc = pt.accesses()
    c, d = pt.stat("evictions_clean"), pt.stat("evictions_dirty")
    return acc, c, d, (c / acc if acc else float("nan")), (d / acc if acc else float("nan"))


POLICIES = ["fifo", "lifo", "clock", "s3fifo"]


def fig_policy(pts, outdir, name="fig8-policy"):
    pts = sorted(pts, key=lambda p: (p.p("device.mode", "uffd") != "uffd",
                                     POLICIES.index(p.p("device.policy", "fifo"))
                                     if p.p("device.policy", "fifo") in POLICIES else 9))
    if not pts:
        return None
    rows, cdf_rows = [], []
    for pt in pts:
        mode, pol = pt.p("device.mode", "uffd"), pt.p("device.policy", "fifo")
        acc, c, d, cpa, dpa = evictions(pt)
        pc, nmiss, mean, _ = percentiles(pt)
        rows.append([mode, pol, pt.samples_total(), pt.hit_fraction(), 1.0 / pt.wss_ratio,
                     pt.stat("misses"), pt.stat("trapped_hits"), pt.stat("wp_faults"), acc, c, d,
                     cpa, dpa, cpa + dpa, pc[50] / 1000.0, pc[99] / 1000.0, mean / 1000.0])
        for ns, cf, cc in point_cdf(pt):
            cdf_rows.append([mode, pol, ns, cf, cc])
    write_csv(os.path.join(outdir, name + ".csv"),
              ["mode", "policy", "samples", "hit_fraction", "bound_1_over_wss",
               "device_misses", "trapped_hits", "wp_faults", "accesses", "evictions_clean",
               "evictions_dirty", "clean_per_access", "dirty_per_access",
               "evictions_per_access", "p50_miss_us", "p99_miss_us", "mean_miss_us"], rows)
    write_csv(os.path.join(outdir, name + "-cdf.csv"),
              ["mode", "policy", "latency_ns", "cdf", "ccdf"], cdf_rows)
    modes = []
    for pt in pts:
        if pt.p("device.mode", "uffd") not in modes:
            modes.append(pt.p("device.mode", "uffd"))
    colors = {"fifo": "#1f77b4", "lifo": "#ff7f0e", "clock": "#2ca02c", "s3fifo": "#d62728"}
    script = preamble(os.path.join(outdir, name + ".png"), 560 * (len(modes) + 1), 600)
    for i, pt in enumerate(pts):
        script += datablock(f"c{i}", [(ns, cf) for ns, cf, _ in point_cdf(pt)],
                            f"{pt.p('device.mode', 'uffd')} {pt.p('device.policy')}: ns cdf")
    script += datablock("e", [[f"{r[0]} {r[1]}", r[11], r[12], r[3]] for r in rows],
                        "case clean_per_access dirty_per_access hit_fraction")
    sr = pts[0].p("mio.store-ratio", "0")
    script += (f'set multiplot layout 1,{len(modes) + 1} title "Fig. 8: replacement policies at '
               f'WSS {pts[0].wss_ratio}x cache (random chase, stride '
               f'{pts[0].p("mio.stride")} B, {float(sr) * 100:.0f}% of visits store; '
               f'{accel_desc(pts)}, {cache_desc(pts)})" font ",13"\n')
    for mode in modes:
        idx = [i for i, p in enumerate(pts) if p.p("device.mode", "uffd") == mode]
        parts = [f"$c{i} using 1:2 with lines lw 2 lc rgb '{colors.get(pts[i].p('device.policy'), 'black')}' "
                 f"title '{pts[i].p('device.policy')} (hits {pts[i].hit_fraction():.3f})'"
                 for i in idx]
        what = ("hits never reach the model" if mode == "uffd"
                else "every access reaches the model")
        script += (f"set title 'mode={mode}: latency CDF ({what})'\n"
                   "set logscale x\nset format x '10^{%L}'\nset xlabel 'latency per visit (ns)'\n"
                   "set xrange [5:*]\n"
                   "set ylabel 'fraction of samples <= x'\nset yrange [0:1]\nset key bottom right\n"
                   f"set arrow 1 from {pts[idx[0]].threshold},graph 0 to "
                   f"{pts[idx[0]].threshold},graph 1 nohead dt 3 lc rgb 'gray40'\n"
                   "plot " + ", \\\n     ".join(parts) + "\n")
    script += ("unset arrow 1\nunset logscale x\nset format x '%g'\nset xrange [*:*]\n"
               "set title 'evictions per access (whole run)'\nset style data histogram\n"
               "set style histogram rowstacked\nset style fill solid 0.8 border -1\n"
               "set boxwidth 0.7\nset xtics rotate by -30\nset xlabel ''\nset yrange [0:*]\n"
               "set ylabel 'evictions / access'\nset key top right\n"
               "plot $e using 2:xtic(1) title 'clean' lc rgb '#8fbcd4', "
               "'' using 3 title 'dirty' lc rgb '#c0392b'\n"
               "unset multiplot\n")
    return save_plot(outdir, name, script)


# ---------------------------------------------------------------- prefetch

def prefetch_row(pt, variant):
    """Latency percentiles, prefetch accounting and evictions of one point.

    uffd mode maps a prefetched page when its NAND read completes, so a
    timely use is a plain hit the device never sees: its prefetch_used
    counts only uses that trapped (a LOADING wait: late).  For a
    sequential chase with no reuse (WSS > cache) every first touch of a
    page in a pass is a demand miss, a late prefetch or a timely one, so
        used = first touches - misses,  late = prefetch_late,
        accuracy = used / issued,  timeliness = 1 - late / used."""
    n = int(pt.p("device.prefetch", "0"))
    pc, nall, mean, _ = percentiles(pt, misses_only=False)
    issued, late = pt.stat("prefetch_issued"), pt.stat("prefetch_late")
    used_dev = pt.stat("prefetch_used")
    touches = pt.page_first_touches()
    used = max(0, touches - pt.stat("misses"))
    acc, c, d, cpa, dpa = evictions(pt)
    nan = float("nan")
    return [variant, pt.p("device.evict-low", "2"), pt.p("device.evict-high", "5"), n,
            pt.samples_total(), pt.hit_fraction()] + [pc[p] for p in stats.PERCENTILES] + [
        mean, pt.stat("misses"), issued, used_dev, late, touches, used,
        (used / issued) if issued else nan, (1 - late / used) if used else nan,
        (used_dev / issued) if issued else nan, (1 - late / used_dev) if used_dev else nan,
        acc, c, d, cpa + dpa]


PREFETCH_HEADER = (["eviction", "evict_low_pct", "evict_high_pct", "prefetch", "samples",
                    "hit_fraction"] + [f"{stats.pct_key(p)}_ns" for p in stats.PERCENTILES]
                   + ["mean_ns", "device_misses", "prefetch_issued", "prefetch_used_device",
                      "prefetch_late", "page_first_touches", "prefetch_used_derived",
                      "accuracy", "timeliness", "accuracy_device_counters",
                      "timeliness_device_counters", "accesses", "evictions_clean",
                      "evictions_dirty", "evictions_per_access"])


def fig_prefetch(variants, outdir, name="fig8-prefetch"):
    """variants: [(label, [points])]."""
    rows = []
    for label, pts in variants:
        for pt in sorted(pts, key=lambda p: int(p.p("device.prefetch", "0"))):
            rows.append(prefetch_row(pt, label))
    if not rows:
        return None
    write_csv(os.path.join(outdir, name + ".csv"), PREFETCH_HEADER, rows)
    col = {h: i for i, h in enumerate(PREFETCH_HEADER)}
    labels = []
    for r in rows:
        if r[0] not in labels:
            labels.append(r[0])
    script = preamble(os.path.join(outdir, name + ".png"), 1400, 1000)
    for k, lab in enumerate(labels):
        sel = [r for r in rows if r[0] == lab]
        script += datablock(f"v{k}", [[r[col["prefetch"]]]
                                      + [r[col[f"{stats.pct_key(p)}_ns"]] / 1000.0
                                         for p in stats.PERCENTILES]
                                      + [r[col["accuracy"]], r[col["timeliness"]],
                                         r[col["evictions_per_access"]]] for r in sel],
                            f"{lab}: prefetch p50_us p90_us p99_us p999_us p9999_us "
                            "accuracy timeliness evictions_per_access")
    pts0 = variants[0][1]
    script += (f'set multiplot layout 2,2 title "Fig. 8: next-N prefetch at WSS '
               f'{pts0[0].wss_ratio if pts0 else "?"}x cache (sequential chase, stride '
               f'{pts0[0].p("mio.stride") if pts0 else "?"} B, background eviction; '
               f'{accel_desc(pts0)}, {cache_desc(pts0)})" font ",13"\n'
               "set xlabel 'prefetch degree N'\nset xtics (0,1,2,4,8)\nset xrange [-0.5:8.5]\n")
    dts = [1, 2, 4, 5]
    pcolors = ["#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#9467bd"]
    pl = ["P50", "P90", "P99", "P99.9", "P99.99"]
    parts = []
    for k, lab in enumerate(labels):
        for i, p in enumerate(pl):
            parts.append(f"$v{k} using 1:{i + 2} with linespoints lw 2 pt 7 dt {dts[k % 4]} "
                         f"lc rgb '{pcolors[i]}' title '{p}, {lab}'")
    script += ("set title 'latency percentiles (all samples)'\nset logscale y\nunset xlabel\n"
               "set ylabel 'latency per load (us)'\n"
               "set key below horizontal maxcols 5 samplen 3 font ',9'\n"
               "plot " + ", \\\n     ".join(parts) + "\n")
    script += "unset logscale y\nset xlabel 'prefetch degree N'\nset key default\nset key inside bottom right box opaque font ',11'\n"
    for title, c, ylab, yr in (("accuracy = used / issued (derived, see README)", 7, "accuracy",
                                "[*:1.005]"),
                               ("timeliness = 1 - late / used", 8, "timeliness", "[*:1.005]"),
                               ("evictions per access (whole run)", 9, "evictions / access",
                                "[0:*]")):
        parts = [f"$v{k} using 1:{c} with linespoints lw 2 pt 7 dt {dts[k % 4]} "
                 f"title '{lab}'" for k, lab in enumerate(labels)]
        script += (f"set title '{title}'\nset ylabel '{ylab}'\nset yrange {yr}\n"
                   "plot " + ", \\\n     ".join(parts) + "\n")
    script += "unset multiplot\n"
    return save_plot(outdir, name, script)


# ---------------------------------------------------------------- hit fraction

def hit_table(sources):
    """sources: [(experiment, [points])]; random chases only."""
    rows = []
    for exp, pts in sources:
        for pt in pts:
            if pt.p("mio.pattern") != "rand":
                continue
            hf = pt.hit_fraction()
            bound = 1.0 / pt.wss_ratio
            per_t = pt.thread_hit_fractions()
            rows.append([exp, pt.name, pt.p("device.mode", "uffd"), pt.p("device.policy", "fifo"),
                         int(pt.p("mio.stride", "64")), pt.threads, pt.wss_ratio,
                         pt.samples_total(), hf, bound, hf - bound,
                         "yes" if hf <= bound + 0.02 else "no",
                         min(1.0, pt.threads * bound),
                         " ".join(f"{x:.3f}" for x in per_t)])
    return rows


HIT_HEADER = ["experiment", "point", "mode", "policy", "stride", "threads", "wss_ratio",
              "samples", "hit_fraction", "bound_1_over_wss", "excess", "within_bound_0.02",
              "bound_threads_apart", "per_thread_hit_fraction"]


def fig_hit(sources, outdir, name="fig-hit-fraction"):
    rows = hit_table(sources)
    rows = [r for r in rows if r[4] < PAGE]      # stride 4096: a fixed cycle, ~0 hits
    if not rows:
        return None, rows
    write_csv(os.path.join(outdir, name + ".csv"), HIT_HEADER, rows)
    block = []
    for r in rows:
        lab = f"WSS {r[6]:g}, {r[5]} thr"
        if r[0] != "cdf" or r[3] != "fifo" or r[2] != "uffd":
            lab += f", {r[3]}" + ("" if r[2] == "uffd" else f" {r[2]}")
        block.append([lab, r[8], r[9], r[12]])
    script = preamble(os.path.join(outdir, name + ".png"), max(1000, 120 * len(block) + 300), 700)
    script += "set rmargin 12\n"
    script += datablock("d", block, "case hit_fraction bound_1_over_wss bound_threads_apart")
    script += ('set title "Random-chase hit fraction vs its bound 1/WSS (stride 64; '
               'T = threads, each chasing its own WSS/T)"\n'
               "set style data histogram\nset style histogram clustered gap 1\n"
               "set style fill solid 0.8 border -1\nset yrange [0:1.4]\nset ytics 0,0.2,1\n"
               "set ylabel 'fraction of samples that hit'\nset xtics rotate by -30\n"
               "set key top left\nunset grid\nset grid ytics\n"
               "plot $d using 2:xtic(1) title 'measured' lc rgb '#1f77b4', "
               "'' using 3 title 'bound 1/WSS (one stream over the whole WSS)' "
               "lc rgb '#999999', "
               "'' using 4 title 'bound min(1, T/WSS) (a thread running alone)' "
               "lc rgb '#dddddd', "
               "'' using ($0-0.25):2:(sprintf('%.3f',$2)) with labels offset 0,0.7 "
               "font ',9' notitle\n")
    return save_plot(outdir, name, script), rows
