#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build the Debian packages from a clean clone of the committed tree (HEAD; uncommitted changes
# are not included): dpkg-buildpackage -us -uc -b, then lintian. The .debs, .buildinfo, .changes
# and the logs land in OUT (default build/deb). Needs debhelper, dh-python, lintian, devscripts
# (scripts/install-deps.sh lists them as optional packaging dependencies).
# Usage: scripts/build-deb.sh [OUT]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
mkdir -p "$out"; out=$(cd "$out" && pwd)
sh "$top/scripts/install-deps.sh" --packaging || true
for t in dpkg-buildpackage dh lintian; do
    command -v $t >/dev/null || { echo "build-deb: $t missing (apt-get install debhelper dh-python lintian devscripts)"; exit 1; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git -C "$top" rev-parse HEAD > "$out/commit"
git clone -q "$top" "$tmp/src"
git -C "$tmp/src" checkout -q "$(cat "$out/commit")"
# the Debian version is the release of include/dpdo/version.h
want=$(sed -n 's/^#define DPDO_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$top/include/dpdo/version.h" | paste -sd.)
have=$(cd "$tmp/src" && dpkg-parsechangelog -S Version)
[ "$have" = "$want" ] || { echo "build-deb: debian/changelog is at $have, include/dpdo/version.h at $want"; exit 1; }
echo "build-deb: dpkg-buildpackage -us -uc -b in a clean clone of $(cut -c1-12 "$out/commit") (log: $out/build.log)"
start=$(date +%s)
(cd "$tmp/src" && dpkg-buildpackage -us -uc -b) > "$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
echo "build-deb: built in $(( $(date +%s) - start )) s"
rm -f "$out"/*.deb
cp "$tmp"/*.deb "$tmp"/*.changes "$tmp"/*.buildinfo "$out"/
ls -l "$out"/*.deb
lintian --tag-display-limit 0 "$out"/*.changes > "$out/lintian.log" 2>&1 || true
e=$(grep -c '^E: ' "$out/lintian.log" || true); w=$(grep -c '^W: ' "$out/lintian.log" || true)
echo "build-deb: lintian: $e errors, $w warnings ($out/lintian.log)"
grep -E '^(E|W): ' "$out/lintian.log" | sed 's/^/  /' | head -n 40
[ "$e" -eq 0 ]
