#!/usr/bin/env bash
# Install what tracing/ needs from Debian (idempotent): bpftrace for the
# host-side scripts.  linux-perf is optional (README perf recipe).
# Exit status: 0 if bpftrace is usable afterwards, 1 otherwise.
set -u
if command -v bpftrace >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: bpftrace missing and not root; run: apt-get install -y bpftrace" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Serialise concurrent callers (parallel make) on apt's own lock.
if ! apt-get install -y -q bpftrace >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1 || true
    apt-get install -y -q bpftrace >&2 || {
        echo "install-deps: apt-get install bpftrace failed" >&2
        exit 1
    }
fi
command -v bpftrace >/dev/null 2>&1
