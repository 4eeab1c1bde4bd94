#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test accuracy of the dpdo.sklearn estimators with their defaults, beside non-private
scikit-learn LogisticRegression, mean and standard deviation over seeds.

    /usr/bin/python3 scripts/eval-defaults.py [--tasks fashion-0-2,breast-cancer] [--seeds 5]
        [--eps 1] [--estimators dp-dda,do-adp,dp-wor-sgd,fed-plt] [--set key=value ...]

Every fit is make_pipeline(StandardScaler(), Normalizer(), Estimator(epsilon, delta=1e-5,
n_nodes=10, random_state=seed)). Tasks:
  fashion-A-B   Fashion-MNIST classes A vs B (IDX files in --data): train on the train split,
                test on the t10k split (the same for every seed; the seed draws the node split
                and the noise)
  breast-cancer, wine (class 0 vs rest), digits-A-B (digit A vs B): scikit-learn's bundled sets,
                a stratified 75/25 split drawn by the seed
  synth-N-D     a logistic model with N rows and D features (a fixed generator), 75/25 split
Tuning data used for the library defaults: fashion-4-6 (coat vs shirt), fashion-5-7, digits-3-8,
wine and synth-*; fashion-0-2 and breast-cancer were only evaluated (docs/choosing.md).
"""
import argparse
import gzip
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import numpy as np  # noqa: E402

NAMES = {"dp-dda": "DPDDAClassifier", "do-adp": "DOADPClassifier", "dp-wor-sgd": "DPWORSGDClassifier",
         "fed-plt": "FedPLTClassifier"}
_FASHION = {}


def fashion(path, a, b):
    def load(kind):
        if kind not in _FASHION:
            X = np.frombuffer(gzip.open(os.path.join(path, kind + "-images-idx3-ubyte.gz")).read(), np.uint8,
                              offset=16).reshape(-1, 784).astype(np.float64)
            y = np.frombuffer(gzip.open(os.path.join(path, kind + "-labels-idx1-ubyte.gz")).read(), np.uint8,
                              offset=8)
            _FASHION[kind] = (X, y)
        X, y = _FASHION[kind]
        keep = np.isin(y, (a, b))
        return X[keep], (y[keep] == b).astype(int)
    return load("train") + load("t10k")


def task(name, seed, data):
    """(X_train, y_train, X_test, y_test)."""
    from sklearn.model_selection import train_test_split
    parts = name.split("-")
    if parts[0] == "fashion":
        return fashion(data, int(parts[1]), int(parts[2]))
    import sklearn.datasets as ds
    if name == "breast-cancer":
        X, y = ds.load_breast_cancer(return_X_y=True)
    elif name == "wine":
        X, y = ds.load_wine(return_X_y=True)
        y = (y == 0).astype(int)
    elif parts[0] == "digits":
        X, y = ds.load_digits(return_X_y=True)
        keep = np.isin(y, (int(parts[1]), int(parts[2])))
        X, y = X[keep], (y[keep] == int(parts[2])).astype(int)
    elif parts[0] == "synth":
        n, d = int(parts[1]), int(parts[2])
        rs = np.random.RandomState(12345 + d)
        w = rs.randn(d) / np.sqrt(d) * 3
        X = rs.randn(n, d) * (1 + rs.rand(d)) + rs.randn(d)
        y = (rs.rand(n) < 1 / (1 + np.exp(-(X - X.mean(0)) @ w))).astype(int)
    else:
        raise SystemExit("unknown task %r" % name)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
    return Xtr, ytr, Xte, yte


def parse_set(items):
    out = {}
    for it in items or []:
        k, v = it.split("=", 1)
        try:
            v = int(v)
        except ValueError:
            try:
                v = float(v)
            except ValueError:
                v = None if v == "None" else v
        out[k] = v
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="fashion-0-2,breast-cancer")
    ap.add_argument("--estimators", default="dp-dda,do-adp,dp-wor-sgd,fed-plt")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--set", action="append", help="extra estimator parameter key=value")
    ap.add_argument("--tune", action="append", help="override a number of the library plan: key=value")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    import dpdo.sklearn as dsk
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler
    extra = parse_set(a.set)
    dsk._DPClassifier._TUNE = parse_set(a.tune)
    for t in a.tasks.split(","):
        ref = []
        res = {e: [] for e in a.estimators.split(",")}
        times = {e: 0.0 for e in res}
        for s in range(a.seeds):
            Xtr, ytr, Xte, yte = task(t, s, a.data)
            if s == 0 or not t.startswith("fashion"):
                ref.append(make_pipeline(StandardScaler(), Normalizer(), LogisticRegression(max_iter=2000))
                           .fit(Xtr, ytr).score(Xte, yte))
            for e in res:
                est = getattr(dsk, NAMES[e])(epsilon=a.eps, delta=a.delta, n_nodes=a.nodes, random_state=s,
                                             **extra)
                t0 = time.time()
                p = make_pipeline(StandardScaler(), Normalizer(), est).fit(Xtr, ytr)
                times[e] += time.time() - t0
                res[e].append(p.score(Xte, yte))
                if a.verbose:
                    print("  %s %s seed %d: %.4f  %s" % (t, e, s, res[e][-1], p[-1].privacy_.get("notes", "")[:300]),
                          flush=True)
        r = float(np.mean(ref))
        print("%s (n_train %d, d %d, eps %g): sklearn LR %.4f" % (t, len(Xtr), Xtr.shape[1], a.eps, r))
        for e, v in res.items():
            v = np.array(v)
            print("  %-11s %.4f +- %.4f (sd %.4f, min %.4f)  gap %+.4f  %.1f s/fit" %
                  (e, v.mean(), v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0, v.std(ddof=1) if len(v) > 1
                   else 0, v.min(), v.mean() - r, times[e] / len(v)), flush=True)


if __name__ == "__main__":
    main()
