#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Print the Debian symbols file (deb-symbols(5)) of libdpdo or libdpdo_mpi, generated from its
# version script (lib/libdpdo.map, lib/mpi/libdpdo_mpi.map: every symbol with its version node).
# The minimal version of every symbol is the first packaged release, 0.2.0; a symbol added later
# gets the release that adds it: node DPDO_M.m (M.m after 0.2) gives M.m.0.
# Usage: gen-deb-symbols.sh libdpdo|libdpdo_mpi
set -eu
cd "$(dirname "$0")/.."
v() { sed -n "s/^#define DPDO_$1 \([0-9][0-9]*\).*/\1/p" include/dpdo/version.h; }
abi=$(v ABI_MAJOR)
first=0.2.0
syms() {
    awk -v first="$first" '
        /^[A-Z][A-Z0-9_.]* *\{/ {
            node = $1; since = first
            if (node != "DPDO_0.1") { since = node; sub(/^DPDO_/, "", since); since = since ".0" }
            printf " %s@%s %s\n", node, node, since; next }
        /^ *dpdo_[a-z0-9_]*;$/ { s = $1; sub(/;$/, "", s); printf " %s@%s %s\n", s, node, since }
    ' "$1"
}
case "$1" in
libdpdo)
    echo "libdpdo.so.$abi libdpdo$abi #MINVER#"
    echo "* Build-Depends-Package: libdpdo-dev"
    syms lib/libdpdo.map
    ;;
libdpdo_mpi)
    echo "libdpdo_mpi.so.$abi libdpdo-mpi$abi #MINVER#"
    echo "* Build-Depends-Package: libdpdo-mpi-dev"
    syms lib/mpi/libdpdo_mpi.map
    ;;
*) echo "usage: $0 libdpdo|libdpdo_mpi" >&2; exit 2 ;;
esac
