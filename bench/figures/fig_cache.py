"""The cache figures (bench/figures/README.md): Fig. 8 replacement
policies and next-N prefetch, random-chase hit fraction vs 1/WSS.  Each
writes NAME.csv (the table) and NAME.gp/NAME.png; returns the PNG."""

import os

import stats
from distributions import percentiles, point_cdf
from gnuplot import datablock, preamble, save_plot
from labels import setup_desc, cache_desc
from points import PAGE
from tables import write_csv


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
               f'{setup_desc(pts)}, {cache_desc(pts)})" font ",13"\n')
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
               f'{setup_desc(pts0)}, {cache_desc(pts0)})" font ",13"\n'
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
                         " ".join(f"{x:.3f}" for x in per_t), overlap_fraction(pt)])
    return rows


def overlap_fraction(pt):
    """MIO's overlap_fraction (1 for one thread; 0 from an older MIO that
    did not report it: its threads' windows are unknown)."""
    if pt.threads == 1:
        return 1.0
    try:
        return float(pt.mio.get("overlap_fraction", 0))
    except ValueError:
        return 0.0


OVERLAP_MIN = 0.9       # multi-thread points below this are not plotted


HIT_HEADER = ["experiment", "point", "mode", "policy", "stride", "threads", "wss_ratio",
              "samples", "hit_fraction", "bound_1_over_wss", "excess", "within_bound_0.02",
              "bound_threads_apart", "per_thread_hit_fraction", "overlap_fraction"]


def fig_hit(sources, outdir, name="fig-hit-fraction"):
    rows = hit_table(sources)
    rows = [r for r in rows if r[4] < PAGE]      # stride 4096: a fixed cycle, ~0 hits
    if not rows:
        return None, rows
    write_csv(os.path.join(outdir, name + ".csv"), HIT_HEADER, rows)
    block = []
    for r in rows:
        if r[14] < OVERLAP_MIN:     # the threads did not sample together
            continue
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
