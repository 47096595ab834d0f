#!/usr/bin/env bash
# Install what bench/breakdown needs from Debian (idempotent): gnuplot
# (gnuplot-nox: no X11) for the PNG, bpftrace (via tracing/install-deps.sh)
# for the host events.  Exit status 0 if both are usable afterwards.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rc=0
"$here/../../tracing/install-deps.sh" || rc=1
if ! command -v gnuplot >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: gnuplot missing and not root; run: apt-get install -y gnuplot-nox" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q gnuplot-nox >/dev/null 2>&1; then
        apt-get update -q >/dev/null 2>&1 || true
        apt-get install -y -q gnuplot-nox >&2 ||
            echo "install-deps: apt-get install gnuplot-nox failed" >&2
    fi
    command -v gnuplot >/dev/null 2>&1 || rc=1
fi
exit "$rc"
