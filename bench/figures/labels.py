"""Title fragments shared by the figures: cache size, accelerator and the
miss path (delivery, eviction) of a set of points."""


def sizestr(nbytes):
    for unit, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if nbytes >= mult and nbytes % mult == 0:
            return f"{nbytes // mult} {unit}iB"
    return f"{nbytes} B"


def cache_desc(pts):
    sizes = sorted({int(p.rows.get("all", {}).get("cache_bytes", 0) or 0) for p in pts})
    sizes = [s for s in sizes if s]
    return ("cache " + "/".join(sizestr(s) for s in sizes)) if sizes else ""


def setup_desc(pts):
    """The accelerator and, from the points' manifests, the delivery and
    eviction they ran: what a miss paid on the host besides the device's
    own time (mode=mmio points have no delivery and say so)."""
    acc = "/".join(sorted({p.manifest.get("accelerator", "?") for p in pts})).upper()
    props = [p.manifest.get("device_properties") or {} for p in pts]
    deliveries = sorted({"mmio" if d.get("mode") == "mmio" else d.get("delivery", "?")
                         for d in props})
    by_threads = {}
    for p, d in zip(pts, props):
        by_threads.setdefault(d.get("eviction", "?"), set()).add(p.threads)
    order = sorted(by_threads.items(), key=lambda kv: min(kv[1]))
    if len(by_threads) == 1:
        ev = next(iter(by_threads))
    elif all(len(t) == 1 for _, t in order):
        # e.g. "sync/background at 1/2 threads"
        ev = (f"{'/'.join(e for e, _ in order)} at "
              f"{'/'.join(str(min(t)) for _, t in order)} threads")
    else:
        ev = ", ".join(f"{e} at {'/'.join(map(str, sorted(t)))} thread(s)" for e, t in order)
    return f"{acc}, delivery={'/'.join(deliveries)}, eviction={ev}"
