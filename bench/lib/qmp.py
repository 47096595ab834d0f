"""Minimal QMP client (standard library only) for the runner and tests."""

import json
import os
import socket
import time


class QMPError(Exception):
    pass


class QMP:
    def __init__(self, path, timeout=30.0, alive=None):
        """Connect to the server at @path within @timeout seconds; with
        @alive (a callable), give up as soon as it returns False (the
        QEMU that would serve the socket is gone)."""
        deadline = time.monotonic() + timeout
        while True:
            target = path
            if len(os.fsencode(path)) > 107:
                # too long for sun_path: vm-images/boot-guest then makes it
                # a symlink to a socket under a short directory
                target = os.path.realpath(path)
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(target)
                break
            except OSError:     # not there yet, refused, path too long
                self.sock.close()
                if alive and not alive():
                    raise QMPError(f"QEMU exited before {path} accepted a connection")
                if time.monotonic() > deadline:
                    raise QMPError(f"no QMP server at {path} after {timeout}s")
                time.sleep(0.05)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rwb")
        self.events = []
        self._read()                      # greeting
        self.execute("qmp_capabilities")

    def _read(self):
        line = self.file.readline()
        if not line:
            raise QMPError("QMP connection closed")
        return json.loads(line)

    def execute(self, cmd, **args):
        msg = {"execute": cmd}
        if args:
            msg["arguments"] = args
        self.file.write(json.dumps(msg).encode() + b"\n")
        self.file.flush()
        while True:
            reply = self._read()
            if "event" in reply:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise QMPError(f"{cmd}: {reply['error'].get('desc')}")
            return reply.get("return")

    def wait_event(self, name, timeout):
        """Return the first event called @name (already seen or new)."""
        deadline = time.monotonic() + timeout
        while True:
            for ev in self.events:
                if ev["event"] == name:
                    self.events.remove(ev)
                    return ev
            left = deadline - time.monotonic()
            if left <= 0:
                raise QMPError(f"no {name} event within {timeout}s")
            self.sock.settimeout(left)
            try:
                ev = self._read()
            except socket.timeout:
                continue
            if "event" in ev:
                self.events.append(ev)

    def close(self):
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass


def device_properties(qmp, path):
    """Every readable, non-link property of the QOM object at @path."""
    props = {}
    for p in qmp.execute("qom-list", path=path):
        t = p["type"]
        if t.startswith("link<") or t.startswith("child<"):
            continue
        try:
            props[p["name"]] = qmp.execute("qom-get", path=path,
                                           property=p["name"])
        except QMPError:
            continue
    return props
