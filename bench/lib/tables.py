"""Reading and writing the result files: CSV tables, JSON documents and
key=value text (guest-info, accel, the tools' stdout).  A file that does
not exist reads as empty (None for JSON): a point may lack any of them."""

import csv
import gzip
import json
import math
import os


def read_csv(path):
    """Rows of a CSV file with a header (gzipped when its name ends in
    .gz), as dicts; [] if it does not exist."""
    if not os.path.exists(path):
        return []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))


def read_column(path, column):
    """The non-empty values of one column as floats."""
    return [float(r[column]) for r in read_csv(path) if r.get(column)]


def cell(v):
    """How a value is written into a table: floats to 6 significant
    digits, NaN as "nan", everything else as it is."""
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.6g}"
    return v


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([cell(v) for v in r])


def read_json(path):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return None


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def parse_kv(text):
    """key=value tokens of @text (whitespace-separated, several a line);
    the first occurrence of a key wins."""
    out = {}
    for tok in text.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out.setdefault(k, v)
    return out


def read_kv(path):
    """A file of key=value lines (one a line, the value may hold spaces)."""
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    out[k] = v
    return out
