#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Build a real, sparse, binary text-classification data set offline: the rcv1 stand-in.

Source: the Debian package lists that `apt-get update` leaves in /var/lib/apt/lists (every
machine that installed libdpdo's dependencies has them). Each binary package of the main
archive is one example:

  features  TF-IDF of the words of its one-line Description (lower case, [a-z0-9+]+, two
            characters or more, a small English stop list removed, words in at least
            --min-df packages), each row scaled to unit L2 norm (like rcv1, whose rows are
            unit-norm TF-IDF vectors);
  label     +1 when the package's Section is a programming-language ecosystem (python, perl,
            haskell, rust, golang, javascript, java, ruby, gnu-r, php, ocaml, lisp, cli-mono),
            -1 otherwise (libs, doc, utils, net, games, ...).

Rows are sorted by package name, so the same lists give the same file byte for byte. The
script records what it read in a sidecar FILE.meta (the lists' Date, their SHA-256, counts),
because the archive moves: a later `apt-get update` gives a slightly different data set.

Usage:  scripts/make-debian-text.py OUT.svm [--lists DIR] [--min-df N]
        (docs/data.md, "Real data offline")
"""
import argparse
import glob
import hashlib
import math
import os
import re
import subprocess
import sys

ECOSYSTEMS = {"python", "perl", "haskell", "rust", "golang", "javascript", "java", "ruby",
              "gnu-r", "php", "ocaml", "lisp", "cli-mono"}
STOP = set("a an and are as at be by for from in into is it its of on or the to with without "
           "this that these those via using use used based your you can".split())
WORD = re.compile(r"[a-z0-9+]+")


def read_lists(lists_dir):
    """The main archive's Packages file (any compression apt left), decompressed by apt itself."""
    cands = sorted(glob.glob(os.path.join(lists_dir, "*_dists_*_main_binary-*_Packages*")))
    cands = [c for c in cands if "-updates_" not in c and "-security_" not in c]
    if not cands:
        sys.exit("make-debian-text: no *_main_binary-*_Packages* under %s (run apt-get update)" % lists_dir)
    path = cands[0]
    helper = "/usr/lib/apt/apt-helper"
    if os.path.exists(helper):
        data = subprocess.run([helper, "cat-file", path], check=True, capture_output=True).stdout
    else:
        with open(path, "rb") as f:
            data = f.read()
    raw = open(path, "rb").read()
    date = ""
    rel = glob.glob(path.split("_main_binary")[0] + "_InRelease")
    if rel:
        for line in open(rel[0], encoding="utf-8", errors="replace"):
            if line.startswith("Date:"):
                date = line[5:].strip()
                break
    return path, hashlib.sha256(raw).hexdigest(), date, data.decode("utf-8", errors="replace")


def parse(text):
    pkgs = {}
    for stanza in text.split("\n\n"):
        name = desc = sec = None
        for line in stanza.split("\n"):
            if line.startswith("Package: "):
                name = line[9:].strip()
            elif line.startswith("Description: "):
                desc = line[13:].strip()
            elif line.startswith("Section: "):
                sec = line[9:].strip().split("/")[-1]
        if name and desc and sec and name not in pkgs:
            pkgs[name] = (desc, sec)
    return [(n,) + pkgs[n] for n in sorted(pkgs)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--lists", default="/var/lib/apt/lists")
    ap.add_argument("--min-df", type=int, default=2)
    a = ap.parse_args()
    path, sha, date, text = read_lists(a.lists)
    rows = parse(text)
    docs = []
    df = {}
    for _, desc, _ in rows:
        toks = [w for w in WORD.findall(desc.lower()) if len(w) >= 2 and w not in STOP]
        tf = {}
        for w in toks:
            tf[w] = tf.get(w, 0) + 1
        docs.append(tf)
        for w in tf:
            df[w] = df.get(w, 0) + 1
    vocab = sorted(w for w, c in df.items() if c >= a.min_df)
    index = {w: i + 1 for i, w in enumerate(vocab)}
    n = len(rows)
    pos = nnz = kept = 0
    with open(a.out, "w") as f:
        for (name, _, sec), tf in zip(rows, docs):
            feats = {index[w]: (1 + math.log(c)) * math.log(n / df[w]) for w, c in tf.items() if w in index}
            norm = math.sqrt(sum(v * v for v in feats.values()))
            if norm == 0:
                continue  # no word survives: nothing to learn from
            y = 1 if sec in ECOSYSTEMS else -1
            pos += y > 0
            kept += 1
            nnz += len(feats)
            f.write("%+d %s\n" % (y, " ".join("%d:%.9g" % (k, feats[k] / norm) for k in sorted(feats))))
    meta = {"source": os.path.basename(path), "sha256": sha, "date": date, "packages": n,
            "rows": kept, "features": len(vocab), "nonzeros": nnz, "positive": pos,
            "density": nnz / max(1, kept * len(vocab)), "min_df": a.min_df}
    with open(a.out + ".meta", "w") as f:
        for k, v in meta.items():
            f.write("%s: %s\n" % (k, v))
    print("make-debian-text: %d rows x %d features, %d non-zeros (density %.4g%%), %d positive; "
          "lists of %s, sha256 %s..." % (kept, len(vocab), nnz, 100 * meta["density"], pos, date, sha[:16]))


if __name__ == "__main__":
    main()
