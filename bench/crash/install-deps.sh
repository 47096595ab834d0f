#!/bin/sh
# Host packages the persistent-memory guest programs build with: libpmem-dev
# (PMDK's libpmem, for crash-writer's MAP_SYNC stream).  Idempotent; Debian
# bookworm packages only.
set -e
if dpkg-query -W -f='${Status}' libpmem-dev 2>/dev/null | grep -q 'ok installed'; then
    exit 0
fi
echo "pmem: installing libpmem-dev"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends libpmem-dev >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1 || true
    apt-get install -y --no-install-recommends libpmem-dev >/dev/null
}
