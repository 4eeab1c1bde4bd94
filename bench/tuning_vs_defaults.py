#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateSearchCV at a total epsilon against one fit with the defaults at the same epsilon
(docs/python.md, "Private hyper-parameter search"), every estimator, mean +- standard error over
seeds 0..S-1 and the mean of the per-seed difference (tuned - defaults) with its standard error.
Tasks as in scripts/eval-defaults.py (fashion-0-2: Fashion-MNIST T-shirt vs pullover, train on
the train split, test on the 2000 t10k rows; digits-3-8, breast-cancer, wine: scikit-learn's sets,
a stratified 75/25 split drawn by the seed); StandardScaler + Normalizer in front, 10 nodes,
delta = 1e-5.

    DPDO_LIBRARY=build/lib/libdpdo.so.1 /usr/bin/python3 bench/tuning_vs_defaults.py \\
        [--tasks fashion-0-2,digits-3-8] [--seeds 10] [--epsilon 1] [--set refit_share=0.75 ...]
"""
import argparse
import importlib.util
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import numpy as np  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import Normalizer, StandardScaler  # noqa: E402

import dpdo.sklearn as dsk  # noqa: E402

_spec = importlib.util.spec_from_file_location("eval_defaults", os.path.join(HERE, "..", "scripts", "eval-defaults.py"))
ev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ev)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="fashion-0-2,digits-3-8")
    ap.add_argument("--estimators", default="dp-dda,do-adp,dp-wor-sgd,fed-plt")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--set", action="append", help="a PrivateSearchCV parameter key=value")
    a = ap.parse_args()
    extra = ev.parse_set(a.set)
    warnings.simplefilter("ignore")
    for t in a.tasks.split(","):
        for e in a.estimators.split(","):
            E = getattr(dsk, ev.NAMES[e])
            dflt, tuned, eps, how, t0 = [], [], [], [], time.time()
            for seed in range(a.seeds):
                Xtr, ytr, Xte, yte = ev.task(t, seed, a.data)
                prep = make_pipeline(StandardScaler(), Normalizer()).fit(Xtr)
                Xtr, Xte = prep.transform(Xtr), prep.transform(Xte)
                dflt.append(E(epsilon=a.epsilon, delta=1e-5, n_nodes=10, random_state=seed).fit(Xtr, ytr)
                            .score(Xte, yte))
                s = dsk.PrivateSearchCV(E(n_nodes=10), epsilon=a.epsilon, delta=1e-5, random_state=seed,
                                        **extra).fit(Xtr, ytr)
                tuned.append(s.score(Xte, yte))
                eps.append(s.privacy_["epsilon"])
                how.append("%s/%d" % (s.privacy_["method"], s.privacy_["trials"]))
                print("# %s %s seed %d: defaults %.4f, PrivateSearchCV %.4f (%s, best %s, total eps %.6f)"
                      % (t, e, seed, dflt[-1], tuned[-1], how[-1], s.best_params_, eps[-1]), flush=True)
            d = np.asarray(tuned) - np.asarray(dflt)
            print("%s %s, eps = %g, %d seeds: defaults %s; PrivateSearchCV %s; difference %s (method/trials %s, "
                  "total eps <= %.6f) [%.0f s]"
                  % (t, e, a.epsilon, a.seeds, ev.fmt(dflt), ev.fmt(tuned), ev.fmt(d),
                     ",".join(sorted(set(how))), max(eps), time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
