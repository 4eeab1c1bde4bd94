#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test accuracy of the dpdo.sklearn estimators with their defaults, beside non-private
scikit-learn LogisticRegression, mean and standard deviation over seeds.

    /usr/bin/python3 scripts/eval-defaults.py [--tasks fashion-0-2,breast-cancer] [--seeds 5]
        [--eps 1] [--estimators dp-dda,do-adp,dp-wor-sgd,fed-plt] [--set key=value ...]
        [--reference] [--tuner] [--table docs/choosing.md --eps-list 0.25,0.5,1,2,4,8]

--reference adds a centralized DP-SGD reference on the pooled rows (dpsgd_reference); --table
writes markdown tables of accuracy vs epsilon (every estimator, the reference, scikit-learn)
between the BEGIN/END markers of the file (`make choosing`); a task written "task:S" runs S
seeds instead of --seeds. --tuner adds every estimator under dpdo.sklearn.PrivateSearchCV with
its default grid (param_grid="auto": the plan and three neighbours, docs/python.md "Private
hyper-parameter search") at the same total epsilon (a second table per task with --table).

Every fit is make_pipeline(StandardScaler(), Normalizer(), Estimator(epsilon, delta=1e-5,
n_nodes=10, random_state=seed)). Tasks:
  fashion-A-B   Fashion-MNIST classes A vs B (IDX files in --data): train on the train split,
                test on the t10k split (the same for every seed; the seed draws the node split
                and the noise)
  breast-cancer, wine (class 0 vs rest), digits-A-B (digit A vs B): scikit-learn's bundled sets,
                a stratified 75/25 split drawn by the seed
  synth-N-D     a logistic model with N rows and D features (a fixed generator), 75/25 split
Tuning data used for the library defaults: fashion-4-6 (coat vs shirt), fashion-5-7, digits-3-8,
digits-1-7, wine and synth-*; fashion-0-2 and breast-cancer were only evaluated (docs/choosing.md).
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


def dpsgd_reference(Xtr, ytr, eps, delta, seed, acc_name="auto"):
    """Centralized DP-SGD on the pooled rows (the reference of docs/choosing.md): logistic loss,
    an appended constant feature 1/sqrt(d) (as the estimators' plan), per-example clipping at
    C = 1, Poisson sampling with rate q = min(1, 256 / N), 30 epochs and at least 300 steps
    (T = max(300, 30 / q)), step
    0.5 on the noisy mean gradient (sum of clipped gradients + N(0, (sigma C)^2), divided by the
    expected batch qN), L2 1e-4, model = mean of the iterates of the last half. sigma is
    calibrated by the library's accountant (Poisson(q), add/remove-one, T releases of
    sensitivity C) through the Python binding. Xtr is already scaled and normalized; returns
    the weight vector (last entry: the intercept's weight on the constant feature)."""
    from dpdo import _core
    N, d = Xtr.shape
    s = 1.0 / np.sqrt(d) if np.isfinite(eps) else 1.0
    X = np.hstack([Xtr, np.full((N, 1), s)])
    y = np.where(ytr > 0, 1.0, -1.0)
    q = min(1.0, 256.0 / N)
    T = max(300, int(np.ceil(30 / q)))
    clip, lr, lam = 1.0, 0.5, 1e-4
    if np.isfinite(eps):
        led = _core.Ledger(1)
        acc = _core.Accountant(led, acc_name)
        sampling = _core.Sampling.poisson(q) if q < 1 else None
        sigma = acc.calibrate_sigma(eps, delta, T, sensitivity=clip, sampling=sampling)
        acc.close()
        led.close()
        if sampling is not None:
            sampling.close()
    else:
        sigma = 0.0
    rs = np.random.RandomState(1000003 + seed)
    w = np.zeros(d + 1)
    avg, n_avg = np.zeros(d + 1), 0
    for t in range(T):
        idx = np.flatnonzero(rs.rand(N) < q) if q < 1 else np.arange(N)
        Xb, yb = X[idx], y[idx]
        m = yb * (Xb @ w)
        g = (-yb / (1.0 + np.exp(np.clip(m, -500, 500))))[:, None] * Xb       # per-example gradients
        nrm = np.linalg.norm(g, axis=1)
        g *= np.minimum(1.0, clip / np.maximum(nrm, 1e-300))[:, None]
        noisy = (g.sum(axis=0) + sigma * clip * rs.randn(d + 1)) / (q * N)
        w -= lr * (noisy + lam * w)
        if t >= T // 2:
            n_avg += 1
            avg += (w - avg) / n_avg
    return avg, s


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


_SIGMA = {}


def run_task(t, a, extra, eps, with_ref=True):
    """{column: [test accuracy per seed]} for one task and one epsilon."""
    import dpdo.sklearn as dsk
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler
    res = {"n": None, "lr": [], "dp-sgd": []}
    res.update({e: [] for e in a.estimators.split(",")})
    if a.tuner:
        res.update({"tuned-" + e: [] for e in a.estimators.split(",")})
        res.update({"method-" + e: [] for e in a.estimators.split(",")})
    times = {e: 0.0 for e in res}
    for s in range(a.seeds):
        Xtr, ytr, Xte, yte = task(t, s, a.data)
        res["n"] = (len(Xtr), Xtr.shape[1])
        if with_ref:
            if s == 0 or not t.startswith("fashion"):  # Fashion: one split, LR deterministic
                res["lr"].append(make_pipeline(StandardScaler(), Normalizer(), LogisticRegression(max_iter=2000))
                                 .fit(Xtr, ytr).score(Xte, yte))
            if a.reference:
                prep = make_pipeline(StandardScaler(), Normalizer()).fit(Xtr)
                t0 = time.time()
                w, sc = dpsgd_reference(prep.transform(Xtr), ytr, eps, a.delta, s)
                times["dp-sgd"] += time.time() - t0
                Z = prep.transform(Xte)
                res["dp-sgd"].append(float(np.mean(((Z @ w[:-1] + sc * w[-1]) > 0).astype(int) == yte)))
        for e in a.estimators.split(","):
            est = getattr(dsk, NAMES[e])(epsilon=eps, delta=a.delta, n_nodes=a.nodes, random_state=s, **extra)
            t0 = time.time()
            p = make_pipeline(StandardScaler(), Normalizer(), est).fit(Xtr, ytr)
            times[e] += time.time() - t0
            res[e].append(p.score(Xte, yte))
            if a.verbose:
                print("  %s %s seed %d: %.4f  %s" % (t, e, s, res[e][-1], p[-1].privacy_.get("notes", "")[:300]),
                      flush=True)
            if a.tuner:
                import warnings
                est = getattr(dsk, NAMES[e])(n_nodes=a.nodes, **extra)
                t0 = time.time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the searches' diagnostics (e.g. noise-dominated trials)
                    p = make_pipeline(StandardScaler(), Normalizer(), dsk.PrivateSearchCV(
                        est, epsilon=eps, delta=a.delta, random_state=s)).fit(Xtr, ytr)
                times["tuned-" + e] += time.time() - t0
                res["tuned-" + e].append(p.score(Xte, yte))
                res["method-" + e].append(p[-1].privacy_["method"])
                if a.verbose:
                    pr = p[-1].privacy_
                    print("  %s tuned %s seed %d: %.4f  %s, %d trials, best %s, total epsilon %.6f"
                          % (t, e, s, res["tuned-" + e][-1], pr["method"], pr["trials"], p[-1].best_params_,
                             pr["epsilon"]), flush=True)
    res["times"] = {e: v / max(1, a.seeds) for e, v in times.items()}
    return res


def mse(v):
    """(mean, standard error, sd) of a list."""
    v = np.asarray(v, dtype=float)
    if len(v) < 2:
        return float(v.mean()), 0.0, 0.0
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))), float(v.std(ddof=1))


def fmt(v):
    """"mean +- s.e." of a list."""
    return "%.4f +- %.4f" % mse(v)[:2]


BEGIN, END = "<!-- BEGIN eval-defaults tables -->", "<!-- END eval-defaults tables -->"
COLS = [("dp-dda", "DP-DDA"), ("do-adp", "DO-ADP"), ("dp-wor-sgd", "DP-WOR-SGD"), ("fed-plt", "Fed-PLT")]


def table(a, extra):
    """Markdown tables of accuracy vs epsilon, one per task; written between the BEGIN/END
    markers of a.table (docs/choosing.md)."""
    eps_list = [float(e) for e in a.eps_list.split(",")]
    ests = a.estimators.split(",")
    out = ["", "Generated by `scripts/eval-defaults.py %s`%s (%s); %d seeds (0-%d) per cell, mean ± s.e.; "
           "δ = %g, %d nodes." % (" ".join(sys.argv[1:]), " (`make choosing`)" if a.make else "",
                                  time.strftime("%Y-%m-%d", time.gmtime()), a.seeds, a.seeds - 1, a.delta,
                                  a.nodes), ""]
    out[1] = out[1].replace("; %d seeds (0-%d) per cell" % (a.seeds, a.seeds - 1),
                            "; seeds 0..S-1 per cell (S in each table's heading)")
    seeds0 = a.seeds
    for t in a.tasks.split(","):
        t, _, ns = t.partition(":")  # "task:S" runs S seeds for that task
        a.seeds = int(ns) if ns else seeds0
        rows, trows = [], []
        lr = None
        for k, eps in enumerate(eps_list):
            r = run_task(t, a, extra, eps, with_ref=True)
            if lr is None:
                lr = mse(r["lr"])
                n, d = r["n"]
            cells = ["%g" % eps]
            if a.reference:
                cells.append("%.3f ± %.3f" % mse(r["dp-sgd"])[:2])
            for e in ests:
                cells.append("%.3f ± %.3f" % mse(r[e])[:2])
            rows.append("| " + " | ".join(cells) + " |")
            print("%s eps %g: %s" % (t, eps, rows[-1]), flush=True)
            if a.tuner:
                cells = ["%g" % eps]
                for e in ests:
                    m, se = mse(r["tuned-" + e])[:2]
                    if all(x == "none" for x in r["method-" + e]):
                        cells.append("no search (= defaults)")
                        continue
                    diff = np.asarray(r["tuned-" + e]) - np.asarray(r[e])
                    cells.append("%.3f ± %.3f (%+.3f ± %.3f)" % (m, se, diff.mean(), mse(diff)[1]))
                trows.append("| " + " | ".join(cells) + " |")
                print("%s eps %g tuned: %s" % (t, eps, trows[-1]), flush=True)
        head = ["ε"] + (["central DP-SGD"] if a.reference else []) + [dict(COLS).get(e, e) for e in ests]
        out += ["**%s** (%d training rows, %d per node, d = %d; %d seeds; non-private LogisticRegression "
                "%.3f ± %.3f)" % (t, n, n // a.nodes, d, a.seeds, lr[0], lr[1]), "",
                "| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + rows + [""]
        if a.tuner and all(row.count("no search") == len(ests) for row in trows):
            out += ["*%s with `PrivateSearchCV` (default grid): no search at any ε here (the validation scores' "
                    "noise would exceed 0.01), the plan is fitted once with the whole budget: the same fits as the "
                    "defaults above*" % t, ""]
        elif a.tuner:
            head = ["ε"] + [dict(COLS).get(e, e) for e in ests]
            out += ["*%s with `PrivateSearchCV` (default grid) at the same total ε; in brackets the mean "
                    "per-seed difference from the defaults above ± its s.e.; \"no search\": the validation "
                    "scores' noise would exceed 0.01, so the search fits the plan once with the whole budget, "
                    "the same fit as the defaults*" % t, "",
                    "| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + trows + [""]
    text = "\n".join(out)
    if a.table == "-":
        print(text)
        return
    doc = open(a.table).read()
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN) + len(BEGIN)] + "\n" + text + "\n" + doc[doc.index(END):]
    else:
        doc += "\n" + BEGIN + "\n" + text + "\n" + END + "\n"
    open(a.table, "w").write(doc)
    print("wrote the tables into %s" % a.table)


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
    ap.add_argument("--reference", action="store_true",
                    help="also the centralized DP-SGD reference on the pooled rows (always on with --table)")
    ap.add_argument("--table", help="write markdown tables of accuracy vs epsilon into this file (between "
                    "its BEGIN/END eval-defaults markers; '-' prints them)")
    ap.add_argument("--eps-list", default="0.25,0.5,1,2,4,8")
    ap.add_argument("--tuner", action="store_true", help="also every estimator under PrivateSearchCV (default grid)")
    ap.add_argument("--make", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    import dpdo.sklearn as dsk
    extra = parse_set(a.set)
    dsk._DPClassifier._TUNE = parse_set(a.tune)
    if a.table:
        a.reference = True
        table(a, extra)
        return
    for t in a.tasks.split(","):
        res = run_task(t, a, extra, a.eps)
        r = float(np.mean(res["lr"]))
        n, d = res["n"]
        print("%s (n_train %d, d %d, eps %g): sklearn LR %.4f" % (t, n, d, a.eps, r))
        for e in ["dp-sgd"] + a.estimators.split(",") + ["tuned-" + e for e in a.estimators.split(",")]:
            if not res.get(e):
                continue
            m, se, sd = mse(res[e])
            print("  %-11s %.4f +- %.4f (sd %.4f, min %.4f)  gap %+.4f  %.1f s/fit" %
                  (e, m, se, sd, min(res[e]), m - r, res["times"][e]), flush=True)


if __name__ == "__main__":
    main()
