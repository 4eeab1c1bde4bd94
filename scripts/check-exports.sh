#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Prove that libdpdo.so exports exactly the dpdo_* functions that the public
# headers declare with DPDO_API and the version script lists: no internal
# dpdo__ helper, no BLIS or libc symbol, nothing missing, every symbol versioned.
# Usage: check-exports.sh LIB.so MAP [mpi]   (mpi: libdpdo_mpi and include/dpdo/mpi.h)
set -eu
so=$1; map=$2; which=${3:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}' | sed 's/@.*//' | grep -v '^DPDO_' | sort -u > "$tmp/exported"
sed -n 's/^ *\(dpdo_[a-z0-9_]*\);$/\1/p' "$map" | sort -u > "$tmp/map"
sh "$(dirname "$0")/gen-map.sh" $which | sed -n 's/^ *\(dpdo_[a-z0-9_]*\);$/\1/p' | sort -u > "$tmp/headers"
fail=0
if grep -v '^dpdo_[a-z0-9]' "$tmp/exported" > "$tmp/bad"; then
    echo "check-exports: symbols outside dpdo_ exported:"; cat "$tmp/bad"; fail=1
fi
if grep '^dpdo__' "$tmp/exported" > "$tmp/bad"; then
    echo "check-exports: internal dpdo__ symbols exported:"; cat "$tmp/bad"; fail=1
fi
if ! cmp -s "$tmp/map" "$tmp/headers"; then
    echo "check-exports: $map differs from the headers (run 'make map'):"; diff "$tmp/map" "$tmp/headers" || true; fail=1
fi
if ! cmp -s "$tmp/exported" "$tmp/map"; then
    echo "check-exports: exported symbols differ from $map (< exported, > map):"; diff "$tmp/exported" "$tmp/map" || true; fail=1
fi
if nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}' | grep -v '^DPDO_' | grep -v '@' > "$tmp/bad"; then
    echo "check-exports: unversioned symbols in $so:"; cat "$tmp/bad"; fail=1
fi
# no C library function that keeps global state (lgamma writes signgam; rand, strtok, localtime and
# the rest keep a hidden state shared by all threads), and none that ends the process
nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u > "$tmp/imported"
if grep -E -x 'lgamma|lgammaf|lgammal|gamma|gammaf|rand|srand|random|srandom|drand48|lrand48|strtok|localtime|gmtime|ctime|asctime|setlocale|exit|_exit|abort' \
        "$tmp/imported" > "$tmp/bad"; then
    echo "check-exports: $so calls C library functions with global state or that end the process:"; cat "$tmp/bad"; fail=1
fi
# public names are for DPDO_API functions only: a static function in lib/ named dpdo_<x> (one
# underscore) reads like public API in a debugger or a grep; statics take a local prefix
root="$(dirname "$0")/.."
if grep -rnE '^static[^(=;]*[ *]dpdo_[a-z0-9][a-z0-9_]*\(' "$root/lib" > "$tmp/bad"; then
    echo "check-exports: static functions in lib/ named like public API (dpdo_*):"; cat "$tmp/bad"; fail=1
fi
n=$(wc -l < "$tmp/exported")
if [ $fail -eq 0 ]; then echo "check-exports: $(basename "$so"): $n dpdo_* symbols, all declared and versioned"; fi
exit $fail
