#!/usr/bin/env bash
# Install what building and running our QEMU needs on a Debian 12 host.
# Idempotent: exits without any apt call when everything is present.
#   - apt sources: bookworm-backports (deb, for meson >= 1.5) and trixie
#     (deb-src only: the QEMU source package; never binaries from trixie,
#     they would upgrade libc)
#   - build deps from bookworm / bookworm-backports
#   - firmware packages whose files are passed with -L at run time
set -euo pipefail

SOURCES_DIR=/etc/apt/sources.list.d
MESON_MIN=1.5
BUILD_PKGS=(ninja-build libglib2.0-dev libfdt-dev pkg-config python3 python3-venv ccache
            systemtap-sdt-dev
            flex bison gcc make patch dpkg-dev)
FIRMWARE_PKGS=(seabios qemu-system-data ipxe-qemu)

log() { echo "host-deps: $*"; }

# Mirror and keyring of the host's own Debian source.
mirror=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' \
         "$SOURCES_DIR/debian.sources" 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# Is "TYPE ... SUITE" already configured (by us or anyone) in a one-line
# .list or a deb822 .sources stanza?  Avoids duplicate-target warnings.
configured() {  # type suite
    local f
    for f in /etc/apt/sources.list "$SOURCES_DIR"/*.list; do
        [ -f "$f" ] && grep -qE "^[[:space:]]*$1([[:space:]]+\[[^]]*\])?[[:space:]]+[^[:space:]]+[[:space:]]+$2([[:space:]]|\$)" "$f" &&
            return 0
    done
    for f in "$SOURCES_DIR"/*.sources; do
        [ -f "$f" ] && awk -v t="$1" -v s="$2" '
            BEGIN { RS = ""; FS = "\n" }
            {
                ty = 0; su = 0; on = 1
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^Types:/)   { n = split(substr($i, 7), a, " "); for (j = 1; j <= n; j++) if (a[j] == t) ty = 1 }
                    if ($i ~ /^Suites:/)  { n = split(substr($i, 8), a, " "); for (j = 1; j <= n; j++) if (a[j] == s) su = 1 }
                    if ($i ~ /^Enabled:[[:space:]]*no/) on = 0
                }
                if (ty && su && on) found = 1
            }
            END { exit !found }' "$f" && return 0
    done
    return 1
}

# Sources to add: "file type suite" for each one not configured yet.
new_sources=()
configured deb bookworm-backports ||
    new_sources+=("$SOURCES_DIR/cxl-ssd-bookworm-backports.sources deb bookworm-backports")
configured deb-src trixie ||
    new_sources+=("$SOURCES_DIR/cxl-ssd-trixie-src.sources deb-src trixie")

lists_present() {
    compgen -G '/var/lib/apt/lists/*_dists_bookworm-backports_main_binary-*_Packages*' >/dev/null &&
    compgen -G '/var/lib/apt/lists/*_dists_trixie_main_source_Sources*' >/dev/null
}
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for p in "${BUILD_PKGS[@]}" "${FIRMWARE_PKGS[@]}"; do
    installed "$p" || missing+=("$p")
done
meson_ok=0
if installed meson && dpkg --compare-versions \
       "$(dpkg-query -W -f='${Version}' meson)" ge "$MESON_MIN"; then
    meson_ok=1
fi

if [ "${#new_sources[@]}" -eq 0 ] && lists_present && [ "${#missing[@]}" -eq 0 ] &&
       [ "$meson_ok" -eq 1 ]; then
    log "all present (meson $(dpkg-query -W -f='${Version}' meson))"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "host-deps: error: packages or apt sources missing; run as root to install them" >&2
    exit 1
fi
for entry in "${new_sources[@]}"; do
    read -r file type suite <<<"$entry"
    log "adding apt source $file ($type $suite from $mirror)"
    printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
        "$type" "$mirror" "$suite" "$keyring" >"$file"
done
export DEBIAN_FRONTEND=noninteractive
if [ "${#new_sources[@]}" -gt 0 ] || ! lists_present; then
    log "apt-get update"
    apt-get update -q --error-on=any
fi
if [ "$meson_ok" -eq 0 ]; then
    log "installing meson >= $MESON_MIN from bookworm-backports"
    apt-get install -y -q --no-install-recommends -t bookworm-backports meson
fi
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
log "done (meson $(dpkg-query -W -f='${Version}' meson))"
