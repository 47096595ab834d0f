"""The latency figures (bench/figures/README.md): one point's CDF (make
run's cdf.png), Fig. 5 CDFs, Fig. 6 miss percentiles, thread scaling.
Each writes NAME.csv (the table) and NAME.gp/NAME.png; returns the PNG."""

import os

import fig_cache
import stats
from distributions import percentiles, point_cdf
from gnuplot import datablock, preamble, save_plot
from labels import setup_desc, cache_desc
from tables import write_csv


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
               f'({setup_desc([pt])}, {cache_desc([pt])}, WSS {pt.wss_ratio}x cache)"\n'
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
               f'latency on cxl-ssd\\n({setup_desc(pts)}, {cache_desc(pts)}, stride '
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
               f'(random chase, stride 4096: every sample a miss; {setup_desc(pts)}, '
               f'{cache_desc(pts)})"\n'
               "set logscale xy\nset xlabel 'configured miss latency tR + transfer (us)'\n"
               "set ylabel 'guest-observed miss latency (us)'\nset key outside right top\n"
               f"set xrange [{lo * 0.8:.3g}:{hi * 1.25:.3g}]\nset yrange [1:*]\n"
               "set xtics (" + ", ".join(f"'{r[2]:g}' {r[2]:g}" for r in rows) + ")\n")
    labels = ["P50", "P90", "P99", "P99.9", "P99.99"]
    parts = [f"$d using 1:{i + 2} with linespoints lw 2 pt 7 title '{labels[i]}'"
             for i in range(len(pnames))]
    parts.append(f"$d using 1:{len(pnames) + 2} with linespoints lw 1 dt 2 pt 6 lc rgb 'gray30' "
                 "title 'device service P50 (fault to mapped and wait end)'")
    parts.append("x with lines lw 2 dt 3 lc rgb 'black' title 'configured (y = x)'")
    script += "plot " + ", \\\n     ".join(parts) + "\n"
    return save_plot(outdir, name, script)


def scaling_table(pts):
    """[(bql, threads, samples, hit_fraction, mean_miss_us, p50_us, p99_us)]
    and {bql: ratio of the mean miss latency at the most threads over 1}."""
    rows = []
    for pt in sorted(pts, key=lambda p: (p.p("device.bql", "off"), p.threads)):
        pc, nmiss, mean, src = percentiles(pt)
        rows.append([pt.p("device.bql", "off"), pt.threads, pt.samples_total(),
                     pt.hit_fraction(), nmiss, mean / 1000.0, pc[50] / 1000.0,
                     pc[99] / 1000.0, src, fig_cache.overlap_fraction(pt)])
    ratios = {}
    for bql in sorted({r[0] for r in rows}):
        # only points whose threads sampled over one window
        by_t = {r[1]: r for r in rows if r[0] == bql and r[9] >= fig_cache.OVERLAP_MIN}
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
               "p50_miss_us", "p99_miss_us", "ratio_vs_1_thread", "miss_stats_from",
               "overlap_fraction"], rows)
    threads = sorted({r[1] for r in rows})
    block = []
    for bql in sorted({r[0] for r in rows}):
        by_t = {r[1]: r for r in rows if r[0] == bql and r[10] >= fig_cache.OVERLAP_MIN}
        block.append([f"bql={bql}"] + [by_t[t][5] if t in by_t else float("nan") for t in threads]
                     + [by_t[t][8] if t in by_t else float("nan") for t in threads])
    nt = len(threads)
    script = preamble(os.path.join(outdir, name + ".png"), 900, 650)
    script += datablock("d", block, "group " + " ".join(f"mean_us_t{t}" for t in threads)
                        + " " + " ".join(f"ratio_t{t}" for t in threads))
    wss = pts[0].wss_ratio
    script += (f'set title "Thread scaling: mean miss latency, N threads vs 1 (label: ratio '
               f'to 1 thread)\\n(random chase, stride 4096, WSS {wss:g}x cache split over the '
               f'threads;\\n{setup_desc(pts)}, {cache_desc(pts)})"\n'
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
