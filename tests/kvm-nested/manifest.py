#!/usr/bin/env python3
"""manifest.py L1-DIR RUN...: a manifest.json per L2 run of the nested-KVM
rig (L1-DIR/<run>.manifest.json), like every other run's: the L2 QEMU
command line and its cxl-ssd devices, QEMU version, guest kernel, the
accelerator ("kvm (nested in tcg)"), host CPU and kernel, git commit, the
device counters and how the run ended.  Timings from the rig are the rig's
(TCG emulating SVM emulating the guest), never KVM performance."""

import glob
import json
import os
import platform
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench", "lib"))
import manifest  # noqa: E402
import tables  # noqa: E402


def run_manifest(l1, run, ginfo):
    args_path = os.path.join(l1, f"{run}.qemu.args")
    with open(args_path) as f:
        argv = f.read().split("\n")
    devices = [v for k, v in zip(argv, argv[1:])
               if k == "-device" and v.startswith("cxl-ssd")]
    rc_path = os.path.join(l1, f"{run}.qemu.rc")
    rc = open(rc_path).read().strip() if os.path.exists(rc_path) else None
    stats = {}
    for path in sorted(glob.glob(os.path.join(l1, f"{run}.stats-cxl-vmem*.json"))):
        dev = os.path.basename(path)[len(run) + len(".stats-"):-len(".json")]
        try:      # l2-qmp saves QMP's reply line as it came
            stats[dev] = (tables.read_json(path) or {}).get("return")
        except ValueError:
            stats[dev] = None
    return {
        "rig": "kvm-nested",
        "run": run,
        "accelerator": "kvm (nested in tcg)",
        "l1_accelerator": "tcg, -cpu max (SVM + NPT)",
        "l1_kvm_amd_npt": ginfo.get("kvm_amd_npt"),
        "qemu_command_line": [a for a in argv if a],
        "device_command_lines": devices,
        "qemu_version": manifest.qemu_version(),
        "guest_kernel": ginfo.get("uname_r", "unknown"),
        "host_cpu": manifest.host_cpu(),
        "host_kernel": platform.release(),
        "git_commit": manifest.git_commit(),
        "device_stats": stats,
        "qemu_exit_status": int(rc) if rc and rc.lstrip("-").isdigit() else rc,
        "timings": "rig timings (TCG three levels deep), not KVM performance",
    }


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    l1, runs = sys.argv[1], sys.argv[2:]
    ginfo = tables.read_kv(os.path.join(l1, "guest-info"))
    for run in runs:
        if not os.path.exists(os.path.join(l1, f"{run}.qemu.args")):
            print(f"manifest: {run}: no {run}.qemu.args in {l1}", file=sys.stderr)
            return 1
        out = os.path.join(l1, f"{run}.manifest.json")
        with open(out, "w") as f:
            json.dump(run_manifest(l1, run, ginfo), f, indent=1)
        print(f"manifest: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
