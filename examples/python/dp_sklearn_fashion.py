#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A differentially private logistic model on Fashion-MNIST with the scikit-learn estimator.

Two classes (T-shirt/top vs pullover), the 12000 training rows split over 10 nodes, Fed-PLT at
epsilon = 1 (delta = 1e-5), compared with the same algorithm without noise and with
scikit-learn's LogisticRegression; the privacy report is printed and, when matplotlib is
installed, the objective and the epsilon spent per round are plotted to a PNG (Agg backend).

    /usr/bin/python3 examples/python/dp_sklearn_fashion.py [--quick] [--out curve.png]
        [--data /usr/share/datasets/fashion-mnist] [--estimator fed-plt|dp-dda|do-adp|dp-wor-sgd]

--quick trains on 3000 rows (what `make check` runs). Without the data set a synthetic one of the
same shape is used (and said so).
"""
import argparse
import gzip
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

import numpy as np  # noqa: E402

from dpdo.sklearn import DOADPClassifier, DPDDAClassifier, DPWORSGDClassifier, FedPLTClassifier  # noqa: E402

ESTIMATORS = {"fed-plt": FedPLTClassifier, "dp-dda": DPDDAClassifier, "do-adp": DOADPClassifier,
              "dp-wor-sgd": DPWORSGDClassifier}


def load(path, kind, classes=(0, 2)):
    """Rows of two classes, scaled to unit norm (so that clipping at 1 does not bias the model)."""
    X = np.frombuffer(gzip.open(os.path.join(path, kind + "-images-idx3-ubyte.gz")).read(), np.uint8, offset=16)
    y = np.frombuffer(gzip.open(os.path.join(path, kind + "-labels-idx1-ubyte.gz")).read(), np.uint8, offset=8)
    X = X.reshape(-1, 784).astype(np.float64)
    keep = np.isin(y, classes)
    X = X[keep]
    return X / np.linalg.norm(X, axis=1, keepdims=True), y[keep]


def synthetic(n, seed):
    rs = np.random.RandomState(seed)
    w = rs.randn(784)
    X = np.abs(rs.randn(n, 784))
    y = (X @ w > np.median(X @ w)).astype(int) * 2
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--quick", action="store_true", help="3000 training rows")
    ap.add_argument("--out", default="dp_fashion_curve.png", help="the plot (with matplotlib)")
    ap.add_argument("--estimator", default="fed-plt", choices=sorted(ESTIMATORS))
    ap.add_argument("--epsilon", type=float, default=1.0)
    a = ap.parse_args()

    if os.path.exists(os.path.join(a.data, "train-images-idx3-ubyte.gz")):
        (X, y), (Xt, yt) = load(a.data, "train"), load(a.data, "t10k")
        what = "Fashion-MNIST, T-shirt/top (0) vs pullover (2)"
    else:
        (X, y), (Xt, yt) = synthetic(12000, 1), synthetic(2000, 2)
        what = "SYNTHETIC stand-in (%s not found)" % a.data
    if a.quick:
        X, y = X[:3000], y[:3000]
    E = ESTIMATORS[a.estimator]
    print("data: %s, %d training rows, %d test rows, %d features" % (what, len(X), len(Xt), X.shape[1]))

    t0 = time.time()
    clf = E(epsilon=a.epsilon, delta=1e-5, n_nodes=10, random_state=0, record_history=True).fit(X, y)
    t_dp = time.time() - t0
    plain = E(epsilon=float("inf"), n_nodes=10, random_state=0).fit(X, y)
    print("%s at epsilon = %g: test accuracy %.4f (%.1f s)" % (E.__name__, a.epsilon, clf.score(Xt, yt), t_dp))
    print("%s without noise:     test accuracy %.4f" % (E.__name__, plain.score(Xt, yt)))
    try:
        from sklearn.linear_model import LogisticRegression
        lr = LogisticRegression(max_iter=1000).fit(X, y)
        print("sklearn LogisticRegression (non-private): test accuracy %.4f" % lr.score(Xt, yt))
    except ImportError:
        print("(scikit-learn absent: no LogisticRegression baseline)")
    print()
    print(clf.privacy_report())

    hist = clf.history_[0]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib absent: no plot; %d history points recorded)" % len(hist))
        return 0
    r = [h["round"] for h in hist]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    ax[0].plot(r, [h["objective"] for h in hist])
    ax[0].set_xlabel("round")
    ax[0].set_ylabel("objective F (training)")
    ax[1].plot(r, [h["epsilon"] for h in hist])
    ax[1].set_xlabel("round")
    ax[1].set_ylabel("epsilon spent (delta = 1e-5)")
    fig.suptitle("%s on %s" % (E.__name__, what.split(",")[0]))
    fig.tight_layout()
    fig.savefig(a.out, dpi=80)
    print("\nplot: %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
