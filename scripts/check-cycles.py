#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""List the file-level cycles of lib/ (issue 22); exit 1 when one is not on the allow-list.

The graph has one vertex per file of lib/ and two kinds of edges:
  call     a.c -> b.c when a.o refers to a global symbol that b.o defines (nm of the library's
           objects in $BUILD/rel, so function pointers in tables are not calls but taking a
           function's or a table's address is);
  include  x -> y.h when x has #include "y.h" resolving to a file of lib/.
Every strongly connected component with more than one file is a cycle: the files in it cannot
be understood, tested or layered one after the other. Each is printed with the edges inside it
(a few of the symbols behind each call edge), then "N files, M edges, K cycles (A allowed)".

Usage: check-cycles.py [BUILD]   (BUILD defaults to $BUILD or "build"; run `make lib` first)
"""
import os
import re
import subprocess
import sys

# Cycles that stay, each with the reason. A key is the exact set of files of the component: a
# component that grows or shrinks is reported again and must be looked at.
ALLOW = {
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "lib")


def lib_files():
    out = []
    for d, _, names in os.walk(LIB):
        for n in names:
            if n.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, n), ROOT))
    return sorted(out)


INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_edges(files):
    known = set(files)
    edges = {}
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fp:
            text = fp.read()
        for inc in INC.findall(text):
            for base in (os.path.dirname(f), "lib"):  # the file's directory, then -Ilib
                cand = os.path.normpath(os.path.join(base, inc))
                if cand in known:
                    if cand != f:
                        edges.setdefault((f, cand), set()).add("#include")
                    break
    return edges


def nm(obj, *flags):
    res = subprocess.run(["nm", *flags, obj], capture_output=True, text=True, check=True)
    return res.stdout.splitlines()


def call_edges(build, files):
    objdir = os.path.join(ROOT, build, "rel")
    defs, undefs = {}, {}
    srcs = [f for f in files if f.endswith(".c")]
    missing = []
    for f in srcs:
        obj = os.path.join(objdir, os.path.relpath(f, "lib")[:-2] + ".o")
        if f == os.path.join("lib", "mpi", "mpi.c"):
            obj = os.path.join(ROOT, build, "mpi", "mpi.o")  # its own library; built when mpicc exists
            if not os.path.exists(obj):
                continue
        if not os.path.exists(obj):
            missing.append(obj)
            continue
        for line in nm(obj, "--defined-only"):
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRVWGSC" and parts[1].isupper():
                defs.setdefault(parts[2], f)
        undefs[f] = [line.split()[-1] for line in nm(obj, "-u") if line.strip()]
    if missing:
        sys.exit("check-cycles: missing objects (run `make lib` first): " + " ".join(missing[:5]))
    edges = {}
    for f, syms in undefs.items():
        for s in syms:
            g = defs.get(s)
            if g and g != f:
                edges.setdefault((f, g), set()).add(s)
    return edges


def sccs(nodes, adj):
    """Tarjan's algorithm, iterative."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(adj.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(adj.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BUILD", "build")
    files = lib_files()
    edges = include_edges(files)
    for k, v in call_edges(build, files).items():
        edges.setdefault(k, set()).update(v)
    adj = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
    comps = [c for c in sccs(files, adj) if len(c) > 1]
    bad = 0
    for c in comps:
        reason = ALLOW.get(frozenset(c))
        print("cycle%s: %s" % (" (allowed: %s)" % reason if reason else "", " ".join(c)))
        inside = set(c)
        for (a, b), why in sorted(edges.items()):
            if a in inside and b in inside:
                syms = sorted(why)
                more = " ..." if len(syms) > 4 else ""
                print("    %s -> %s: %s%s" % (a, b, ", ".join(syms[:4]), more))
        bad += reason is None
    stale = [k for k in ALLOW if list(sorted(k)) not in comps]
    for k in stale:
        print("check-cycles: allow-list entry no longer a cycle (remove it): %s" % " ".join(sorted(k)))
    print("check-cycles: %d files, %d edges, %d cycles (%d allowed)" % (len(files), len(edges), len(comps),
                                                                        len(comps) - bad))
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
