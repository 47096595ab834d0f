"""Title fragments shared by the figures: cache size and accelerator of
a set of points."""


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
