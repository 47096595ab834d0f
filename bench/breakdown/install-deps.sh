#!/bin/sh
# Install what bench/breakdown needs from Debian (idempotent): gnuplot
# (gnuplot-nox: no X11) for the PNG, bpftrace (via tracing/install-deps.sh)
# for the host events.  Exit status 0 if both are usable afterwards.
here=$(dirname "$0")
rc=0
"$here/../../tracing/install-deps.sh" || rc=1
"$here/../lib/install-command.sh" install-deps gnuplot gnuplot-nox || rc=1
exit "$rc"
