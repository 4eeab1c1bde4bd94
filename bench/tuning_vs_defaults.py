#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateSearchCV at a total epsilon against one fit with the defaults at the same epsilon
(docs/python.md, "Private hyper-parameter search"): Fashion-MNIST T-shirt vs pullover (the IDX
files under /usr/share/datasets/fashion-mnist), StandardScaler + Normalizer in front, 10 nodes,
delta = 1e-5, test accuracy on the 2000 test rows, mean +- standard error over seeds.

    DPDO_LIBRARY=build/lib/libdpdo.so.1 /usr/bin/python3 bench/tuning_vs_defaults.py [--seeds 5] [--epsilon 1]
"""
import argparse
import math
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
import numpy as np  # noqa: E402
from sklearn.preprocessing import Normalizer, StandardScaler  # noqa: E402

from dpdo.sklearn import DPDDAClassifier, FedPLTClassifier, PrivateSearchCV  # noqa: E402
from _fashion import fashion  # noqa: E402

GRIDS = {
    # each grid holds the defaults ("auto": the budget plan) and longer runs / another alpha
    DPDDAClassifier: {"max_rounds": ["auto", 2000, 8000], "alpha": ["auto", 1e-4]},
    FedPLTClassifier: {"max_rounds": ["auto", 25, 50], "alpha": ["auto", 1e-4]},
}


def mse(v):
    v = np.asarray(v, dtype=float)
    return "%.4f +- %.4f" % (v.mean(), v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epsilon", type=float, default=1.0)
    a = ap.parse_args()
    (X, y), (Xt, yt) = fashion("train"), fashion("t10k")
    sc = StandardScaler().fit(X)
    nm = Normalizer()
    X, Xt = nm.transform(sc.transform(X)), nm.transform(sc.transform(Xt))
    warnings.simplefilter("ignore")
    for E, grid in GRIDS.items():
        dflt, tuned, eps, trials, t0 = [], [], [], [], time.time()
        for seed in range(a.seeds):
            dflt.append(E(epsilon=a.epsilon, delta=1e-5, n_nodes=10, random_state=seed).fit(X, y).score(Xt, yt))
            s = PrivateSearchCV(E(n_nodes=10), grid, epsilon=a.epsilon, delta=1e-5, random_state=seed).fit(X, y)
            tuned.append(s.score(Xt, yt))
            eps.append(s.privacy_["epsilon"])
            trials.append(s.privacy_["trials"])
            print("# %s seed %d: defaults %.4f, PrivateSearchCV %.4f (%d trials, best %s, total eps %.6f)"
                  % (E.__name__, seed, dflt[-1], tuned[-1], trials[-1], s.best_params_, eps[-1]), flush=True)
        print("%s, Fashion-MNIST T-shirt vs pullover, eps = %g, %d seeds: defaults %s; PrivateSearchCV %s "
              "(grid %s, %.1f trials on average, total eps <= %.6f) [%.0f s]"
              % (E.__name__, a.epsilon, a.seeds, mse(dflt), mse(tuned), grid, np.mean(trials), max(eps),
                 time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
