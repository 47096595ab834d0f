#!/usr/bin/python3
"""Check HMP `xp /Ngx ADDR` replies (l2-qmp's hmp.out) against the pattern
that `mio --verify --seed S --verify-passes K` left on the device: word at
byte offset o holds mix64(seed_K ^ o) (bench/mio/verify.c, last pass).

  xp-check.py --hmp hmp.out --base REGION_HPA --xp-base ADDR --seed S
              --passes K [--stats-before F --stats-after F]

--xp-base is the address the host assumed when it wrote the commands; it
must be the guest's region base.  With the two stats files (qom-get
replies before and after the xp commands), also reports how many of the
read pages were misses served for QEMU's own thread.  stdout: one line;
exit 1 on any wrong word or missing reply.
"""
import argparse
import json
import re
import sys

M64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def pass_seed(seed, k):
    return mix64(seed ^ mix64(0x7665726966790000 + k))


def misses(path):
    with open(path) as f:
        return json.load(f)["return"]["misses"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hmp", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--xp-base", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--passes", type=int, required=True)
    ap.add_argument("--stats-before")
    ap.add_argument("--stats-after")
    a = ap.parse_args()
    base, xp_base = int(a.base, 0), int(a.xp_base, 0)
    if base != xp_base:
        print("xp addresses assumed region base 0x%x, the guest's is 0x%x"
              % (xp_base, base))
        return 1
    seed = pass_seed(a.seed, a.passes - 1)
    words = bad = 0
    with open(a.hmp) as f:
        for line in f:
            if line.startswith("#"):
                continue
            reply = json.loads(line)
            if "return" not in reply:
                print("HMP error: %s" % line.strip())
                return 1
            for m in re.finditer(r"([0-9a-f]+):((?: 0x[0-9a-f]+)+)", reply["return"]):
                addr = int(m.group(1), 16)
                for j, w in enumerate(m.group(2).split()):
                    off = addr + 8 * j - base
                    words += 1
                    if int(w, 16) != mix64(seed ^ off):
                        bad += 1
    if words == 0:
        print("no xp output in %s" % a.hmp)
        return 1
    extra = ""
    if a.stats_before and a.stats_after:
        extra = ", %d of the pages missed (served for QEMU's main thread)" % (
            misses(a.stats_after) - misses(a.stats_before))
    print("%d words read, %d differ from mio's last pass%s" % (words, bad, extra))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
