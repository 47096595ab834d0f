"""Experiment sweeps across libvirt hosts (bench/run --hosts URI...).

Points go to the hosts with at most @per_host domains at once on each
(one worker thread per slot).  Each point runs through libvirt on its host
(bench/lib/point.py run(uri=...), i.e. bench/libvirt/boot-domain) straight
into OUT/<point>/, the same folder and files as a direct run, and its
manifest names the host (libvirt_uri).  OUT/sweep.json records every
attempt.

Rules:
- A point whose manifest says "ok" is never run again (kept at start, and
  checked again before each launch); a finished point is taken off the
  queue exactly once.
- Host failure (boot-domain exit 3: libvirt unreachable, domain not created
  or gone without any result): the attempt's folder is moved aside to
  OUT/<point>.host-failed-<n> and the point goes back to the queue for
  another host (not the one that failed it, while others remain), up to
  MAX_ATTEMPTS attempts.  A host that fails HOST_RETIRE times in a row gets
  no more points.
- Guest or job failure (the host worked): the point is failed, not retried
  (as with bench/run; a rerun of the sweep moves it aside and runs it
  again).
"""

import collections
import json
import os
import re
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import manifest as manifestmod  # noqa: E402
import point as pointmod  # noqa: E402
import points  # noqa: E402
import stats  # noqa: E402

HOST_FAILED = 3
MAX_ATTEMPTS = 3
HOST_RETIRE = 3


def host_label(uri):
    m = re.match(r"^[a-z0-9+]+://([^/]*)/", uri)
    return (m.group(1) if m else "") or "localhost"


class Sweep:
    def __init__(self, pts, out, spec_path, hosts, per_host, log=print):
        self.pts = pts
        self.out = out
        self.spec_path = spec_path
        self.hosts = list(dict.fromkeys(hosts))      # unique, in order
        self.per_host = per_host
        self.log = log
        self.lock = threading.Condition()
        self.queue = collections.deque()
        self.excluded = collections.defaultdict(set)  # point -> failed hosts
        self.attempts = collections.defaultdict(list)
        self.running = 0
        self.host_fail_streak = collections.Counter()
        self.retired = set()
        self.result = {}          # point -> "ok" | "failed" | "kept"
        self.ran_on = {}          # point -> uri of the successful run
        self.kept_on = {}         # kept point -> uri of its earlier run

    def _take(self, uri):
        """Next point for @uri, or None when the sweep is over for it."""
        with self.lock:
            while True:
                if uri in self.retired:
                    return None
                live = [h for h in self.hosts if h not in self.retired]
                for i, (pname, p) in enumerate(self.queue):
                    ex = self.excluded[pname]
                    if uri not in ex or all(h in ex for h in live):
                        del self.queue[i]
                        self.running += 1
                        return pname, p
                if not self.queue and self.running == 0:
                    return None
                self.lock.wait(timeout=1.0)

    def _finish(self, pname, p, uri, manifest, err, elapsed, started):
        pdir = os.path.join(self.out, pname)
        status = manifest["status"] if manifest else "error"
        host_failed = (err is not None and manifest is None) or (
            manifest is not None and manifest.get("boot_guest_status") == HOST_FAILED)
        with self.lock:
            self.running -= 1
            self.attempts[pname].append({
                "uri": uri, "status": "host-failed" if host_failed else status,
                "elapsed_s": round(elapsed, 1),
                "start_unix": round(started, 3),
                "end_unix": round(started + elapsed, 3),
                **({"error": str(err)} if err else {})})
            if host_failed:
                self.host_fail_streak[uri] += 1
                if self.host_fail_streak[uri] >= HOST_RETIRE and uri not in self.retired:
                    self.retired.add(uri)
                    self.log(f"sweep: host {uri} failed {HOST_RETIRE} times in a "
                             "row: no more points for it")
                aside = points.move_aside(pdir, "host-failed") if os.path.exists(pdir) else None
                self.excluded[pname].add(uri)
                live = [h for h in self.hosts if h not in self.retired]
                if len(self.attempts[pname]) < MAX_ATTEMPTS and live:
                    self.queue.appendleft((pname, p))
                    self.log(f"sweep: {pname}: host {uri} failed"
                             f"{' (attempt kept in ' + aside + ')' if aside else ''}; "
                             "retrying on another host")
                else:
                    self.result[pname] = "failed"
                    self.log(f"sweep: {pname}: host failed, no attempts left")
            else:
                self.host_fail_streak[uri] = 0
                self.result[pname] = "ok" if status == "ok" else "failed"
                if status == "ok":
                    self.ran_on[pname] = uri
                summary = stats.format_summary(manifest["summary"]) if manifest else ""
                self.log(f"sweep: {pname}: {status} on {uri} in {elapsed:.0f} s"
                         + (f"\n{summary}" if summary else ""))
                if manifest and status != "ok":
                    try:
                        with open(os.path.join(pdir, "boot-guest.log")) as f:
                            self.log("".join("sweep:   | " + l for l in f.readlines()[-8:]).rstrip())
                    except OSError:
                        pass
            self.lock.notify_all()

    def _worker(self, uri):
        while True:
            item = self._take(uri)
            if item is None:
                return
            pname, p = item
            pdir = os.path.join(self.out, pname)
            if manifestmod.is_ok(pdir):             # never twice once it succeeded
                with self.lock:
                    self.running -= 1
                    self.result[pname] = "kept"
                    self.lock.notify_all()
                continue
            if os.path.exists(pdir):
                self.log(f"sweep: {pname}: incomplete earlier attempt moved to "
                         f"{points.move_aside(pdir, 'incomplete')}")
            self.log(f"sweep: {pname} -> {uri}")
            t0 = time.monotonic()
            started = time.time()
            manifest, err = None, None
            try:
                manifest = pointmod.run(pname, p, pdir, self.spec_path, uri=uri)
            except Exception as e:      # noqa: BLE001 - reported per point
                err = e
                self.log(f"sweep: {pname}: {type(err).__name__}: {err}")
            if isinstance(err, ValueError):
                # A point that cannot run through libvirt at all: failed,
                # not a host failure.
                manifest = {"status": "failed", "boot_guest_status": 2,
                            "summary": {}}
            self._finish(pname, p, uri, manifest, err, time.monotonic() - t0, started)

    def run(self):
        os.makedirs(self.out, exist_ok=True)
        # An earlier sweep into the same folder: keep its attempts and hosts.
        try:
            with open(os.path.join(self.out, "sweep.json")) as f:
                earlier = json.load(f).get("points", {})
        except (OSError, ValueError):
            earlier = {}
        for pname, rec in earlier.items():
            self.attempts[pname] = list(rec.get("attempts", []))
        for pname, p in self.pts:
            if manifestmod.is_ok(os.path.join(self.out, pname)):
                self.result[pname] = "kept"
                uri = earlier.get(pname, {}).get("uri")
                if uri:
                    self.kept_on[pname] = uri
            else:
                self.queue.append((pname, p))
        kept = len(self.result)
        self.log(f"sweep: {len(self.pts)} point(s), {kept} already completed; "
                 f"{len(self.hosts)} host(s) x {self.per_host} slot(s): "
                 + " ".join(self.hosts))
        start = time.monotonic()
        threads = [threading.Thread(target=self._worker, args=(uri,), daemon=True)
                   for uri in self.hosts for _ in range(self.per_host)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - start
        for pname, _ in self.pts:         # anything never taken (no live host)
            self.result.setdefault(pname, "failed")
        point_s = sum(a["elapsed_s"] for pname, att in self.attempts.items()
                      for a in att[len(earlier.get(pname, {}).get("attempts", [])):]
                      if a["status"] == "ok")
        retries = sum(max(0, len(att) - len(earlier.get(pname, {}).get("attempts", [])) - 1)
                      for pname, att in self.attempts.items())
        record = {
            "hosts": self.hosts, "per_host": self.per_host,
            "retired_hosts": sorted(self.retired),
            "wall_s": round(wall, 1), "sum_point_s": round(point_s, 1),
            "points": {pname: {"result": self.result[pname],
                               "uri": self.ran_on.get(pname, self.kept_on.get(pname)),
                               "attempts": self.attempts.get(pname, [])}
                       for pname, _ in self.pts},
        }
        with open(os.path.join(self.out, "sweep.json"), "w") as f:
            json.dump(record, f, indent=1)
        res = list(self.result.values())
        used = sorted(set(self.ran_on.values()))
        keys = {
            "sweep_points": len(self.pts),
            "sweep_ok": res.count("ok"),
            "sweep_kept": res.count("kept"),
            "sweep_failed": res.count("failed"),
            "sweep_retries": retries,
            "sweep_hosts_used": len(used),
            "sweep_wall_s": f"{wall:.1f}",
            "sweep_sum_point_s": f"{point_s:.1f}",
        }
        return keys, record


def run_sweep(pts, out, spec_path, hosts, per_host, log=print):
    """Run @pts over libvirt @hosts; returns (key=value dict, sweep record)."""
    return Sweep(pts, out, spec_path, hosts, per_host, log).run()
