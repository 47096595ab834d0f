"""bench-floor's chase, the same in every case (native and in the guest),
and the medians over its interleaved rounds."""

import statistics

CACHE_BYTES = 8 << 20          # the device's cache, native and in the guest
WSS_RATIO = 3                   # the chase's working set over the cache
CHASE = ["--pattern", "rand", "--stride", "4096", "--wss-ratio", str(WSS_RATIO),
         "--quiet", "--progress", "0"]


def median(vals):
    vals = [float(v) for v in vals if v is not None]
    return statistics.median(vals) if vals else float("nan")


def fmt(v, nd=3):
    return "nan" if v != v else f"{v:.{nd}f}"


def overlapped_ratio(ones, manys, overlaps):
    """Per round N-thread / 1-thread P50, median over the rounds whose
    N-thread run has overlap_fraction >= 0.9 (as the figures count them):
    (the median, the words saying which rounds counted)."""
    ratios = [b / a for a, b in zip(ones, manys)]
    good = [r for r, o in zip(ratios, overlaps) if o >= 0.9]
    return median(good), (f"median of the {len(good)} of {len(ratios)} rounds with "
                          f"overlap_fraction >= 0.9; every round: "
                          f"{' '.join(fmt(r, 2) for r in ratios)}; overlap_fraction "
                          f"{' '.join(fmt(o, 2) for o in overlaps)}")
