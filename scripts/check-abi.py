#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ABI gate against the committed baseline (docs/abi.md, "ABI policy").

    check-abi.py BASELINE.abi LIB.so "ABIDW FLAGS"   abidiff the baseline against an abidw dump of LIB
    check-abi.py --constants-dump     print "NAME VALUE" for every enumerator of the public headers
    check-abi.py --constants BASE.txt compare the public constants with the committed list

abidiff (--no-added-syms, leaf changes) exits 0 when nothing but additions changed. Otherwise its
report is parsed and the change is accepted only if every changed type is
  - a public struct whose first member is `struct_size` (options, type and result structs; they
    grow at their end) that only grew: "type size changed" to a larger size plus data member
    insertions at offsets at or after the old end; or
  - an enum that only gained enumerators.
Anything else (a removed or changed function, a member moved, resized, retyped or deleted, an
enumerator value changed or removed, a struct that shrank) fails with abidiff's report.
The anonymous enums (most constants: status codes, parameter ids) are in no function's type,
so libabigail does not see them: --constants compares their values with abi/constants.txt
(compiled, so expressions are evaluated as the compiler does): a removed or renumbered constant
fails, a new one passes.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INC = os.path.join(TOP, "include", "dpdo")


def growable_structs():
    """Public structs whose first member is struct_size (they may grow at their end)."""
    names = set()
    for h in glob.glob(os.path.join(INC, "*.h")):
        text = re.sub(r"/\*.*?\*/", "", open(h, encoding="utf-8").read(), flags=re.S)
        for m in re.finditer(r"struct\s+(dpdo_[a-z0-9_]+)\s*\{\s*size_t\s+struct_size\s*;", text):
            names.add(m.group(1))
    return names


def check_report(report, growable_set):
    """[problems] for the leaf-change report of abidiff."""
    problems = []
    blocks, cur = [], None
    for ln in report.split("\n"):
        if not ln.strip():
            continue
        if ln.startswith("'") and ln.rstrip().endswith("changed:"):
            cur = [ln]
            blocks.append(cur)
        elif ln.startswith(" ") and cur is not None:
            cur.append(ln)
        else:
            cur = None
            if re.match(r"^(Leaf changes summary|Changed leaf types summary|Removed/Changed/Added "
                        r"(functions|variables) summary|(Variable|Function) symbols changes summary: "
                        r"0 Removed)", ln):
                continue
            problems.append(ln)
    for b in blocks:
        head = b[0]
        m = re.match(r"^'(struct|enum|union|typedef|class)\s+([A-Za-z0-9_:]+)", head)
        kind, name = (m.group(1), m.group(2)) if m else ("?", head)
        old_size = None
        ok = True
        in_impacted = in_members = False
        inserted, reserved_changed = [], False
        growable = kind == "struct" and name in growable_set
        for ln in b[1:]:
            s = ln.strip()
            if growable and s == "there are data member changes:":
                in_members = True
                continue
            if in_members and len(ln) - len(ln.lstrip()) > 2:
                # a reserved word may be consumed (renamed, shortened, moved); any other member may not
                mm = re.search(r"'[^']*::(\w+)'", s) or re.match(r"^'[^']*?(\w+)' offset changed", s)
                if mm and not mm.group(1).startswith("reserved"):
                    ok = False
                elif mm:
                    reserved_changed = True
                continue
            in_members = False
            if re.match(r"^(\d+|one) impacted interfaces?:?$", s):
                in_impacted = True
                continue
            if in_impacted and re.match(r"^(function|variable) ", s):
                continue
            in_impacted = False
            sm = re.match(r"^type size changed from (\d+) to (\d+) \(in bits\)$", s)
            if sm and growable and int(sm.group(2)) > int(sm.group(1)):
                old_size = int(sm.group(1))
                continue
            if s == "type size hasn't changed" and (kind == "enum" or growable):
                continue
            if re.match(r"^(\d+|one) data member insertions?:$", s) and growable:
                continue
            im = re.match(r"^'.*', at offset (\d+) \(in bits\)", s)
            if im and growable:
                inserted.append(int(im.group(1)))
                continue
            if kind == "enum" and (re.match(r"^(\d+|one) enumerator insertions?:$", s) or
                                   re.match(r"^'[A-Za-z0-9_:]+' value '-?\d+'", s)):
                continue
            ok = False
        # a member inserted before the old end is compatible only when it took the place of a
        # reserved word (then no other member moved: any move fails above) or the struct kept its size
        if inserted and old_size is not None and min(inserted) < old_size and not reserved_changed:
            ok = False
        if not ok:
            problems.append("incompatible change of %s %s" % (kind, name))
    return problems


def abi_check(baseline, lib, abidw_flags):
    # Both sides are abidw dumps made with the same flags (public types only), so that types are
    # judged alike: `abidiff --headers-dir2 DIR baseline lib` would call every type of a dump made
    # without locations private and filter its changes out (a field inserted into an options
    # struct passed unnoticed that way).
    with tempfile.TemporaryDirectory() as tmp:
        new = os.path.join(tmp, os.path.basename(lib) + ".abi")
        subprocess.run(["abidw"] + abidw_flags.split() + ["--out-file", new, lib], check=True)
        cmd = ["abidiff", "--no-added-syms", "--leaf-changes-only", "--impacted-interfaces", baseline, new]
        r = subprocess.run(cmd, capture_output=True, text=True)
    name = os.path.basename(lib)
    if r.returncode == 0:
        print("check-abi: %s is compatible with %s (additions only)" % (name, os.path.relpath(baseline, TOP)))
        return 0
    if r.returncode & 3:
        print("check-abi: abidiff failed (exit %d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
        return 1
    problems = ["abidiff exit %d: incompatible change (removed or changed symbol)" % r.returncode] \
        if r.returncode & 8 else check_report(r.stdout, growable_structs())
    if not problems:
        print("check-abi: %s is compatible with %s (options structs grew at their end)" %
              (name, os.path.relpath(baseline, TOP)))
        return 0
    print("check-abi: %s BREAKS the ABI of %s:" % (name, os.path.relpath(baseline, TOP)))
    for p in problems:
        print("  " + p)
    print("abidiff report:\n" + r.stdout)
    return 1


def enumerators():
    names = []
    for h in sorted(glob.glob(os.path.join(INC, "*.h"))):
        if os.path.basename(h) == "mpi.h":
            continue
        text = re.sub(r"/\*.*?\*/", "", open(h, encoding="utf-8").read(), flags=re.S)
        for m in re.finditer(r"\benum\b[^{;]*\{(.*?)\}", text, flags=re.S):
            for item in m.group(1).split(","):
                im = re.match(r"\s*([A-Z][A-Z0-9_]*)", item)
                if im:
                    names.append(im.group(1))
    return names


def constants_dump():
    names = enumerators()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "c.c")
        with open(src, "w") as f:
            f.write("#include <stdio.h>\n#include <dpdo/dpdo.h>\nint main(void)\n{\n")
            for n in names:
                f.write('    printf("%%s %%lld\\n", "%s", (long long)%s);\n' % (n, n))
            f.write("    return 0;\n}\n")
        exe = os.path.join(tmp, "c")
        subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-I" + os.path.join(TOP, "include"), "-DDPDO_STATIC",
                        src, "-o", exe], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return "".join(sorted(set(out.splitlines(True))))


def constants_check(base):
    old = dict(ln.split() for ln in open(base, encoding="utf-8") if ln.strip() and not ln.startswith("#"))
    new = dict(ln.split() for ln in constants_dump().splitlines() if ln.strip())
    bad = ["%s: %s in the baseline, %s now" % (k, v, new.get(k, "removed")) for k, v in sorted(old.items())
           if new.get(k) != v]
    if bad:
        print("check-abi: public constants changed (values are pinned; docs/abi.md):")
        for b in bad:
            print("  " + b)
        return 1
    print("check-abi: %d public constants as in %s (%d new)" % (len(old), os.path.relpath(base, TOP),
                                                               len(set(new) - set(old))))
    return 0


def main():
    a = sys.argv[1:]
    if a[:1] == ["--constants-dump"]:
        sys.stdout.write("# enumerator values of the public headers (scripts/check-abi.py --constants-dump)\n")
        sys.stdout.write(constants_dump())
        return 0
    if a[:1] == ["--constants"] and len(a) == 2:
        return constants_check(a[1])
    if len(a) == 3:
        return abi_check(a[0], a[1], a[2])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
