#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian packages libdpdo needs to build, test and run its demo.
# As root it runs apt-get itself; otherwise it prints the exact command and
# fails if anything required is missing. Installed packages are left alone,
# so on a ready machine this is a quick no-op.
set -eu
# build + run (libmpfr-dev: the exact noise samplers' MPFR fallback, lib/rng/rng_discrete.c;
# libssl-dev: OpenSSL's libcrypto, the AES-256-CTR keystream of secure noise, lib/rng/rng.c)
# python3: the manual pages are generated from the headers (scripts/gen-man.py) for make install
REQUIRED="gcc make pkg-config python3 libblis-dev liblapack-dev zlib1g-dev libsodium-dev libssl-dev libfftw3-dev libmpfr-dev"
# tests, plots, references: liblinear-tools (reference solver cross-check),
# gnuplot-nox (example plots), python3-numpy (binding tests), valgrind
# (make check-valgrind), dataset-fashion-mnist (real IDX data),
# abigail-tools (make check-abi), mpich + libmpich-dev (libdpdo_mpi and its tests),
# python3-scipy/-sklearn/-tqdm/-matplotlib (Python estimators, their checks, progress,
# plots), clang (libFuzzer harnesses, make fuzz), python3-absl/-attr/-mpmath (what
# google/differential-privacy's dp_accounting imports: bench/compare_dp_accounting.py)
# groff-base: make check-man renders every manual page. clang-format (Debian's 14):
# make format-check keeps lib/, include/ and tools/ in the .clang-format style.
OPTIONAL="liblinear-tools gnuplot-nox groff-base python3-numpy valgrind dataset-fashion-mnist abigail-tools mpich libmpich-dev python3-scipy python3-sklearn python3-tqdm python3-matplotlib clang python3-absl python3-attr python3-mpmath clang-format"
# Debian packaging on this machine (dpkg-buildpackage by hand), only with --packaging;
# scripts/build-deb.sh needs none of them: it installs them in its own chroot
PACKAGING="debhelper dh-python python3-all lintian devscripts fakeroot"
[ "${1:-}" = "--packaging" ] && OPTIONAL="$OPTIONAL $PACKAGING"

missing=""
for p in $REQUIRED $OPTIONAL; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" = 0 ]; then
    echo "install-deps: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || true
    $cmd >&2
else
    echo "install-deps: missing Debian packages:$missing" >&2
    echo "install-deps: run as root:  apt-get update && $cmd" >&2
    for p in $REQUIRED; do
        case " $missing " in *" $p "*) exit 1 ;; esac
    done
    echo "install-deps: continuing without the optional ones (their tests are skipped)" >&2
fi
