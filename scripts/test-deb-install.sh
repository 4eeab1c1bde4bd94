#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install the built packages (scripts/build-deb.sh) with dpkg into a throw-away copy of this
# system and use them as a user would, with no variable set:
#   - a private mount namespace (unshare -m) holds an overlay of / (writes go to a temp dir, the
#     real system is untouched); /work and /tmp are hidden under empty tmpfs mounts, so nothing
#     of the source or build tree is reachable; chroot into it;
#   - dpkg -i every .deb (dependencies come from the system's installed packages);
#   - build examples/quickstart.c and examples/train.c with `pkg-config --cflags --libs dpdo` and
#     run them (the loader finds /usr/lib/<triplet>/libdpdo.so.1 by itself), build and run an MPI
#     program with `pkg-config dpdo-mpi` (mpiexec -n 2), run dpdo-privacy, find `man
#     dpdo_algorithm_step` and `man dpdo-privacy`, and `import dpdo` with Debian's /usr/bin/python3
#     under env -i (the package from /usr/lib/python3/dist-packages, the library it loads from
#     /usr/lib/<triplet>);
#   - dpkg --purge all of them and check that no file of theirs is left.
# Needs root (unshare, mount, chroot). Usage: scripts/test-deb-install.sh [DEBDIR (build/deb)]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
debs=$(cd "${1:-$top/build/deb}" && pwd)
ls "$debs"/*.deb >/dev/null
[ "$(id -u)" = 0 ] || { echo "test-deb-install: needs root (mount namespace, chroot)"; exit 1; }
tmp=$(mktemp -d /var/tmp/dpdo-debtest.XXXXXX); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/upper" "$tmp/work" "$tmp/root" "$tmp/payload"
cp "$debs"/*.deb "$top/examples/quickstart.c" "$top/examples/train.c" "$top/tests/install/mpi_hosts.c" "$tmp/payload/"
cat > "$tmp/payload/inside.sh" <<'EOS'
set -eu
cd /root
say() { echo "test-deb-install: $*"; }
if ls /usr/lib/*/libdpdo* /usr/lib/python3/dist-packages/dpdo >/dev/null 2>&1; then
    echo "libdpdo is already installed on this system; the test needs a system without it"; exit 1
fi
dpkg -i /payload/*.deb > /payload/dpkg.log 2>&1 || { cat /payload/dpkg.log; exit 1; }
say "installed: $(dpkg-query -W -f='${Package} ${Version}, ' libdpdo1 libdpdo-dev libdpdo-mpi1 libdpdo-mpi-dev dpdo-tools python3-dpdo)"
cc -o qs /payload/quickstart.c $(pkg-config --cflags --libs dpdo)
./qs | tee qs.out; grep -q "^libdpdo $(pkg-config --modversion dpdo) (ABI 1)$" qs.out
ldd qs | grep 'libdpdo.so.1 => /' | tee -a qs.out | grep -q '=> /\(usr/\)\?lib/'
cc -o train /payload/train.c $(pkg-config --cflags --libs dpdo)
./train
mpicc -o mpiq /payload/mpi_hosts.c $(pkg-config --cflags --libs dpdo-mpi)
mpiexec -n 2 ./mpiq | sort | tee mpi.out; grep -q 'hosts \[3, 5) rc 0' mpi.out
dpdo-privacy --sampling poisson --q 0.01 --sigma 1.1 --steps 1000 --delta 1e-5 | head -n 3
say "man: $(man -w dpdo_algorithm_step) $(man -w dpdo-privacy) $(man -w libdpdo)"
man dpdo_algorithm_step 2>/dev/null | grep -q 'dpdo_algorithm_step'
/usr/bin/python3 -c 'import dpdo, sys
print("python3:", dpdo.__file__, "loads", dpdo.LIBRARY_PATH, "(%s)," % dpdo.LIBRARY_SOURCE, "version", dpdo.version())
assert dpdo.__file__.startswith("/usr/lib/python3/dist-packages/dpdo/"), dpdo.__file__
assert dpdo.version() == dpdo.__version__
ds = dpdo.Dataset.generate("epsilon-like", n=400, d=5, seed=1)
print("python3: generated", ds.rows, "x", ds.features)' > py.out 2>&1 || { cat py.out; exit 1; }
cat py.out
grep -q 'loads /\(usr/\)\?lib/\|loads libdpdo.so.1' py.out
pkgs=$(for d in /payload/*.deb; do dpkg-deb -f "$d" Package; done)
files=$(for p in $pkgs; do dpkg -L $p; done | sort -u)
dpkg --purge $pkgs > /payload/purge.log 2>&1 || { cat /payload/purge.log; exit 1; }
left=0; for f in $files; do [ -f "$f" ] && { echo "left after purge: $f"; left=1; }; done
[ $left -eq 0 ]
say "all passed (installed, used, purged without leftovers)"
EOS
unshare -m sh -eu -c '
    t=$1
    mount --make-rprivate /
    mount -t overlay overlay -o lowerdir=/,upperdir=$t/upper,workdir=$t/work $t/root
    mount -t tmpfs tmpfs $t/root/work
    mount -t tmpfs tmpfs $t/root/tmp
    mount --rbind /dev $t/root/dev
    mount -t proc proc $t/root/proc
    mount --rbind /sys $t/root/sys
    mkdir -p $t/root/payload
    mount --bind $t/payload $t/root/payload
    chroot $t/root /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
        /bin/sh /payload/inside.sh
' sh "$tmp"
