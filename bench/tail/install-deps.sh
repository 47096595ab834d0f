#!/bin/sh
# Dependencies of `make bench-tail` beyond the build: cyclictest (Debian's
# rt-tests).  Idempotent; Debian packages only.
set -e
if command -v cyclictest >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "bench-tail: cyclictest missing and not root; run: apt-get install -y rt-tests" >&2
    exit 1
fi
echo "bench-tail: installing rt-tests"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends rt-tests >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1 || true
    apt-get install -y --no-install-recommends rt-tests >/dev/null
}
command -v cyclictest >/dev/null 2>&1
