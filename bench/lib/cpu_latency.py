"""Keep the host's CPUs out of deep idle states while a benchmark runs.

A miss whose handler thread sleeps (delivery=poll), or whose faulter
sleeps while another thread serves it, pays the exit latency of the idle
state its CPU entered.  On a virtual machine such as these hosts that
state is a halt the hypervisor sees, and waking from it costs tens of
microseconds: on an idle host the same poll-delivery miss took 70 us at
P50 where it took 15 us with the CPUs kept busy (bench/floor/README.md),
so a run on an idle host and one on a loaded host disagreed by 4x and a
1-thread run was slower than a 2-thread one.

A PM QoS request of 0 us on /dev/cpu_dma_latency keeps cpuidle in its
polling state.  The request lives while the file stays open and ends when
it is closed, also when the process dies.  The floor and the emulator run
under the same request, so their ratios stay fair.  Without root (or
without the file) nothing is held and the reason is reported.
"""

import collections
import contextlib
import os
import struct

PATH = "/dev/cpu_dma_latency"


class Hold(collections.namedtuple("Hold", "held text")):
    """What hold() did: held (bool) and a line for the report and the
    manifest, which str() gives."""

    def __str__(self):
        return self.text


def current(path=PATH):
    """The host's current CPU latency limit in us (PM QoS), or None."""
    try:
        with open(path, "rb") as f:
            return struct.unpack("i", f.read(4))[0]
    except (OSError, struct.error):
        return None


@contextlib.contextmanager
def hold(enabled=True, path=PATH):
    """Hold a 0 us CPU latency request inside the block.  Yields a Hold:
    "held (0 us, PATH)" or "not held: REASON"."""
    if not enabled:
        yield Hold(False, "not held: --no-cpu-latency-hold")
        return
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        yield Hold(False, f"not held: {path}: {e.strerror}")
        return
    try:
        os.write(fd, struct.pack("i", 0))
        yield Hold(True, f"held (0 us, {path})")
    finally:
        os.close(fd)
