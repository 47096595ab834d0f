#!/usr/bin/env bash
# Install what make figures needs beyond the experiments' own dependencies:
# gnuplot (gnuplot-nox from Debian 12: PNGs through the pngcairo terminal).
# Idempotent: exits without any apt call when gnuplot is already there.
set -euo pipefail
if command -v gnuplot >/dev/null 2>&1; then
    exit 0
fi
echo "figures-deps: installing gnuplot-nox"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends gnuplot-nox; then
    apt-get update -q
    apt-get install -y -q --no-install-recommends gnuplot-nox
fi
command -v gnuplot >/dev/null 2>&1 || { echo "figures-deps: gnuplot still missing" >&2; exit 1; }
