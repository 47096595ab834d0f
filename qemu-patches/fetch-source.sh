#!/usr/bin/env bash
# Fetch Debian's QEMU source package, apply our patches (qemu-patches/series)
# and link our device directory in as hw/cxl-ssd.
#   usage: fetch-source.sh DEB_VERSION SRC_DIR DOWNLOAD_DIR DEVICE_DIR
# SRC_DIR/.cxl-ssd-stamp records the version and the patches' checksums; it is
# rewritten (and its mtime bumped) only when the tree is (re-)extracted, so
# make can use it as the "source changed" stamp.  Any change of version,
# series or patch re-extracts a clean tree.
set -euo pipefail

[ $# -eq 4 ] || { echo "usage: $0 DEB_VERSION SRC_DIR DOWNLOAD_DIR DEVICE_DIR" >&2; exit 2; }
version=$1 src=$2 dl=$3 device=$4
patch_dir=$(cd "$(dirname "$0")" && pwd)
stamp=$src/.cxl-ssd-stamp

log() { echo "qemu-src: $*"; }
die() { echo "qemu-src: error: $*" >&2; exit 1; }
quiet() {  # run a command, show its output only if it fails
    local out
    out=$("$@" 2>&1) || { echo "$out" >&2; return 1; }
}

mapfile -t patches < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patch_dir/series")
want=$(
    echo "version $version"
    for p in "${patches[@]}"; do
        [ -f "$patch_dir/$p" ] || die "series names $p, but $patch_dir/$p does not exist"
        echo "patch $p $(sha256sum <"$patch_dir/$p" | cut -d' ' -f1)"
    done
)

link_device() {
    [ -f "$device/meson.build" ] || die "$device/meson.build missing (device directory to link as hw/cxl-ssd)"
    if [ "$(readlink "$src/hw/cxl-ssd" || true)" != "$device" ]; then
        log "linking hw/cxl-ssd -> $device"
        ln -sfn "$device" "$src/hw/cxl-ssd"
    fi
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    link_device
    exit 0
fi

# Capture first: grep -q closing the pipe early would fail it under pipefail.
avail=$(apt-cache showsrc --only-source qemu 2>/dev/null | sed -n 's/^Version: //p' | tr '\n' ' ')
if ! grep -qFx -- "$version" <<<"${avail// /$'\n'}"; then
    die "qemu source version '$version' is not in the apt deb-src lists (available: ${avail:-none}). Run qemu-patches/host-deps.sh, or set QEMU_DEB_VERSION to one of those."
fi

mkdir -p "$dl"
log "downloading source package qemu=$version into $dl"
(cd "$dl" && quiet apt-get source --download-only "qemu=$version") ||
    die "apt-get source qemu=$version failed"
upstream=${version#*:}
dsc=$dl/qemu_${upstream}.dsc
[ -f "$dsc" ] || die "download failed: $dsc not found"

log "extracting $dsc into $src"
rm -rf "$src" "$src.tmp"
mkdir -p "$(dirname "$src")"
quiet dpkg-source --no-copy -x "$dsc" "$src.tmp" || die "dpkg-source -x $dsc failed"
for p in "${patches[@]}"; do
    log "applying $p"
    patch -d "$src.tmp" -p1 --forward --batch --no-backup-if-mismatch --quiet <"$patch_dir/$p" ||
        die "patch $p does not apply to qemu $version (see the output above)"
done
mv "$src.tmp" "$src"
link_device
echo "$want" >"$stamp"
log "ready: qemu $version with ${#patches[@]} patch(es)"
