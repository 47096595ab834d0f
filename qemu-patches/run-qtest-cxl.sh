#!/usr/bin/env bash
# QEMU's own tests/qtest/cxl-test against our patched build, as one TAP test.
# Expects the build from `make qemu` in $BUILD/qemu (BUILD defaults to the
# repo's build/) and QEMU_FIRMWARE_ARGS (exported by qemu-patches/qemu.mk).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}/qemu
firmware_args=${QEMU_FIRMWARE_ARGS:?QEMU_FIRMWARE_ARGS unset: run through make (make qemu-qtest or make test)}
name="qtest cxl-test"

echo "1..1"
if [ ! -x "$build/qemu-system-x86_64" ]; then
    echo "not ok 1 - $name # $build/qemu-system-x86_64 missing: run make qemu"
    exit 0
fi

log=$build/qtest-cxl.log
if ! ninja -C "$build" -j2 tests/qtest/cxl-test >"$log" 2>&1; then
    sed 's/^/# /' "$log" | tail -n 40
    echo "not ok 1 - $name # building tests/qtest/cxl-test failed (log: $log)"
    exit 0
fi

# qtest starts QTEST_QEMU_BINARY itself and derives the target from its
# name; the wrapper adds the firmware directories (Debian's source has no
# bios-256k.bin in pc-bios/).
wrap=$(mktemp -d)
trap 'rm -rf "$wrap"' EXIT
printf '#!/bin/sh\nexec %q %s "$@"\n' "$build/qemu-system-x86_64" "$firmware_args" \
    >"$wrap/qemu-system-x86_64"
chmod +x "$wrap/qemu-system-x86_64"

if QTEST_QEMU_BINARY=$wrap/qemu-system-x86_64 \
       timeout 600 "$build/tests/qtest/cxl-test" --tap -k >>"$log" 2>&1; then
    result=ok
else
    result="not ok"
fi
grep -E '^(ok|not ok) ' "$log" | sed 's/^/# /' || true
echo "$result 1 - $name (log: $log)"
