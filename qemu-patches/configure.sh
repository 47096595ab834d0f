#!/usr/bin/env bash
# Configure QEMU (SRC_DIR, patched by fetch-source.sh) into a fresh
# out-of-tree BUILD_DIR: x86_64 system emulator only, KVM + TCG, trace
# backends log/simple/dtrace (dtrace: USDT probes for bpftrace/perf, a no-op
# when nothing is attached, nothing needed at start-up), through ccache.
#   usage: configure.sh SRC_DIR BUILD_DIR
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 SRC_DIR BUILD_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd) build=$2

echo "qemu-configure: configuring $src into $build"
rm -rf "$build"
mkdir -p "$build"
cd "$build"
"$src/configure" \
    --target-list=x86_64-softmmu \
    --without-default-features \
    --enable-kvm --enable-tcg \
    --disable-docs --disable-werror --disable-install-blobs \
    --enable-trace-backends=log,simple,dtrace \
    --python=/usr/bin/python3 \
    --cc="ccache gcc" \
    >configure.log 2>&1 || {
        tail -n 40 configure.log >&2
        echo "qemu-configure: error: configure failed (full log: $build/configure.log)" >&2
        exit 1
    }
echo "qemu-configure: done (log: $build/configure.log)"
