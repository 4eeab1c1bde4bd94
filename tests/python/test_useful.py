#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Defaults a user can trust (docs/privacy.md "Which accountant" and "Choosing delta",
docs/python.md "Diagnostics" and "Private hyper-parameter search"):

* the estimators use the "auto" accountant by default, and its figure is sound: recomputed from
  the events the run charged by fresh accountants, never above rdp's for the same events;
* delta: the default is tied to the data; delta >= 1/n warns (Python) and leaves a note (C);
* diagnostics_: the warnings fire on raw breast-cancer features and on a noise-dominated
  Fed-PLT run, and stay silent on scaled Fashion-MNIST T-shirt vs pullover;
* PrivateSearchCV: the total epsilon it reports is the accountant's composition of the runs that
  ran (recomputed here independently); plain GridSearchCV on a dpdo estimator warns.
Prints TAP and "# summary: N passed, M failed"."""
import math
import os
import warnings

from _tap import case, raises, summary
from _fashion import FASHION, fashion

import dpdo  # noqa: E402
import dpdo.diagnostics  # noqa: E402
import dpdo.tuning  # noqa: E402
from dpdo import sklearn as dsk  # noqa: E402
from dpdo.sklearn import (DPDDAClassifier, DOADPClassifier, FedPLTClassifier,  # noqa: E402
                          ESTIMATORS)

import numpy as np  # noqa: E402



def scaled_blobs(n=600, d=5, seed=0):
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=n, n_features=d, centers=2, random_state=seed, cluster_std=2.0)
    return X / np.linalg.norm(X, axis=1, keepdims=True).max(), y


def fresh_epsilon(run, kind, delta):
    """epsilon of the events a fitted run charged, by a fresh accountant of `kind` over a copy of
    the run's ledger (the ledger's saved text, checksum verified)."""
    led = run.alg.accountant.ledger
    copy = dpdo.Ledger(led.nodes)
    copy.load(led.save())
    return dpdo.Accountant(copy, kind).epsilon(delta)


def scaled(X):
    from sklearn.preprocessing import Normalizer, StandardScaler
    return Normalizer().fit_transform(StandardScaler().fit_transform(X))


def fit_recording(est, X, y):
    """(fitted estimator, list of the dpdo warnings' categories and messages)"""
    dpdo.tuning.forget_fits()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [(x.category, str(x.message)) for x in w if issubclass(x.category, (dpdo.diagnostics.PrivacyWarning,
                                                                                     dpdo.diagnostics.UtilityWarning))]


@case
def auto_is_the_default_and_sound():
    assert dsk.DEFAULT_ACCOUNTANT == "auto"
    X, y = scaled_blobs()
    for E in ESTIMATORS:
        c, _ = fit_recording(E(epsilon=1.0, delta=1e-5, random_state=3), X, y)
        p = c.privacy_
        assert p["accountant"] == "auto", (E.__name__, p["accountant"])
        assert 0 < p["epsilon"] <= 1.0 * (1 + 1e-9), (E.__name__, p)
        run = c._runs[0]
        e_auto = fresh_epsilon(run, "auto", p["delta"])
        e_rdp = fresh_epsilon(run, "rdp", p["delta"])
        # the reported figure is the one a fresh auto accountant certifies for the charged events,
        # and no smaller than rdp's minimum with the others (auto takes the minimum of upper bounds)
        assert abs(e_auto - p["epsilon"]) <= 1e-9 * max(1.0, e_auto), (E.__name__, e_auto, p["epsilon"])
        assert e_auto <= e_rdp * (1 + 1e-12), (E.__name__, e_auto, e_rdp)
        print("# %s: auto eps %.4f (source %s), rdp eps of the same events %.4f"
              % (E.__name__, e_auto, run.alg.privacy_source() if hasattr(run.alg, "privacy_source") else "?",
                 e_rdp))
    # an explicit choice is still honoured
    c, _ = fit_recording(DPDDAClassifier(epsilon=1.0, accountant="rdp", random_state=3), X, y)
    assert c.privacy_["accountant"] == "rdp"


@case
def delta_auto_is_tied_to_the_data_and_a_large_delta_warns():
    X, y = scaled_blobs(n=600)
    c, w = fit_recording(DPDDAClassifier(random_state=0), X, y)
    assert c.delta == "auto" and c.privacy_["target_delta"] == min(1e-5, 0.1 / 600) and not w, w
    X2, y2 = scaled_blobs(n=200000 // 50)  # 4000 rows: 1/(10 n) = 2.5e-5 > 1e-5, so auto stays 1e-5
    c, w = fit_recording(DOADPClassifier(random_state=0, max_rounds=20), X2, y2)
    assert c.privacy_["target_delta"] == 1e-5 and not w, w
    # delta >= 1/n: a PrivacyWarning naming 1/n, and the C note in privacy_["notes"]
    c, w = fit_recording(DPDDAClassifier(random_state=0, delta=0.01), X, y)
    msgs = [m for k, m in w if k is dpdo.diagnostics.PrivacyWarning]
    assert len(msgs) == 1 and "1/n = 0.00167" in msgs[0] and "n = 600" in msgs[0], w
    assert "delta = 0.01 >= 1/n" in c.privacy_["notes"] and "Choosing delta" in c.privacy_["notes"], c.privacy_
    # just below 1/n: no warning (the rule is delta >= 1/n)
    c, w = fit_recording(DPDDAClassifier(random_state=0, delta=0.99 / 600), X, y)
    assert not [1 for k, _ in w if k is dpdo.diagnostics.PrivacyWarning], w
    raises(ValueError, DPDDAClassifier(delta="tiny").fit, X, y, contains="'auto'")


@case
def warnings_fire_on_raw_breast_cancer_features():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    c, w = fit_recording(DPDDAClassifier(random_state=0), X, y)
    d = c.diagnostics_
    print("# raw breast cancer, DP-DDA defaults: %s" % {k: v for k, v in d.items() if k != "warnings"})
    cats = [k for k, _ in w]
    assert cats.count(dpdo.diagnostics.UtilityWarning) >= 1, w
    assert d["clipped_fraction_start"] > 0.99, d  # every row norm is >> 2 (max 4974.7), logistic phi'(0) = 1/2
    assert any("clipping dominates" in m and "scale the features" in m for _, m in w), w
    assert "clipping dominates" in c.privacy_["notes"], c.privacy_["notes"]  # the C note
    assert abs(d["baseline_score"] - 357 / 569) < 1e-12
    # the same rows scaled: no utility warning
    c, w = fit_recording(DPDDAClassifier(random_state=0, n_nodes=10), scaled(X), y)
    assert not [1 for k, _ in w if k is dpdo.diagnostics.UtilityWarning], w
    # rows of norm 1: no gradient loses most of its length (the plan's clip may still be below
    # the gradient norm 1/2, on purpose, when the noise is large)
    assert c.diagnostics_["heavily_clipped_fraction_start"] == 0.0 and c.diagnostics_["better_than_baseline"]


@case
def warnings_fire_on_a_noise_dominated_fed_plt_run():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    # 50 nodes of ~11 rows at epsilon 0.88 with the paper's fixed settings (profile="paper", the
    # 0.2 defaults: 50 rounds of several noisy local steps): each node's steps are mostly noise
    c, w = fit_recording(FedPLTClassifier(epsilon=0.88, n_nodes=50, random_state=1, profile="paper"),
                         scaled(X), y)
    d = c.diagnostics_
    print("# Fed-PLT eps 0.88, 50 nodes: %s" % {k: v for k, v in d.items() if k != "warnings"})
    assert not d["better_than_baseline"] and d["noise_to_signal"] > 10, d
    assert any(k is dpdo.diagnostics.UtilityWarning and "no better than not training" in m and "epsilon" in m
               for k, m in w), w


@case
def warnings_stay_silent_on_scaled_fashion_mnist():
    if not os.path.exists(FASHION):
        print("# %s absent: not tested" % FASHION)
        return
    X, y = fashion("train")
    X = scaled(X)
    for E in ESTIMATORS:
        c, w = fit_recording(E(epsilon=1.0, delta=1e-5, n_nodes=10, random_state=0), X, y)
        d = c.diagnostics_
        print("# Fashion-MNIST scaled, %s: train %.4f vs baseline %.4f, clipped %.3f/%.3f, noise/signal %.3g"
              % (E.__name__, d["train_score"], d["baseline_score"], d["clipped_fraction_start"],
                 d["clipped_fraction_final"], d["noise_to_signal"]))
        assert not w, (E.__name__, w)
        assert d["better_than_baseline"] and not d["warnings"], d


def analytic_gaussian_epsilon(mu, delta):
    """epsilon of mu-GDP at delta (Balle & Wang 2018: delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)),
    by scipy, independently of the library."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def d(e):
        return norm.cdf(mu / 2 - e / mu) - math.exp(e) * norm.cdf(-mu / 2 - e / mu) - delta
    return brentq(d, 0.0, 100.0, xtol=1e-13)


def ledger_mu2(text):
    """Per node, sum of count * (sensitivity / sigma)^2 over the unsampled Gaussian charges of a saved ledger."""
    out, ev = None, None
    for line in text.splitlines():
        f = line.split()
        if f[:1] == ["event"]:
            assert f[1] == "1" and f[2] == "0", line  # Gaussian, no sampling (Fed-PLT)
            ev = (float.fromhex(f[6]) / float.fromhex(f[7])) ** 2
        elif f[:1] == ["counts"]:
            c = [int(v) * ev for v in f[1:]]
            out = c if out is None else [a + b for a, b in zip(out, c)]
    return out


def _sum_mu2(texts):
    tot = None
    for t in texts:
        m = ledger_mu2(t)
        tot = m if tot is None else [a + b for a, b in zip(tot, m)]
    return tot


ORDERS = [1 + k / 10 for k in range(1, 100)] + list(range(11, 64)) + [64, 96, 128, 192, 256, 512, 1024]


def _random_stopping_by_hand(p, trial_texts, final_texts, delta):
    """(Papernot & Steinke Theorem 2 + the final fit's curve, converted; composition of everything), recomputed
    here from the runs' charges (every charge an unsampled Gaussian: the curve of mu^2-GDP is a mu^2 / 2)."""
    score = (1.0 / p["n_validation"] / p["score_sigma"]) ** 2
    mu2max = max(max(ledger_mu2(t)) + score for (t,) in trial_texts)
    fin = max(_sum_mu2(final_texts)) if final_texts else 0.0
    curve = [a * mu2max / 2 for a in ORDERS]
    eta, gamma = p["eta"], p["gamma"]
    ek = (1 / gamma - 1) / math.log(1 / gamma) if eta == 0 else eta * (1 - gamma) / (gamma * (1 - gamma ** eta))
    extra = min((1 + eta) * (1 - 1 / b) * cb + (1 + eta) * math.log(1 / gamma) / b for b, cb in zip(ORDERS, curve))
    rdp = [c + extra + math.log(ek) / (a - 1) + a * fin / 2 for a, c in zip(ORDERS, curve)]
    e_rs = min(r + math.log((a - 1) / a) - (math.log(delta) + math.log(a)) / (a - 1) for a, r in zip(ORDERS, rdp))
    tot = _sum_mu2([t for (t,) in trial_texts] + list(final_texts))
    e_comp = analytic_gaussian_epsilon(math.sqrt(max(tot) + p["trials"] * score), delta)
    return e_rs, e_comp, ek


@case
def private_search_reports_the_composition_of_what_ran():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = scaled(X)
    grid = {"max_rounds": [20, 50], "alpha": [1e-3, 1e-2]}
    # max_score_sigma=None: search even where the scores are mostly noise (569 rows)
    s = dsk.PrivateSearchCV(FedPLTClassifier(n_nodes=5), grid, epsilon=1.0, delta=1e-6, method="composition",
                            random_state=4, max_score_sigma=None).fit(X, y)
    p = s.privacy_
    assert p["trials"] == 4 and p["refit"] and len(s.ledgers_) == 5  # 4 trials and the final fit on all rows
    # independently: every charge is an unsampled Gaussian, so the composition is mu-GDP exactly
    mu2 = max(_sum_mu2([t for (t,) in s.ledgers_])) + p["trials"] * (1.0 / p["n_validation"] / p["score_sigma"]) ** 2
    e = analytic_gaussian_epsilon(math.sqrt(mu2), 1e-6)
    print("# PrivateSearchCV composition + refit: reported %.12f, recomputed %.12f (trials %.4f, final %.4f)"
          % (p["epsilon"], e, p["trial_epsilon"], p["refit_epsilon"]))
    assert abs(p["epsilon"] - e) <= 1e-7 and p["epsilon"] <= 1.0 + 1e-7, (p, e)
    assert s.best_estimator_.privacy_["epsilon"] == p["epsilon"]  # the model reports the search's total
    assert s.best_estimator_.privacy_["one_fit_epsilon"] < p["epsilon"]
    assert s.best_estimator_.privacy_["one_fit_epsilon"] == p["refit_epsilon"] or \
        abs(s.best_estimator_.privacy_["one_fit_epsilon"] - p["refit_epsilon"]) <= 1e-6 * p["refit_epsilon"]

    # random stopping without a refit: Papernot & Steinke Theorem 2 recomputed here from the trials' charges
    s = dsk.PrivateSearchCV(FedPLTClassifier(n_nodes=5), grid, epsilon=1.0, delta=1e-6, method="random-stopping",
                            random_state=5, refit_share=0, max_score_sigma=None).fit(X, y)
    p = s.privacy_
    assert not p["refit"] and len(s.ledgers_) == p["trials"]
    e_rs, e_comp, ek = _random_stopping_by_hand(p, s.ledgers_, [], 1e-6)
    assert abs(ek - (len(grid["max_rounds"]) * len(grid["alpha"]))) < 1e-6, ek  # E[K] = the number of candidates
    print("# PrivateSearchCV random stopping: %d trials; reported %.6f (P&S %.6f, composition %.6f); recomputed "
          "P&S %.6f, composition %.6f" % (p["trials"], p["epsilon"], p["epsilon_random_stopping"],
                                          p["epsilon_composition"], e_rs, e_comp))
    assert abs(p["epsilon_random_stopping"] - e_rs) <= 1e-9 * e_rs and abs(p["epsilon_composition"] - e_comp) <= 1e-7
    assert p["epsilon"] == min(e_rs, e_comp) or abs(p["epsilon"] - min(e_rs, e_comp)) <= 1e-7
    assert p["epsilon"] <= 1.0 + 1e-7

    # random stopping with a refit and the first candidate drawn with probability 1/2: the final
    # fit's curve adds to the bound order by order
    s = dsk.PrivateSearchCV(FedPLTClassifier(n_nodes=5), grid, epsilon=2.0, delta=1e-6, method="random-stopping",
                            random_state=6, refit_share=0.3, default_weight=0.5, max_score_sigma=None).fit(X, y)
    p = s.privacy_
    assert p["refit"] and len(s.ledgers_) == p["trials"] + 1
    assert p["candidate_weights"] == [0.5, 0.5 / 3, 0.5 / 3, 0.5 / 3], p["candidate_weights"]
    e_rs, e_comp, _ = _random_stopping_by_hand(p, s.ledgers_[:-1], s.ledgers_[-1], 1e-6)
    print("# PrivateSearchCV random stopping + refit: %d trials; reported %.6f (P&S %.6f, composition %.6f); "
          "recomputed P&S %.6f, composition %.6f" % (p["trials"], p["epsilon"], p["epsilon_random_stopping"],
                                                     p["epsilon_composition"], e_rs, e_comp))
    assert abs(p["epsilon_random_stopping"] - e_rs) <= 1e-9 * e_rs and abs(p["epsilon_composition"] - e_comp) <= 1e-7
    assert abs(p["epsilon"] - min(e_rs, e_comp)) <= 1e-7 and p["epsilon"] <= 2.0 + 1e-7


@case
def private_search_with_differing_final_fits_bounds_the_adaptive_choice():
    # the candidates' final fits are different mechanisms (DO-ADP batches of 1/8 or 1/4 of the
    # about 114 rows per node, drawn without replacement): the final fit is chosen from the
    # trials' outputs, so the total
    # adds the largest final curve to the trials' RDP curves; it is never below the accountant's
    # composition of what ran (which would be sound only for a final fit fixed in advance)
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = scaled(X)
    s = dsk.PrivateSearchCV(DOADPClassifier(n_nodes=5, max_rounds=20), {"plan.batch": [0.125, 0.25]}, epsilon=2.0,
                            delta=1e-6,
                            method="composition", random_state=7, max_score_sigma=None).fit(X, y)
    p = s.privacy_
    texts = [t for tt in s.ledgers_ for t in tt]
    nodes = 5
    what_ran, _ = dpdo.tuning.compose_ledgers([dpdo.tuning._ledger_from(nodes, t) for t in texts], nodes,
                                              [(1.0 / p["n_validation"], p["score_sigma"])] * p["trials"], 1e-6)
    print("# PrivateSearchCV, differing final fits: reported %.6f by %s; composition of what ran %.6f"
          % (p["epsilon"], p["composition_by"], what_ran))
    assert p["composition_by"].startswith("rdp") and p["refit"], p
    assert what_ran <= p["epsilon"] <= 2.0 + 1e-7, (what_ran, p)


@case
def private_search_without_room_for_a_search_fits_the_plan_once():
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = scaled(X)
    s = dsk.PrivateSearchCV(FedPLTClassifier(n_nodes=5), epsilon=1.0, delta=1e-6, random_state=4).fit(X, y)
    p = s.privacy_
    # 569 rows, half for validation: score noise 1 / (284 mu_score) is far above 0.01 at epsilon = 1
    assert p["method"] == "none" and p["trials"] == 0 and p["planned_score_sigma"] > 0.01, p
    assert s.best_params_ == {} and len(s.ledgers_) == 1
    e = analytic_gaussian_epsilon(math.sqrt(max(ledger_mu2(s.ledgers_[0][0]))), 1e-6)
    assert abs(p["epsilon"] - e) <= 1e-7 and p["epsilon"] <= 1.0 + 1e-7, (p, e)
    # the same fit as the estimator's own with that random_state
    own = FedPLTClassifier(n_nodes=5, epsilon=1.0, delta=1e-6, random_state=4).fit(X, y)
    assert np.array_equal(own.coef_, s.best_estimator_.coef_)
    for bad in ({"refit_share": 1.0}, {"default_margin": -1}, {"validation_fraction": 1.5}, {"param_grid": "best"}):
        raises(ValueError, dsk.PrivateSearchCV(FedPLTClassifier(n_nodes=5), max_score_sigma=None, **bad).fit, X, y)


@case
def grid_search_cv_on_a_dpdo_estimator_warns_that_epsilon_is_per_fit():
    from sklearn.model_selection import GridSearchCV
    X, y = scaled_blobs(n=400)
    dpdo.tuning.forget_fits()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        gs = GridSearchCV(FedPLTClassifier(random_state=0), {"alpha": [1e-3, 1e-2]}, cv=3).fit(X, y)
    msgs = [str(x.message) for x in w if x.category is dpdo.diagnostics.PrivacyWarning]
    assert msgs and all("ONE fit" in m and "PrivateSearchCV" in m for m in msgs), msgs
    p = gs.best_estimator_.privacy_
    assert p["fits_on_these_rows"] == 7, p  # 2 x 3 folds + the refit, all on these rows
    assert p["epsilon_all_fits"] > 6 * p["epsilon"], p
    # a plain loop over the same rows warns too
    dpdo.tuning.forget_fits()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for a in (1e-3, 1e-2):
            FedPLTClassifier(alpha=a, random_state=0).fit(X, y)
    msgs = [str(x.message) for x in w if x.category is dpdo.diagnostics.PrivacyWarning]
    assert len(msgs) == 1 and "fit 2 on" in msgs[0], msgs


if __name__ == "__main__":
    summary()
