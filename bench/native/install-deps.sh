#!/bin/sh
# Dependencies of `make bench-compare` beyond the build: gnuplot (PNG plot).
# Idempotent; Debian packages only.  Without gnuplot the plot is skipped.
"$(dirname "$0")/../lib/install-command.sh" bench-compare gnuplot gnuplot-nox ||
    echo "bench-compare: gnuplot-nox not installed; the plot will be skipped" >&2
exit 0
