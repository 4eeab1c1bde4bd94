#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The accuracy tables of docs/python.md, as mean +- standard error over seeds:
(1) the quick start: Fashion-MNIST T-shirt vs pullover (rows scaled to norm 1, as there), 10 nodes,
    test accuracy at epsilon 1 and without noise, each estimator with its defaults;
(2) three-fold cross-validated accuracy on the make_classification problem of the Estimators
    section, against epsilon.

    DPDO_LIBRARY=build/lib/libdpdo.so.1 /usr/bin/python3 bench/python_doc_tables.py [--seeds 5]
"""
import argparse
import math
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
import numpy as np  # noqa: E402

from dpdo.sklearn import ESTIMATORS  # noqa: E402
from _fashion import fashion  # noqa: E402


def mse(v):
    v = np.asarray(v, dtype=float)
    return "%.4f ± %.4f" % (v.mean(), v.std(ddof=1) / math.sqrt(len(v)))


def main():
    from sklearn.datasets import make_classification
    from sklearn.model_selection import cross_val_score
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    seeds = range(a.seeds)
    (X, y), (Xt, yt) = fashion("train"), fashion("t10k")
    X, Xt = X / np.linalg.norm(X, axis=1, keepdims=True), Xt / np.linalg.norm(Xt, axis=1, keepdims=True)
    print("| model | ε = 1 | no noise |\n|---|---|---|")
    for E in ESTIMATORS:
        row = [mse([E(epsilon=e, delta=1e-5, n_nodes=10, random_state=s).fit(X, y).score(Xt, yt) for s in seeds])
               for e in (1.0, float("inf"))]
        print("| `%s` | %s | %s |" % (E.__name__, row[0], row[1]), flush=True)
    Xs, ys = make_classification(n_samples=4000, n_features=10, n_informative=5, class_sep=2.0, random_state=0)
    Xs /= np.linalg.norm(Xs, axis=1, keepdims=True)
    print("\n| ε | 0.1 | 1 | 10 | no noise |\n|---|---|---|---|---|")
    for E in ESTIMATORS:
        row = [mse([cross_val_score(E(epsilon=e, random_state=s), Xs, ys, cv=3).mean() for s in seeds])
               for e in (0.1, 1.0, 10.0, float("inf"))]
        print("| %s | %s |" % (E.__name__, " | ".join(row)), flush=True)


if __name__ == "__main__":
    main()
