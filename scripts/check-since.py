#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-since: every public declaration (DPDO_API) in include/dpdo/*.h carries
"Since M.m." in its doc block, written exactly that way.

The doc block of a declaration is its own lines (a trailing comment
included) and the one comment directly above it; declarations written
directly below one another with no comment between form a group that shares
the comment above the group (e.g. a getter/setter pair). In a doc block every "since"/"Since" followed
by a version must read "Since M.m." (capital S, two numbers, a period): not
"since 0.2", "Since 0.1 (...)" or "Since 0.1,". Prints every offender as
file:line: name: problem and exits 1 if there is one.
Usage: scripts/check-since.py [header ...]   (default include/dpdo/*.h)
       scripts/check-since.py --since header ...   (print "name M.m" per declaration)"""
import glob
import os
import re
import sys

GOOD = re.compile(r"Since [0-9]+\.[0-9]+\.")
ANY = re.compile(r"[Ss]ince\s+[0-9]+(\.[0-9]+)?[^\s]?")
BAD = re.compile(r"(since\s+[0-9])|(Since\s+[0-9]+\.[0-9]+(?!\.))|(Since\s+[0-9]+(?![.0-9]))")


def decl_name(lines, i):
    text = " ".join(lines[i:i + 4])
    m = re.search(r"\b(dpdo_\w+)\s*\(", text)
    return m.group(1) if m else "?"


def doc_blocks(path):
    """Yield (line index, name, doc block text) for every DPDO_API declaration of a header."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if not re.match(r"\s*DPDO_API\b", line):
            continue
        # the declaration itself: up to the line ending with ';'
        j = i
        while j < len(lines) - 1 and ";" not in lines[j]:
            j += 1
        block = lines[i:j + 1]
        # upward: the declarations written directly above it with no comment line between (a
        # group; their trailing comments count), then the one comment directly above the group
        k = i - 1
        while k >= 0 and lines[k].strip() and \
                not lines[k].strip().startswith(("/*", "*", "#", "}", "typedef", "enum")):
            block.insert(0, lines[k])
            k -= 1
        if k >= 0 and lines[k].rstrip().endswith("*/"):
            m = k
            while m >= 0 and "/*" not in lines[m]:
                m -= 1
            block = lines[m:k + 1] + block
        yield i, decl_name(lines, i), "\n".join(block)


def since_of(text):
    """The release of a doc block: the first "Since M.m." in it (later additions to a function
    say "Cancel: Since 0.2." after the function's own, so the first one is the function's)."""
    m = GOOD.search(text)
    return m.group(0)[6:-1] if m else None


def check(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    bad = []
    for i, name, text in doc_blocks(path):
        where = "%s:%d: %s" % (os.path.relpath(path), i + 1, name)
        if not GOOD.search(text):
            bad.append(where + ': no "Since M.m." in its doc block')
        for m in BAD.finditer(text):
            bad.append(where + ': "%s" is not written "Since M.m."' % m.group(0).strip())
    # everywhere else in the header (struct fields, section comments): the same spelling
    for i, line in enumerate(lines):
        for m in BAD.finditer(line):
            where = "%s:%d" % (os.path.relpath(path), i + 1)
            msg = where + ': "%s" is not written "Since M.m."' % m.group(0).strip()
            if not any(b.startswith(where.rsplit(":", 1)[0]) and m.group(0).strip() in b for b in bad):
                bad.append(msg)
    return bad


def main(argv):
    if argv[1:2] == ["--since"]:
        # "name M.m" for every declaration: scripts/gen-map.sh puts each symbol in the version
        # node of the release that added it
        for p in argv[2:]:
            for _, name, text in doc_blocks(p):
                print(name, since_of(text) or "?")
        return 0
    paths = argv[1:] or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "include", "dpdo", "*.h")))
    bad = []
    n = 0
    for p in paths:
        n += sum(1 for l in open(p, encoding="utf-8") if re.match(r"\s*DPDO_API\b", l))
        bad += check(p)
    for b in bad:
        print(b)
    print("check-since: %d public declarations, %d problem(s)" % (n, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
