"""Experiment specs: "key = value" lines; "a | b | c" makes a sweep axis.

Keys:
  name                      experiment name (results/<name>/...)
  guest.<opt>               boot-guest option: mem-size, ram, smp, accel,
                            timeout, ram-backend (memfd: guest RAM on 4 KiB
                            shmem pages, like the device), kvm-delivery
                            (the delivery a TCG-only one becomes under KVM)
  device.driver             cxl-ssd (default) or cxl-type3
  device.<property>         cxl-ssd property (cxl-ssd,help lists them);
                            ignored for other drivers.  device.record is
                            <point>/misses.csv unless given ("on": the
                            same); "off" = no per-miss records
  mio.<option>              bench/mio option without the dashes; a value of
                            "on" is a flag (mio.verify = on)
  run.raw                   on: keep every sample (needed for hit/miss split)
  run.ram-baseline          on: also chase ordinary guest RAM (anon, --thp
                            never) in the same mio run, sampled interleaved
                            with the device (mio --baseline): mio-ram-*
  run.trace                 on: run QEMU under tracing/trace-run (bpftrace,
                            host events -> <point>/host-events.csv)
  run.<other>               ignored by the runner (e.g. run.repeat = 1|2|3
                            to repeat a point)
  KEY[OTHER:VALUE]          KEY only in the points where OTHER is VALUE, e.g.
                            device.delivery[device.mode:uffd] = poll where
                            mode = uffd | mmio (mmio refuses any delivery)
Every point is the cartesian product of the axes, in file order; a point
that a condition makes equal to an earlier one is not repeated.
"""

import itertools
import re

SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)$", re.I)
COND_RE = re.compile(r"^([^\[\]]+)\[([^\[\]:]+):([^\[\]]+)\]$")


def split_key(key):
    """(key, condition): condition is (other key, value) or None."""
    m = COND_RE.match(key)
    if not m:
        return key, None
    return m.group(1).strip(), (m.group(2).strip(), m.group(3).strip())


def parse_size(text):
    m = SIZE_RE.match(text.strip())
    if not m:
        raise ValueError(f"not a size: {text!r}")
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(float(m.group(1)) * mult[m.group(2).upper()])


def load(path, overrides=()):
    """Return (name, [(axis_key, [values])]) with overrides applied."""
    entries = []
    with open(path) as f:
        lines = list(f)
    for lineno, line in enumerate(lines + list(overrides), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise ValueError(f"{path}:{lineno}: expected 'key = value'")
        key, value = (s.strip() for s in line.split("=", 1))
        values = [v.strip() for v in value.split("|")]
        entries = [e for e in entries if e[0] != key] + [(key, values)]
    name = next((v[0] for k, v in entries if k == "name"), None)
    if not name:
        raise ValueError(f"{path}: no 'name = ...' line")
    return name, [e for e in entries if e[0] != "name"]


def points(axes):
    """Yield (point_name, {key: value}) for every combination."""
    keys = [split_key(k) for k, _ in axes]
    sweep = [split_key(k)[0] for k, v in axes if len(v) > 1]
    seen = set()
    for combo in itertools.product(*(v for _, v in axes)):
        point = {k: v for (k, cond), v in zip(keys, combo) if not cond}
        point.update((k, v) for (k, cond), v in zip(keys, combo)
                     if cond and point.get(cond[0]) == cond[1])
        if tuple(point.items()) in seen:
            continue
        seen.add(tuple(point.items()))
        label = "_".join(f"{k.split('.', 1)[-1]}-{point[k]}" for k in sweep
                         if k in point)
        yield (re.sub(r"[^A-Za-z0-9_.-]", "", label) or "point"), point


def section(point, prefix):
    return {k[len(prefix):]: v for k, v in point.items() if k.startswith(prefix)}
