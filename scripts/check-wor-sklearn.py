#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Outside reference for dp_wor_sgd_classify's Noiseless curve: a converged scikit-learn
one-vs-rest logistic regression fitted on the very rows the example's nodes hold.

Usage: check-wor-sklearn.py FILE.bin [FILE.bin ...]

Each FILE is written by `dp_wor_sgd_classify` (one per figure and seed, `rows-*.bin` in its
output directory): a header of four little-endian int64 (ntr, nte, d, K) and one float64
(lambda), then the training rows the M nodes hold (ntr x d float64, row-major), their class ids
(ntr float64, 0..K-1), the test rows (nte x d) and their classes (nte), and two K x d models: the
example's Noiseless global models and the library's reference solver's (dpdo_reference).

The example's objective per binary model k is the mean logistic loss over the ntr rows plus
lambda/2 ||w||^2 (labels +1 for class k, -1 otherwise; no intercept), so scikit-learn's
C = 1/(lambda ntr), fit_intercept=False (lambda = 0: C = 1e12, i.e. no penalty). Prediction is
argmax_k <w_k, x> as in the example.

Prints, per file, the test accuracy (%) and the sum over the K binary models of the training
objective for the scikit-learn fit, the example's Noiseless models and the reference solver's,
then one line "sklearn-mean-acc A" (the mean over the files) that the example parses.
"""
import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression


def load(path):
    raw = open(path, "rb").read()
    ntr, nte, d, K = (int(v) for v in np.frombuffer(raw, dtype="<i8", count=4))
    lam = float(np.frombuffer(raw, dtype="<f8", count=1, offset=32)[0])
    body = np.frombuffer(raw, dtype="<f8", offset=40)
    want = ntr * d + ntr + nte * d + nte + 2 * K * d
    if body.size != want:
        raise SystemExit(f"{path}: {body.size} values, expected {want} (ntr={ntr} nte={nte} d={d} K={K})")
    o = 0
    Xtr = body[o:o + ntr * d].reshape(ntr, d); o += ntr * d
    ctr = body[o:o + ntr].astype(int); o += ntr
    Xte = body[o:o + nte * d].reshape(nte, d); o += nte * d
    cte = body[o:o + nte].astype(int); o += nte
    W = body[o:o + K * d].reshape(K, d); o += K * d
    Wref = body[o:o + K * d].reshape(K, d)
    return Xtr, ctr, Xte, cte, W, Wref, lam, K


def objective(W, X, c, lam):
    """Sum over k of mean_i log(1 + exp(-y_ik <w_k, x_i>)) + lam/2 ||w_k||^2."""
    tot = 0.0
    for k in range(W.shape[0]):
        y = np.where(c == k, 1.0, -1.0)
        m = -y * (X @ W[k])
        tot += np.mean(np.logaddexp(0.0, m)) + 0.5 * lam * W[k] @ W[k]
    return tot


def accuracy(W, X, c):
    return 100.0 * np.mean(np.argmax(X @ W.T, axis=1) == c)


def main(paths):
    if not paths:
        raise SystemExit(__doc__)
    accs = []
    for path in paths:
        Xtr, ctr, Xte, cte, W, Wref, lam, K = load(path)
        C = 1e12 if lam == 0 else 1.0 / (lam * Xtr.shape[0])
        Wsk = np.zeros_like(W)
        iters = 0
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # not converged: say so
            for k in range(K):  # one-vs-rest by hand: the same K binary problems as the example
                y = np.where(ctr == k, 1, -1)
                clf = LogisticRegression(C=C, fit_intercept=False, solver="lbfgs", tol=1e-10,
                                         max_iter=100000)
                try:
                    clf.fit(Xtr, y)
                except ConvergenceWarning:
                    raise SystemExit(f"{path}: scikit-learn did not converge for class {k}")
                Wsk[k] = clf.coef_[0]
                iters = max(iters, int(clf.n_iter_[0]))
        a_sk, a_nl, a_ref = accuracy(Wsk, Xte, cte), accuracy(W, Xte, cte), accuracy(Wref, Xte, cte)
        f_sk, f_nl, f_ref = objective(Wsk, Xtr, ctr, lam), objective(W, Xtr, ctr, lam), objective(Wref, Xtr, ctr, lam)
        print(f"{path}: lambda={lam:g} C={C:g} rows={Xtr.shape[0]} K={K} lbfgs-iters<={iters}  "
              f"test acc sklearn {a_sk:.2f} noiseless {a_nl:.2f} reference {a_ref:.2f}  "
              f"objective (sum of K) sklearn {f_sk:.6f} noiseless {f_nl:.6f} reference {f_ref:.6f}")
        accs.append(a_sk)
    print(f"sklearn-mean-acc {np.mean(accs):.4f} {np.std(accs, ddof=1) / np.sqrt(len(accs)) if len(accs) > 1 else 0:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
