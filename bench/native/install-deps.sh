#!/bin/sh
# Dependencies of `make bench-compare` beyond the build: gnuplot (PNG plot).
# Idempotent; Debian packages only.
set -e
if command -v gnuplot >/dev/null 2>&1; then
    exit 0
fi
echo "bench-compare: installing gnuplot-nox"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends gnuplot-nox >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1 || true
    apt-get install -y --no-install-recommends gnuplot-nox >/dev/null
} || echo "bench-compare: gnuplot-nox not installed; the plot will be skipped" >&2
