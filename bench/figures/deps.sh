#!/bin/sh
# Install what make figures needs beyond the experiments' own dependencies:
# gnuplot (gnuplot-nox from Debian 12: PNGs through the pngcairo terminal).
# Idempotent: exits without any apt call when gnuplot is already there.
exec "$(dirname "$0")/../lib/install-command.sh" figures-deps gnuplot gnuplot-nox
