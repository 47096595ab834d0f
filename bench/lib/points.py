"""The completed points of a bench/run folder, as the figures and the
comparisons read them: manifest, summary, device statistics, MIO's
summary line and files, and the miss threshold."""

import os

import manifest
import stats
import tables

PAGE = 4096


def parse_mio_line(path):
    """key=value pairs of the "mio:" summary line in mio-dax.out."""
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("mio: ") and "samples_total=" in line:
                    return tables.parse_kv(line[len("mio: "):])
    return {}


class Point:
    """One completed point of an experiment."""

    def __init__(self, pdir):
        self.dir = pdir
        self.name = os.path.basename(pdir)
        self.manifest = manifest.read(pdir) or {}
        self.ok = self.manifest.get("status") == "ok"
        self.params = self.manifest.get("parameters", {})
        self.summary = tables.read_json(os.path.join(pdir, "summary.json")) or {}
        self.stats = tables.read_json(
            os.path.join(pdir, f"stats-{manifest.DEVICE_ID}.json")) or {}
        self.mio = parse_mio_line(os.path.join(pdir, "mio-dax.out"))
        self.rows = {r["scope"]: r for r in
                     tables.read_csv(os.path.join(pdir, "mio-dax-summary.csv"))}
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
            self._raw = tables.read_column(path, "ns_per_load") if os.path.exists(path) else []
        return self._raw or None

    def cdf_file(self):
        """MIO's exact CDF points: [(percentile, ns)]."""
        rows = tables.read_csv(os.path.join(self.dir, "mio-dax-cdf.csv"))
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
        """Each thread's hit fraction over its samples in the raw file."""
        path = os.path.join(self.dir, "mio-dax-raw.csv")
        if not os.path.exists(path):
            return []
        per = {}
        for r in tables.read_csv(path):
            if r.get("thread") and r.get("ns_per_load"):
                hits, n = per.get(int(r["thread"]), (0, 0))
                per[int(r["thread"])] = (hits + (float(r["ns_per_load"]) < self.threshold), n + 1)
        if sorted(per) != list(range(self.threads)):
            return []
        return [per[t][0] / per[t][1] for t in range(self.threads)]

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


def move_aside(pdir, tag):
    """Rename the folder of a point that did not complete to
    PDIR.TAG-N (the first free N); returns the new name."""
    n = 1
    while os.path.exists(f"{pdir}.{tag}-{n}"):
        n += 1
    os.rename(pdir, f"{pdir}.{tag}-{n}")
    return f"{pdir}.{tag}-{n}"
