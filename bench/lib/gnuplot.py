"""Self-contained gnuplot scripts (data inline as datablocks) and running
them: every plot of the project is NAME.gp next to its NAME.png, so a
figure can be restyled and redrawn from its folder alone."""

import math
import os
import subprocess

import tables


def value(v):
    """A datablock cell: strings quoted, NaN/inf as NaN (a gap)."""
    if isinstance(v, str):
        return '"' + v.replace('"', "'") + '"'
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "NaN"
    return str(tables.cell(v))


def datablock(name, rows, comment=""):
    """$name << EOD ... EOD, one row a line."""
    lines = [f"${name} << EOD"]
    if comment:
        lines.append("# " + comment)
    lines += [" ".join(value(v) for v in r) for r in rows]
    lines.append("EOD")
    return "\n".join(lines) + "\n"


def preamble(png, width, height, font="DejaVu Sans,11"):
    """Terminal, output (@png's name: the script runs in its folder) and
    the common style."""
    return (f'set terminal pngcairo size {width},{height} enhanced font "{font}"\n'
            f'set output "{os.path.basename(png)}"\n'
            "set grid\n"
            "set key box opaque samplen 2\n"
            "set datafile missing NaN\n")


def run(gp_path):
    """Run gnuplot in the script's folder; return the PNG path or raise."""
    outdir = os.path.dirname(gp_path)
    r = subprocess.run(["gnuplot", os.path.basename(gp_path)], cwd=outdir,
                       capture_output=True, text=True)
    png = os.path.splitext(gp_path)[0] + ".png"
    if r.returncode != 0 or not os.path.exists(png) or os.path.getsize(png) == 0:
        raise RuntimeError(f"gnuplot {gp_path} failed: {r.stderr.strip()[-800:]}")
    return png


def save_plot(outdir, name, script):
    """Write OUTDIR/NAME.gp and draw OUTDIR/NAME.png from it."""
    gp = os.path.join(outdir, name + ".gp")
    with open(gp, "w") as f:
        f.write(script)
    return run(gp)
