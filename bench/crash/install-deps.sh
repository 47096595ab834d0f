#!/bin/sh
# Host packages the persistent-memory guest programs build with: PMDK's
# libpmem-dev and libpmemobj-dev (crash-writer's MAP_SYNC and pmemobj
# streams).  Idempotent; Debian bookworm packages only.
set -e
PKGS="libpmem-dev libpmemobj-dev"
missing=
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
        missing="$missing $p"
done
[ -n "$missing" ] || exit 0
echo "pmem: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086 # one word per package
apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1 || true
    apt-get install -y --no-install-recommends $missing >/dev/null
}
