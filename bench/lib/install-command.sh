#!/bin/sh
# install-command.sh WHO COMMAND PACKAGE: install Debian's PACKAGE unless
# COMMAND is already on the PATH (idempotent: no apt call then).  Tries
# the package lists as they are first, then after `apt-get update`.
# Exit status 0 if COMMAND is usable afterwards; WHO prefixes messages.
set -u
who=$1 cmd=$2 pkg=$3
if command -v "$cmd" >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "$who: $cmd missing and not root; run: apt-get install -y $pkg" >&2
    exit 1
fi
echo "$who: installing $pkg" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "$pkg" >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1 || true
    apt-get install -y -q --no-install-recommends "$pkg" >&2 ||
        echo "$who: apt-get install $pkg failed" >&2
fi
command -v "$cmd" >/dev/null 2>&1
