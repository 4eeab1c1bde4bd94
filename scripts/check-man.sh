#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Check the generated manual pages (scripts/gen-man.py) in MANDIR_BUILD (build/man):
# 1. every page renders with `groff -ww -man -Tutf8` without a single warning;
# 2. every `.so` link page points at a page that exists;
# 3. every exported symbol (the version script lib/libdpdo.map, the DPDO_API functions of
#    include/dpdo/mpi.h, libdpdo_mpi's exports, and what the built libraries in $BUILD/lib
#    actually export, `nm -D`) appears in the rendered text of a page and has its own name page
#    (so `man SYMBOL` works);
# 4. every installed tool (tools/*.c) has a section-1 page.
set -eu
dir=${1:-build/man}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0; npages=0; nlinks=0
for p in "$dir"/man1/*.1 "$dir"/man3/*.3; do
    if head -n 1 "$p" | grep -q '^\.so '; then
        t=$(sed -n 's/^\.so //p' "$p")
        [ -f "$dir/$t" ] || { echo "check-man: $p links to missing $t"; fail=1; }
        nlinks=$((nlinks + 1)); continue
    fi
    # LC_ALL: groff's utf8 output must not depend on the caller's locale
    if ! LC_ALL=C.UTF-8 groff -ww -man -Tutf8 -P-cbou "$p" > "$tmp/$(basename "$p").txt" 2> "$tmp/err"; then
        echo "check-man: groff failed on $p"; cat "$tmp/err"; fail=1
    fi
    if [ -s "$tmp/err" ]; then echo "check-man: warnings rendering $p:"; head -n 10 "$tmp/err"; fail=1; fi
    npages=$((npages + 1))
done
cat "$tmp"/*.txt > "$tmp/all"
{ sed -n 's/^ *\(dpdo_[a-z0-9_]*\);$/\1/p' lib/libdpdo.map
  tr '\n' ' ' < include/dpdo/mpi.h | sed 's/;/;\n/g' | grep 'DPDO_API' |
      sed -n 's/.*[ *]\(dpdo_[a-z0-9_]*\)[ ]*(.*/\1/p'
  for l in "${BUILD:-build}"/lib/libdpdo.so "${BUILD:-build}"/lib/libdpdo_mpi.so; do
      [ -f "$l" ] && nm -D --defined-only "$l" | awk '$2 == "T" || $2 == "D" || $2 == "R" {print $3}' |
          sed 's/@.*//'
  done; } | sort -u > "$tmp/syms"
nsyms=0
while read -r s; do
    nsyms=$((nsyms + 1))
    grep -qw "$s" "$tmp/all" || { echo "check-man: $s is exported but in no manual page"; fail=1; }
    [ -f "$dir/man3/$s.3" ] || { echo "check-man: no page man3/$s.3 (man $s would fail)"; fail=1; }
done < "$tmp/syms"
for t in tools/*.c; do
    n=$(basename "$t" .c)
    [ -f "$dir/man1/$n.1" ] || { echo "check-man: tool $n has no man1/$n.1"; fail=1; }
done
[ $fail -eq 0 ] && echo "check-man: $npages pages render without warnings, $nlinks name links; all $nsyms exported symbols documented"
exit $fail
