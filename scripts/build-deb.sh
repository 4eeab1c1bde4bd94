#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build the Debian packages from a clean clone of the committed tree (HEAD; uncommitted changes
# are not included) in a clean build environment, never on the host:
#   - a fresh chroot of the host's Debian release made from the host's own apt sources
#     (scripts/deb-chroot.sh: debootstrap --variant=minbase, cached as a tarball);
#   - inside it: build-essential, the Build-Depends of debian/control (apt-get build-dep) and
#     lintian; dpkg-buildpackage -us -uc -b as an unprivileged user; lintian on the .changes;
#   - the host's package list (`dpkg -l`) is taken before and after and must be identical (the
#     script fails otherwise); the chroot is deleted at the end.
# The .debs, .buildinfo, .changes and the logs land in OUT (default build/deb).
# Needs root (debootstrap, chroot, unshare), network access to the host's Debian mirror, about
# 2 GB in /var/tmp. Usage: scripts/build-deb.sh [OUT]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
[ "$(id -u)" = 0 ] || { echo "build-deb: needs root (debootstrap, chroot, unshare)"; exit 1; }
mkdir -p "$out"; out=$(cd "$out" && pwd)
. "$top/scripts/deb-chroot.sh"
tmp=$(mktemp -d /var/tmp/dpdo-build-deb.XXXXXX); trap 'rm -rf "$tmp"' EXIT
dpkg -l > "$tmp/host-before"
git -C "$top" rev-parse HEAD > "$out/commit"
# the Debian version is the release of include/dpdo/version.h
want=$(sed -n 's/^#define DPDO_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$top/include/dpdo/version.h" | paste -sd.)
have=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$top/debian/changelog")
[ "$have" = "$want" ] || { echo "build-deb: debian/changelog is at $have, include/dpdo/version.h at $want"; exit 1; }
start=$(date +%s)
deb_chroot_new "$tmp/root"
mkdir -p "$tmp/root/build"
git clone -q "$top" "$tmp/root/build/src"
git -C "$tmp/root/build/src" checkout -q "$(cat "$out/commit")"
rm -rf "$tmp/root/build/src/.git"
cat > "$tmp/root/build/inside.sh" <<EOS
set -eu
apt-get update -q
apt-get install -y -q --no-install-recommends build-essential fakeroot lintian
cd /build/src
apt-get build-dep -y -q --no-install-recommends .
useradd -m builder
chown -R builder /build
runuser -u builder -- env DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b
cd /build
runuser -u builder -- lintian --tag-display-limit 0 ./*.changes > /build/lintian.log 2>&1 || true
EOS
echo "build-deb: chroot $(deb_suite) from $(deb_mirror); building $(cut -c1-12 "$out/commit") (log: $out/build.log)"
deb_chroot_run "$tmp/root" sh /build/inside.sh > "$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
echo "build-deb: built in $(( $(date +%s) - start )) s (chroot, dependencies, build, lintian)"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
cp "$tmp"/root/build/*.deb "$tmp"/root/build/*.changes "$tmp"/root/build/*.buildinfo "$tmp/root/build/lintian.log" "$out"/
ls -l "$out"/*.deb
dpkg -l > "$tmp/host-after"
if ! cmp -s "$tmp/host-before" "$tmp/host-after"; then
    echo "build-deb: the host's packages changed during the build:"; diff "$tmp/host-before" "$tmp/host-after" | head -n 20
    exit 1
fi
echo "build-deb: host packages unchanged (dpkg -l identical before and after, $(grep -c '^ii' "$tmp/host-after") installed)"
e=$(grep -c '^E: ' "$out/lintian.log" || true); w=$(grep -c '^W: ' "$out/lintian.log" || true)
echo "build-deb: lintian: $e errors, $w warnings ($out/lintian.log)"
grep -E '^(E|W): ' "$out/lintian.log" | sed 's/^/  /' | head -n 40
[ "$e" -eq 0 ] && [ "$w" -eq 0 ]
