#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install into scratch locations, then build and run examples/quickstart.c
# with nothing but `pkg-config --cflags --libs dpdo`: once staged with
# DESTDIR + PREFIX=/usr (as a distribution package would), once into a plain
# PREFIX; then uninstall and check nothing is left.
set -eu
BUILD=${BUILD:-build}
top=$(pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# 1. staged install, as a packager does
make --no-print-directory -s BUILD="$BUILD" install DESTDIR="$tmp/stage" PREFIX=/usr >/dev/null
lib=$(ls -d "$tmp"/stage/usr/lib)
test -L "$lib/libdpdo.so" && test -L "$lib/libdpdo.so.1" && test -f "$lib/libdpdo.a"
test -f "$tmp/stage/usr/include/dpdo/dpdo.h" && test -f "$lib/pkgconfig/dpdo.pc"
soname=$(objdump -p "$lib/libdpdo.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libdpdo.so.$(sed -n 's/^#define DPDO_ABI_MAJOR \([0-9]*\).*/\1/p' include/dpdo/version.h)" ] || { echo "bad SONAME $soname"; exit 1; }
flags=$(PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 PKG_CONFIG_SYSROOT_DIR="$tmp/stage" PKG_CONFIG_LIBDIR="$lib/pkgconfig" pkg-config --cflags --libs dpdo)
cc -o "$tmp/qs1" "$top/examples/quickstart.c" $flags
LD_LIBRARY_PATH="$lib" "$tmp/qs1" > "$tmp/out1"
grep -q "libdpdo" "$tmp/out1"
ldd "$tmp/qs1" | grep -q "$lib/libdpdo.so.1" || LD_LIBRARY_PATH="$lib" ldd "$tmp/qs1" | grep -q "$lib/libdpdo.so.1"

# 2. plain prefix
make --no-print-directory -s BUILD="$BUILD" install PREFIX="$tmp/prefix" >/dev/null
flags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs dpdo)
cc -o "$tmp/qs2" "$top/examples/quickstart.c" $flags -Wl,-rpath,"$tmp/prefix/lib"
"$tmp/qs2" > "$tmp/out2"
# static link through pkg-config --static
flags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --static --cflags --libs dpdo)
cc -o "$tmp/qs3" "$top/examples/quickstart.c" -DDPDO_STATIC "$tmp/prefix/lib/libdpdo.a" $flags
"$tmp/qs3" > "$tmp/out3"
# the quickstart trains with secure noise (fresh keys each run): its accuracy differs between runs,
# the rest of its line (version, epsilon spent) does not
sed 's/accuracy [0-9.]*/accuracy A/' "$tmp/out2" > "$tmp/out2m"
sed 's/accuracy [0-9.]*/accuracy A/' "$tmp/out3" > "$tmp/out3m"
cmp "$tmp/out2m" "$tmp/out3m"
# a fully static program (-static) from pkg-config --static alone, with every object of libdpdo.a
# pulled in (--whole-archive), so every dependency of the library must resolve (LAPACK's BLAS
# calls, the Fortran runtime, OpenMP): skipped when the C library has no libc.a
if [ "$(cc -print-file-name=libc.a)" != libc.a ]; then
    cc -static -o "$tmp/qs5" "$top/examples/train.c" -DDPDO_STATIC \
        -Wl,--whole-archive "$tmp/prefix/lib/libdpdo.a" -Wl,--no-whole-archive $flags 2> "$tmp/static.log" ||
        { echo "install_test: cc -static with pkg-config --static --libs dpdo fails:"; grep -v 'statically linked applications' "$tmp/static.log" | head; exit 1; }
    "$tmp/qs5" > "$tmp/out5"
    grep -q "epsilon spent" "$tmp/out5"
fi
# the documents and examples the manual pages name are installed where the pages say
docdir="$tmp/prefix/share/doc/libdpdo"
test -f "$docdir/privacy.md" && test -f "$docdir/examples/train.c" && test -f "$docdir/examples/python/privacy_calculator.py"
grep -ho "$docdir/[A-Za-z0-9_./-]*[A-Za-z0-9]" "$tmp"/prefix/share/man/man*/* | sort -u > "$tmp/docrefs"
[ -s "$tmp/docrefs" ] || { echo "install_test: no page names $docdir"; exit 1; }
while read -r f; do
    [ -e "$f" ] || { echo "install_test: a manual page names $f, which is not installed"; exit 1; }
done < "$tmp/docrefs"

# 2a. the Muffliato example (a user algorithm type, docs/muffliato.md) as installed in the
# documentation directory builds with nothing but pkg-config: the public algorithm type is in the
# installed headers, and the example's own header is installed beside it
flags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs dpdo)
test -f "$docdir/examples/muffliato.h"
# (-lm: the example's own sqrt and log)
cc -o "$tmp/muff" "$docdir/examples/muffliato.c" $flags -lm -Wl,-rpath,"$tmp/prefix/lib"
"$tmp/muff" --nodes 4 --rows 20 --dim 3 --rounds 3 --seeds 1 --reproducible > "$tmp/outmuff"
grep -q "muffliato  local-DP eps" "$tmp/outmuff" && grep -q "network DP eps_{u->v}" "$tmp/outmuff"

# 2b. libdpdo_mpi through `pkg-config dpdo-mpi` (when MPI is installed)
if command -v mpicc >/dev/null 2>&1 && [ -f "$tmp/prefix/lib/pkgconfig/dpdo-mpi.pc" ]; then
    flags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs dpdo-mpi)
    mpicc -o "$tmp/mpiq" "$top/tests/install/mpi_hosts.c" $flags -Wl,-rpath,"$tmp/prefix/lib"
    LD_LIBRARY_PATH="$tmp/prefix/lib" mpiexec -n 2 "$tmp/mpiq" > "$tmp/outm"
    grep -q "hosts \[0, 3) rc 0" "$tmp/outm" && grep -q "hosts \[3, 5) rc 0" "$tmp/outm"
fi

# 2c. man pages: libdpdo(3), one page per header, a name page per function, section 1 per tool
test -f "$tmp/prefix/share/man/man3/libdpdo.3" && test -f "$tmp/prefix/share/man/man3/dpdo_algorithm.3"
grep -q '^\.so man3/dpdo_algorithm\.3' "$tmp/prefix/share/man/man3/dpdo_algorithm_step.3"
for t in "$top"/tools/*.c; do test -f "$tmp/prefix/share/man/man1/$(basename "$t" .c).1"; done
# every exported symbol in an installed page (the pages as installed, not build/man)
BUILD="$BUILD" sh "$top/scripts/check-man.sh" "$tmp/prefix/share/man" >/dev/null

# 2d. RPATH=1: a program built with pkg-config runs without LD_LIBRARY_PATH
make --no-print-directory -s BUILD="$BUILD" install PREFIX="$tmp/rp" RPATH=1 >/dev/null
flags=$(PKG_CONFIG_PATH="$tmp/rp/lib/pkgconfig" pkg-config --cflags --libs dpdo)
cc -o "$tmp/qs4" "$top/examples/quickstart.c" $flags
env -u LD_LIBRARY_PATH "$tmp/qs4" > "$tmp/out4"
ldd "$tmp/qs4" | grep -q "$tmp/rp/lib/libdpdo.so.1"
# without RPATH the install says what to do
make --no-print-directory -s BUILD="$BUILD" install PREFIX="$tmp/hint" | grep -q 'LD_LIBRARY_PATH='

# 2e. make -n install is a dry run: nothing is installed
make --no-print-directory -s BUILD="$BUILD" -n install PREFIX="$tmp/dry" >/dev/null
[ ! -e "$tmp/dry" ] || { echo "make -n install created files:"; find "$tmp/dry"; exit 1; }

# 3. uninstall leaves nothing of ours
make --no-print-directory -s BUILD="$BUILD" uninstall PREFIX="$tmp/prefix" >/dev/null
left=$(find "$tmp/prefix" -type f | wc -l)
[ "$left" -eq 0 ] || { echo "uninstall left files:"; find "$tmp/prefix" -type f; exit 1; }
echo "install test: staged and prefix installs build and run the quickstart"
