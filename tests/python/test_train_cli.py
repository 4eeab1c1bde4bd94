#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpdo-train + dpdo-predict round trip on LIBSVM files, against outside references.

* scikit-learn's breast cancer data (569 rows, 30 features), 5 stratified 70/30 splits (seeds
  0..4), features standardised with the training split's statistics and scaled so that the
  largest training row has norm 1, written as LIBSVM; dpdo-train (DP-DDA, 4 nodes, the library's
  plan) then dpdo-predict on the test split, against scikit-learn's LogisticRegression (default
  C = 1, no intercept: the same model class as dpdo-train's) on the same split. Margins, fixed
  before measuring: without noise (--epsilon inf) the mean test accuracy is within 0.03 of
  scikit-learn's; at epsilon = 1 (delta = 1e-5) within 0.10, and above the majority-class rate
  (0.63) by 0.15. Measured (this file's commands, 2026-12): no noise 0.9357 against 0.9439 (gap
  0.008 +- 0.002 s.e.), epsilon = 1 0.8982 (gap 0.046 +- 0.014).
* LIBLINEAR's own `predict` (liblinear-tools) reads the model dpdo-train exports with
  --export-liblinear and gives the same label as dpdo-predict for every test row, binary and
  one-vs-rest (iris, 3 classes).
* the --json summary: the privacy record (epsilon <= target, nodes, classes, composition).
Skipped with a message when scikit-learn or liblinear-predict is missing.
Prints TAP and "# summary: N passed, M failed"."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from _tap import REPO, case, summary

BIN = os.path.join(REPO, os.environ.get("BUILD", "build"), "bin")
TRAIN, PREDICT = os.path.join(BIN, "dpdo-train"), os.path.join(BIN, "dpdo-predict")
TMP = tempfile.mkdtemp(prefix="dpdo-train-test-")
SEEDS = range(5)

try:
    import numpy as np
    from sklearn.datasets import dump_svmlight_file, load_breast_cancer, load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    HAVE_SKLEARN = True
except ImportError:
    HAVE_SKLEARN = False


def split(X, y, seed):
    """70/30 stratified split, standardised and scaled by the training split only; LIBSVM files."""
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1.0
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    r = np.linalg.norm(Xtr, axis=1).max()
    Xtr, Xte = Xtr / r, Xte / r
    tr, te = os.path.join(TMP, "tr%d.svm" % seed), os.path.join(TMP, "te%d.svm" % seed)
    dump_svmlight_file(Xtr, ytr, tr, zero_based=False)
    dump_svmlight_file(Xte, yte, te, zero_based=False)
    return Xtr, Xte, ytr, yte, tr, te


def train(data, model, *extra):
    res = subprocess.run([TRAIN, "--data", data, "--model", model, "--quiet", "--json"] + list(extra),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def predict(model, data):
    """(labels printed by dpdo-predict, accuracy from its summary or None)"""
    res = subprocess.run([PREDICT, "--model", model, "--data", data], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    m = re.search(r"^accuracy ([0-9.]+)", res.stderr, re.M)
    return [float(v) for v in res.stdout.split()], (float(m.group(1)) if m else None)


def accuracies(eps):
    X, y = load_breast_cancer(return_X_y=True)
    y = 2 * y - 1
    ours, ref = [], []
    for s in SEEDS:
        Xtr, Xte, ytr, yte, tr, te = split(X, y, s)
        model = os.path.join(TMP, "bc%d.model" % s)
        info = train(tr, model, "--epsilon", eps, "--seed", str(s), "--reproducible")
        if eps != "inf":
            assert info["epsilon"] <= float(eps) * (1 + 1e-9), info
            assert info["nodes"] == 4 and info["algorithm"] == "dp-dda", info
        _, acc = predict(model, te)
        ours.append(acc)
        ref.append(LogisticRegression(fit_intercept=False).fit(Xtr, ytr).score(Xte, yte))
    ours, ref = np.array(ours), np.array(ref)
    gap = ref - ours
    print("# epsilon %s: dpdo-train %.4f, scikit-learn %.4f, gap %.4f +- %.4f (s.e., %d seeds)"
          % (eps, ours.mean(), ref.mean(), gap.mean(), gap.std(ddof=1) / np.sqrt(len(gap)), len(gap)))
    return ours.mean(), ref.mean()


def test_nonprivate_matches_sklearn():
    ours, ref = accuracies("inf")
    assert ref - ours <= 0.03, (ours, ref)


def test_private_within_margin():
    ours, ref = accuracies("1")
    assert ref - ours <= 0.10, (ours, ref)
    assert ours >= 0.63 + 0.15, ours  # well above predicting the majority class


def liblinear_agrees(X, y, tag, eps):
    Xtr, Xte, ytr, yte, tr, te = split(X, y, 0)
    model, ll = os.path.join(TMP, tag + ".model"), os.path.join(TMP, tag + ".liblinear")
    info = train(tr, model, "--epsilon", eps, "--seed", "1", "--reproducible", "--export-liblinear", ll)
    ours, _ = predict(model, te)
    out = os.path.join(TMP, tag + ".ll.out")
    res = subprocess.run(["liblinear-predict", te, ll, out], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    theirs = [float(v) for v in open(out).read().split()]
    assert len(theirs) == len(ours) == len(yte)
    diff = sum(a != b for a, b in zip(ours, theirs))
    assert diff == 0, "%d of %d labels differ" % (diff, len(ours))
    return info


def test_liblinear_predict_reads_the_export():
    if not shutil.which("liblinear-predict"):
        print("# SKIP: liblinear-predict missing (apt-get install liblinear-tools)")
        return
    X, y = load_breast_cancer(return_X_y=True)
    info = liblinear_agrees(X, 2 * y - 1, "bc", "1")
    assert info["classes"] == 2 and info["composition"] == "none", info
    X, y = load_iris(return_X_y=True)
    info = liblinear_agrees(X, y, "iris", "3")
    # one-vs-rest: 3 runs at (1, delta/3) each, the sum recorded
    assert info["classes"] == 3 and info["composition"] == "basic", info
    assert 0 < info["epsilon"] <= 3 * (1 + 1e-9), info
    assert abs(info["delta"] - info["target_delta"]) <= 1e-12, info


def test_bad_command_lines():
    for args, needle in ((["--model", "x"], "--data FILE is required"),
                         (["--data", "x", "--model", "y", "--algorithm", "nope"], "not an algorithm"),
                         (["--data", "x", "--model", "y", "--epsilon", "-1"], "--epsilon"),
                         (["--data", "x", "--model", "y", "--bogus"], "unknown option")):
        res = subprocess.run([TRAIN] + args, capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and needle in res.stderr, (args, res.returncode, res.stderr)
    res = subprocess.run([TRAIN, "--data", os.path.join(TMP, "missing.svm"), "--model", "y"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "missing.svm" in res.stderr, res.stderr


if not HAVE_SKLEARN:
    print("# SKIP: scikit-learn is missing (apt-get install python3-sklearn): no reference to compare")
    case(test_bad_command_lines)
else:
    case(test_nonprivate_matches_sklearn)
    case(test_private_within_margin)
    case(test_liblinear_predict_reads_the_export)
    case(test_bad_command_lines)
shutil.rmtree(TMP, ignore_errors=True)
summary()
