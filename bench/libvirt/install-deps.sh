#!/usr/bin/env bash
# Install what bench/libvirt needs from Debian bookworm (idempotent):
# libvirt-daemon-system (libvirtd, virtlogd, the libvirt-qemu user and the
# QEMU driver) and libvirt-clients (virsh).  Never from backports: bookworm's
# libvirt 9.0 is what DESIGN.md 3c verified.  Exit status 0 if virsh and
# libvirtd are usable afterwards; the reason otherwise on stderr.
set -u
need=(libvirt-daemon-system libvirt-clients)
have() { command -v virsh >/dev/null 2>&1 && [ -x /usr/sbin/libvirtd ] && [ -x /usr/sbin/virtlogd ]; }
have && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "libvirt install-deps: libvirt missing and not root; run: apt-get install -y ${need[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# No systemd here: package scripts must not try to start services.
# policy-rc.d answering 101 keeps invoke-rc.d quiet; removed afterwards if
# we created it.
created_policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    created_policy=1
fi
apt_install() {
    apt-get install -y -q --no-install-recommends -t bookworm "${need[@]}"
}
if ! apt_install >/tmp/libvirt-install-deps.log 2>&1; then
    apt-get update -q >>/tmp/libvirt-install-deps.log 2>&1 || true
    apt_install >>/tmp/libvirt-install-deps.log 2>&1 ||
        echo "libvirt install-deps: apt-get install ${need[*]} failed (log: /tmp/libvirt-install-deps.log)" >&2
fi
[ -z "$created_policy" ] || rm -f /usr/sbin/policy-rc.d
have || { echo "libvirt install-deps: virsh/libvirtd/virtlogd not usable after install" >&2; exit 1; }
exit 0
