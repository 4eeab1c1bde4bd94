#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Check the generated manual pages (scripts/gen-man.py) in MANDIR_BUILD (build/man):
# 1. every page renders with `groff -ww -man -Tutf8` without a single warning;
# 2. every `.so` link page points at a page that exists;
# 3. every exported symbol (the version script lib/libdpdo.map, the DPDO_API functions of
#    include/dpdo/mpi.h, libdpdo_mpi's exports, and what the built libraries in $BUILD/lib
#    actually export, `nm -D`) appears in the rendered text of a page and has its own name page
#    (so `man SYMBOL` works);
# 4. every installed tool (tools/*.c) has a section-1 page;
# 5. no page has text before its .TH (the source: only comments and blank lines above it; the
#    rendering, with `man -l` where man-db is installed and groff otherwise: the first line is the
#    page's header, TITLE(SECTION) ... TITLE(SECTION));
# 6. libdpdo(3)'s EXAMPLE renders examples/train.c line for line (nothing refilled or lost).
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
    first=$(grep -v -e '^\.\\"' -e '^[[:space:]]*$' "$p" | head -n 1)
    case "$first" in
        .TH\ *) ;;
        *) echo "check-man: $p has text before .TH: $first"; fail=1 ;;
    esac
    if command -v man >/dev/null 2>&1; then
        LC_ALL=C.UTF-8 MANWIDTH=100 MAN_KEEP_FORMATTING= man -l "$p" 2>/dev/null | col -bx > "$tmp/man.txt" || true
    else
        cp "$tmp/$(basename "$p").txt" "$tmp/man.txt"
    fi
    head1=$(grep -v '^[[:space:]]*$' "$tmp/man.txt" | head -n 1)
    # the header line: TITLE(SECTION), the manual's name, TITLE(SECTION) again
    if ! echo "$head1" | grep -qE '^([^ ]+\([0-9a-z]+\)) .* \1$'; then
        echo "check-man: $p renders \"$head1\" before its header line"; fail=1
    fi
    if [ "$(basename "$p")" = libdpdo.3 ]; then
        # every line of the example, as the page shows it (leading blanks aside), in order
        grep -v 'SPDX-License-Identifier' examples/train.c | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' |
            grep -v '^$' > "$tmp/ex.want"
        sed -n '/^EXAMPLE/,/^ENVIRONMENT/p' "$tmp/man.txt" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' |
            grep -v '^$' > "$tmp/ex.have"
        if ! grep -qxF -f "$tmp/ex.want" "$tmp/ex.have" ||
            [ "$(grep -cxF -f "$tmp/ex.have" "$tmp/ex.want")" -ne "$(wc -l < "$tmp/ex.want")" ]; then
            echo "check-man: $p: the EXAMPLE section does not show examples/train.c line for line:"
            grep -vxF -f "$tmp/ex.have" "$tmp/ex.want" | head -n 5 | sed 's/^/  missing: /'
            fail=1
        fi
    fi
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
