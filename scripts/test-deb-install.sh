#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install the built packages (scripts/build-deb.sh) into a fresh chroot of this system's Debian
# release (scripts/deb-chroot.sh: debootstrap from the host's apt sources, nothing of the host
# reachable, the host's packages untouched) and use them as a user would, with no variable set:
#   - `apt-get install` of every .deb (their dependencies, recommends included, from the mirror)
#     plus gcc, man-db and mpich, as a user following the README would;
#   - build examples/quickstart.c and the installed /usr/share/doc/libdpdo/examples/train.c with
#     `pkg-config --cflags --libs dpdo` and run them (the loader finds
#     /usr/lib/<triplet>/libdpdo.so.1 by itself), build and run an MPI program with
#     `pkg-config dpdo-mpi` (mpiexec -n 2), run dpdo-privacy (TF Privacy's spellings), render
#     every installed manual page with `man -l` (no text before the title; every document
#     path a page names exists), and `import dpdo` with Debian's /usr/bin/python3 under env -i
#     (the package from /usr/lib/python3/dist-packages, the library it loads from /usr/lib), and
#     with PKG_CONFIG_PATH naming another prefix (that prefix's library must load);
#   - dpkg --purge all of them and check that no file of theirs is left.
# Needs root (debootstrap, chroot, unshare). Usage: scripts/test-deb-install.sh [DEBDIR (build/deb)]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
debs=$(cd "${1:-$top/build/deb}" && pwd)
ls "$debs"/*.deb >/dev/null
[ "$(id -u)" = 0 ] || { echo "test-deb-install: needs root (debootstrap, chroot, unshare)"; exit 1; }
. "$top/scripts/deb-chroot.sh"
tmp=$(mktemp -d /var/tmp/dpdo-debtest.XXXXXX); trap 'rm -rf "$tmp"' EXIT
dpkg -l > "$tmp/host-before"
deb_chroot_new "$tmp/root"
mkdir -p "$tmp/root/payload"
# the packages without their debug symbols (-dbgsym), as a user installs them
for d in "$debs"/*.deb; do case "$d" in *-dbgsym_*) ;; *) cp "$d" "$tmp/root/payload/" ;; esac; done
cp "$top/examples/quickstart.c" "$top/tests/install/mpi_hosts.c" "$tmp/root/payload/"
cat > "$tmp/root/payload/inside.sh" <<'EOS'
set -eu
cd /root
say() { echo "test-deb-install: $*"; }
if ls /usr/lib/*/libdpdo* /usr/lib/python3/dist-packages/dpdo >/dev/null 2>&1; then
    echo "libdpdo is already installed on this system; the test needs a system without it"; exit 1
fi
apt-get update -q > /payload/apt.log 2>&1 || { cat /payload/apt.log; exit 1; }
apt-get install -y -q /payload/*.deb gcc libc6-dev man-db mpich > /payload/apt.log 2>&1 || { tail -n 30 /payload/apt.log; exit 1; }
say "installed: $(dpkg-query -W -f='${Package} ${Version}, ' libdpdo1 libdpdo-dev libdpdo-doc libdpdo-mpi1 libdpdo-mpi-dev dpdo-tools python3-dpdo)"
cc -o qs /payload/quickstart.c $(pkg-config --cflags --libs dpdo)
./qs | tee qs.out; grep -q "^libdpdo $(pkg-config --modversion dpdo) (ABI 1)$" qs.out
ldd qs | grep 'libdpdo.so.1 => /' | tee -a qs.out | grep -q '=> /\(usr/\)\?lib/'
cc -o train /usr/share/doc/libdpdo/examples/train.c $(pkg-config --cflags --libs dpdo)
./train
mpicc -o mpiq /payload/mpi_hosts.c $(pkg-config --cflags --libs dpdo-mpi)
mpiexec -n 2 ./mpiq | sort | tee mpi.out; grep -q 'hosts \[3, 5) rc 0' mpi.out
dpdo-privacy --sampling poisson --q 0.01 --sigma 1.1 --steps 1000 --delta 1e-5 | head -n 3
dpdo-privacy --N 60000 --batch_size 256 --noise_multiplier 1.12 --epochs 60 --delta 1e-5 --method rdp \
    --conversion classic | tee tf.out
grep -q '^epsilon       2.922345' tf.out
say "man: $(man -w dpdo_algorithm_step) $(man -w dpdo-privacy) $(man -w libdpdo)"
man dpdo_algorithm_step 2>/dev/null | grep -q 'dpdo_algorithm_step'
# every installed page as `man -l` renders it: the header line first, no text before it
npages=0
for p in $(dpkg -L libdpdo-dev libdpdo-mpi-dev dpdo-tools | grep '/man/man[0-9]/'); do
    [ -f "$p" ] && [ ! -L "$p" ] || continue   # a name page is a symlink to its header's page
    first=$(MANWIDTH=100 man -l "$p" 2>/dev/null | col -bx | grep -v '^[[:space:]]*$' | head -n 1)
    echo "$first" | grep -qE '^([^ ]+\([0-9a-z]+\)) .* \1$' || { echo "man -l $p starts with: $first"; exit 1; }
    npages=$((npages + 1))
done
MANWIDTH=100 man -l "$(dpkg -L libdpdo-dev | grep '/man3/libdpdo.3')" 2>/dev/null | col -bx > libdpdo.txt
grep -q '^ *#include <stdio.h>$' libdpdo.txt && grep -q '^ *#include <dpdo/dpdo.h>$' libdpdo.txt
refs=$(zcat -f $(dpkg -L libdpdo-dev dpdo-tools | grep '/man/man[0-9]/') 2>/dev/null | grep -o '/usr/share/doc/libdpdo/[A-Za-z0-9_./-]*[A-Za-z0-9]' | sort -u)
[ -n "$refs" ] || { echo "no page names /usr/share/doc/libdpdo"; exit 1; }
for f in $refs; do [ -e "$f" ] || { echo "a manual page names $f, not installed"; exit 1; }; done
say "man: $npages pages (name links aside) render with their title first; libdpdo(3)'s example intact; $(echo $refs | wc -w) document paths named, all installed"
/usr/bin/python3 -c 'import dpdo, sys
print("python3:", dpdo.__file__, "loads", dpdo.LIBRARY_PATH, "(%s)," % dpdo.LIBRARY_SOURCE, "version", dpdo.version())
assert dpdo.__file__.startswith("/usr/lib/python3/dist-packages/dpdo/"), dpdo.__file__
assert dpdo.version() == dpdo.__version__
ds = dpdo.Dataset.generate("epsilon-like", n=400, d=5, seed=1)
print("python3: generated", ds.rows, "x", ds.features)' > py.out 2>&1 || { cat py.out; exit 1; }
cat py.out
grep -q 'loads /\(usr/\)\?lib/\|loads libdpdo.so.1' py.out
# another build in a prefix named by PKG_CONFIG_PATH wins over the installed package (here a copy
# of the packaged library with its own dpdo.pc; a newer `make install PREFIX=/opt/dpdo` alike)
mkdir -p /opt/dpdo/lib/pkgconfig
cp -L /usr/lib/*/libdpdo.so.1 /opt/dpdo/lib/
sed 's|^libdir=.*|libdir=/opt/dpdo/lib|' /usr/lib/*/pkgconfig/dpdo.pc > /opt/dpdo/lib/pkgconfig/dpdo.pc
env -i PATH=/usr/bin:/bin PKG_CONFIG_PATH=/opt/dpdo/lib/pkgconfig /usr/bin/python3 -c 'import dpdo
print("python3 with PKG_CONFIG_PATH=/opt/dpdo/lib/pkgconfig: loads", dpdo.library_path, "(%s)" % dpdo.LIBRARY_SOURCE)
assert dpdo.library_path == "/opt/dpdo/lib/libdpdo.so.1", dpdo.library_path' || exit 1
rm -rf /opt/dpdo
pkgs=$(for d in /payload/*.deb; do dpkg-deb -f "$d" Package; done)
files=$(for p in $pkgs; do dpkg -L $p; done | sort -u)
dpkg --purge $pkgs > /payload/purge.log 2>&1 || { cat /payload/purge.log; exit 1; }
left=0; for f in $files; do [ -f "$f" ] && { echo "left after purge: $f"; left=1; }; done
[ $left -eq 0 ]
say "all passed (installed, used, purged without leftovers)"
EOS
deb_chroot_run "$tmp/root" /bin/sh /payload/inside.sh
dpkg -l > "$tmp/host-after"
cmp -s "$tmp/host-before" "$tmp/host-after" || { echo "test-deb-install: the host's packages changed"; exit 1; }
