"""Shared helpers for the reliability tests (tests/reliability/test-*).

TAP output, a private copy of the QEMU binary (other engineers rebuild the
shared one while long tests run), QEMU command lines for realize-only runs,
guest boots through vm-images/boot-guest with extra QMP/gdb sockets, and
/proc accounting of a QEMU process (threads, fds, RSS).
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
BOOT = os.path.join(TOP, "vm-images", "boot-guest")
sys.path[:0] = [os.path.join(TOP, "bench", "lib"), os.path.join(TOP, "tests")]
import tap  # noqa: E402
from qmp import QMP, QMPError  # noqa: E402,F401

FIRMWARE = os.environ.get(
    "QEMU_FIRMWARE_ARGS", "-L /usr/share/seabios -L /usr/share/qemu").split()


class Tap(tap.Tap):
    """tests/tap.py's TAP producer, plus result lines."""

    def kv(self, **pairs):
        """Result lines for `make test-reliability` (not TAP)."""
        for k, v in pairs.items():
            print(f"{k}={v}", flush=True)


def test_dir(name):
    d = os.path.join(os.environ.get("TEST_LOG_DIR",
                                    os.path.join(BUILD, "test-logs")),
                     name + ".d")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def private_qemu(workdir, wait_s=600):
    """Copy $QEMU (default build/qemu/qemu-system-x86_64) into @workdir once
    it exists and has not changed for 3 s, so a concurrent rebuild of the
    shared binary cannot pull it from under a running test."""
    src = os.environ.get("QEMU", os.path.join(BUILD, "qemu",
                                              "qemu-system-x86_64"))
    dst = os.path.join(workdir, "qemu-system-x86_64")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            st = os.stat(src)
            if time.time() - st.st_mtime > 3:
                shutil.copy2(src, dst + ".tmp")
                if os.stat(src).st_mtime == st.st_mtime:
                    os.rename(dst + ".tmp", dst)
                    r = subprocess.run([dst, "-version"], capture_output=True,
                                       timeout=30)
                    if r.returncode == 0:
                        return dst
        except (OSError, subprocess.TimeoutExpired):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"no stable QEMU binary at {src}")
        time.sleep(2)


def cxl_topology(device, memdev="memory-backend-memfd,id=vmem0,share=on,"
                 "size=64M"):
    """QEMU arguments for a CXL host bridge, root port and @device (a full
    -device string) with @memdev (None = no -object)."""
    args = ["-M", "q35,cxl=on", "-m", "512M", "-nodefaults",
            "-display", "none", "-accel", "tcg"]
    if memdev:
        args += ["-object", memdev]
    args += ["-device", "pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1",
             "-device", "cxl-rp,port=0,bus=cxl.1,id=root_port13,chassis=0,"
             "slot=2",
             "-device", device,
             "-M", "cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G"]
    return args


def signal_name(rc):
    try:
        return signal.Signals(rc).name
    except ValueError:
        return str(rc)


# ---- the guest pattern (vm-images/dax-pattern.c and relprobe.c) ----
M64 = (1 << 64) - 1


def pattern(seed, off):
    """splitmix64 of seed and byte offset, as dax-pattern writes it."""
    z = (seed + off * 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def pattern_bytes(seed, off, length):
    """@length bytes (a multiple of 8) of the pattern from byte @off."""
    out = bytearray()
    for o in range(off, off + length, 8):
        out += pattern(seed, o).to_bytes(8, "little")
    return bytes(out)


# ---- process accounting ----
def proc_threads(pid):
    try:
        names = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    n = f.read().strip()
            except OSError:
                continue
            names[n] = names.get(n, 0) + 1
        return names
    except OSError:
        return {}


def proc_fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def proc_rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def qemu_pid_of(sock_path, timeout=60):
    """PID of the QEMU listening on unix socket @sock_path (via /proc)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        inode = None
        try:
            with open("/proc/net/unix") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 8 and parts[7] == sock_path:
                        inode = parts[6]
                        break
        except OSError:
            pass
        if inode:
            target = f"socket:[{inode}]"
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    for fd in os.listdir(f"/proc/{pid}/fd"):
                        if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                            return int(pid)
                except OSError:
                    continue
        time.sleep(0.1)
    return None


# ---- guests ----
# boot-guest brings multi-vCPU TCG guests up on one vCPU and the guest's
# init onlines the others before the job: check that it did.
CPUS_ONLINE = """[ "$(nproc)" -ge {n} ] || { echo "REL: only $(nproc) CPUs online"; exit 1; }
"""


class Guest:
    """A guest booted with vm-images/boot-guest in the background, with a
    second QMP monitor (boot-guest's own socket is left to whoever else
    wants it) and optionally a gdbstub on a unix socket.  @device is one
    device's spec or a list of them (device i is cxl-vmem<i>)."""

    def __init__(self, qemu, results, job, device, smp=2, mem_size="256M",
                 ram="512M", timeout=300, gdb=False, extra=(),
                 mem_file=None, env=None, no_shutdown=True):
        self.results = results
        self.qmp_path = results + ".qmp"
        self.gdb_path = results + ".gdb" if gdb else None
        for p in (self.qmp_path, self.gdb_path):
            if p and os.path.exists(p):
                os.unlink(p)
        args = [BOOT]
        if smp > 1:
            with open(job) as f:
                body = f.read()
            job = results + ".job"
            with open(job, "w") as f:
                f.write(CPUS_ONLINE.replace("{n}", str(smp)) + body)
        if mem_file:
            # memory-backend-file,mem-path=@mem_file,share=on
            args += ["--mem-file", mem_file]
        devices = [device] if isinstance(device, str) else list(device)
        self.ndev = len(devices)
        args += ["--job", job, "--results", results]
        for d in devices:
            args += ["--device", d]
        args += ["--smp", str(smp), "--mem-size", mem_size, "--ram", ram,
                "--timeout", str(timeout), "--",
                "-qmp", f"unix:{self.qmp_path},server=on,wait=off"]
        if gdb:
            args += ["-chardev", f"socket,id=relgdb,path={self.gdb_path},"
                     "server=on,wait=off", "-gdb", "chardev:relgdb"]
        if no_shutdown:
            args.append("-no-shutdown")
        args += list(extra)
        e = dict(os.environ, QEMU=qemu)
        if env:
            e.update(env)
        self.log = open(results + ".boot.log", "w")
        self.proc = subprocess.Popen(args, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=e,
                                     start_new_session=True)
        self.qmp = None
        self.pid = None

    def connect(self, timeout=120):
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.qmp_path):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("QEMU did not start (see "
                                   f"{self.results}.boot.log)")
            time.sleep(0.05)
        self.qmp = QMP(self.qmp_path, timeout=60)
        self.pid = qemu_pid_of(self.qmp_path)
        return self.qmp

    def console(self):
        try:
            with open(os.path.join(self.results, "console.log"), "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def wait_console(self, marker, timeout):
        """Wait for a line containing @marker; returns the line or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.console().splitlines():
                if marker in line:
                    return line
            if self.proc.poll() is not None:
                return None
            time.sleep(0.1)
        return None

    def hmp(self, cmd):
        return self.qmp.execute("human-monitor-command", **{
            "command-line": cmd})

    def stats(self, dev=0):
        return self.qmp.execute("qom-get",
                                path=f"/machine/peripheral/cxl-vmem{dev}",
                                property="stats")

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def qemu_pids(self):
        """QEMU processes of this guest (found by their console path; GNU
        timeout, which boot-guest runs them under, makes its own process
        group)."""
        key = os.path.realpath(os.path.join(self.results, "console.log"))
        pids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if any(key.encode() in a for a in args) and \
                    any(a.endswith(b"qemu-system-x86_64") for a in args[:1]):
                pids.append(int(pid))
        return pids

    def kill(self):
        for pid in self.qemu_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()

    def close(self):
        if self.qmp:
            self.qmp.close()
            self.qmp = None
        self.log.close()

    def run_to_shutdown(self, timeout):
        """With -no-shutdown in the QEMU arguments: wait for the guest to
        power off, read the device statistics, quit QEMU and wait for
        boot-guest.  Returns (outcome, stats): outcome "ok", "watchdog"
        (no power-off within @timeout: QEMU is killed) or "exited" (QEMU
        went away first, e.g. killed by boot-guest's own timeout); stats
        a list of every device's statistics, or None."""
        stats = None
        try:
            self.qmp.wait_event("SHUTDOWN", timeout)
        except QMPError as e:
            if "within" in str(e):
                self.kill()
                return "watchdog", None
            self.wait(60)
            return "exited", None
        except OSError:
            self.wait(60)
            return "exited", None
        try:
            stats = [self.stats(i) for i in range(self.ndev)]
            self.qmp.execute("quit")
        except (QMPError, OSError):
            pass
        if self.wait(120) is None:
            self.kill()
            return "watchdog", stats
        return "ok", stats

    def boot_failed_why(self):
        try:
            with open(self.results + ".boot.log") as f:
                return f.read()[-2000:]
        except OSError:
            return ""


def job_file(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def job_lines(results, prefix):
    try:
        with open(os.path.join(results, "job.log")) as f:
            return [line.rstrip("\n") for line in f if line.startswith(prefix)]
    except OSError:
        return []


def mio_mismatches(results):
    """Sum of mismatches= over every mio-verify line of the job, or None if
    there is none."""
    total, seen = 0, False
    for line in job_lines(results, "mio-verify:"):
        m = re.search(r"\bmismatches=(\d+)", line)
        if m:
            total += int(m.group(1))
            seen = True
    return total if seen else None


class GdbPhys:
    """Minimal GDB remote client for QEMU's gdbstub in physical-memory mode
    (Qqemu.PhyMemMode:1): memory reads and writes by QEMU's main loop."""

    def __init__(self, path, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.s.settimeout(timeout)
        self.buf = b""
        self.cmd("qSupported")
        self.cmd("?")
        r = self.cmd("Qqemu.PhyMemMode:1")
        if r != b"OK":
            raise RuntimeError(f"gdbstub: PhyMemMode not supported ({r!r})")

    def _recv_packet(self):
        while True:
            i = self.buf.find(b"$")
            j = self.buf.find(b"#", i + 1) if i >= 0 else -1
            if i >= 0 and j >= 0 and len(self.buf) >= j + 3:
                data = self.buf[i + 1:j]
                self.buf = self.buf[j + 3:]
                self.s.sendall(b"+")
                return data
            chunk = self.s.recv(65536)
            if not chunk:
                raise RuntimeError("gdbstub closed the connection")
            self.buf += chunk

    def cmd(self, payload):
        if isinstance(payload, str):
            payload = payload.encode()
        cs = sum(payload) & 0xFF
        self.s.sendall(b"$" + payload + b"#" + b"%02x" % cs)
        return self._recv_packet()

    def read(self, addr, length):
        out = b""
        while length > 0:
            n = min(length, 1024)
            r = self.cmd(f"m{addr:x},{n:x}")
            if r.startswith(b"E") and len(r) == 3:
                raise RuntimeError(f"gdbstub read 0x{addr:x}: {r!r}")
            out += bytes.fromhex(r.decode())
            addr += n
            length -= n
        return out

    def write(self, addr, data):
        while data:
            chunk = data[:1024]
            r = self.cmd(f"M{addr:x},{len(chunk):x}:" + chunk.hex())
            if r != b"OK":
                raise RuntimeError(f"gdbstub write 0x{addr:x}: {r!r}")
            addr += len(chunk)
            data = data[len(chunk):]

    def detach(self):
        try:
            self.cmd("D")
        except (OSError, RuntimeError):
            pass
        self.s.close()
