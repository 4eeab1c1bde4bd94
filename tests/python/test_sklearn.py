#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpdo.sklearn and dpdo.privacy (issue 21).

* sklearn.utils.estimator_checks.check_estimator for the four estimators (when scikit-learn is
  installed), each check run separately so that a skipped check is listed with its reason;
* cross_val_score and a GridSearchCV over epsilon; partial_fit; random_state reproducibility;
  pickling; privacy_ and history_; sparse input; node_ids; multiclass one-vs-rest;
* a DP logistic model on Fashion-MNIST (two classes, 10 nodes, epsilon = 1) within a stated
  margin of the non-private accuracy;
* the privacy helpers against the C accountant, the dpdo-privacy CLI and the figures TF Privacy
  published for its MNIST tutorial;
* the module imports without scikit-learn.
Prints TAP and "# summary: N passed, M failed"."""
import gzip
import json
import math
import os
import pickle
import subprocess
import sys
import time
import warnings

from _tap import REPO, case, raises, summary

import dpdo  # noqa: E402
from dpdo import privacy  # noqa: E402
from dpdo.sklearn import (DPDDAClassifier, DOADPClassifier, DPWORSGDClassifier, FedPLTClassifier,  # noqa: E402
                          ESTIMATORS, HAVE_SKLEARN)

import numpy as np  # noqa: E402

# The API suite runs each estimator at epsilon = 1000: the private code path (noise calibrated by
# the accountant, clipping), with noise small enough for the suite's accuracy checks, which train
# on 30-300 samples. At epsilon = 8 every check passes for DP-WOR-SGD and Fed-PLT, and all but
# check_classifiers_classes for DP-DDA and DO-ADP: on its 30 samples (3 classes, 4 nodes) the DP
# noise is as large as the signal (measured: one class never predicted). That is differential
# privacy at small n, not an API defect; accuracy at epsilon = 1 is measured on Fashion-MNIST below.
SUITE_EPSILON = 1000.0
# make check runs check_estimator on DPWORSGDClassifier and FedPLTClassifier (the sequential and
# the federated path, ~1/3 of the suite's CPU); make check-long (DPDO_TEST_LONG=1) on all four.
LONG = os.environ.get("DPDO_TEST_LONG", "") not in ("", "0")


def suite_instance(E):
    kw = {"epsilon": SUITE_EPSILON}
    if "max_rounds" in E().get_params():
        kw["max_rounds"] = 60
    return E(**kw)


def blobs(n=2000, d=5, k=2, seed=0):
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=n, n_features=d, centers=k, random_state=seed, cluster_std=2.0)
    X = X / np.linalg.norm(X, axis=1, keepdims=True).max()
    return X, y


@case
def check_estimator_passes_for_each_estimator():
    if not HAVE_SKLEARN:
        print("# scikit-learn absent: check_estimator not run")
        return
    from sklearn.base import is_classifier
    from sklearn.utils.estimator_checks import check_estimator
    from unittest import SkipTest
    failures = []
    for E in ESTIMATORS:
        if not LONG and E not in (DPWORSGDClassifier, FedPLTClassifier):
            print("# %s: check_estimator in make check-long (DPDO_TEST_LONG=1)" % E.__name__)
            continue
        est = suite_instance(E)
        assert is_classifier(est)
        ran, skipped = 0, []
        t = time.monotonic()
        for e, check in check_estimator(est, generate_only=True):
            name = getattr(check, "func", check).__name__
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    check(e)
                ran += 1
            except SkipTest as s:
                skipped.append("%s (%s)" % (name, s))
            except Exception as ex:  # noqa: BLE001
                failures.append("%s.%s: %r" % (E.__name__, name, ex))
        print("# %s: %d checks passed in %.1f s; skipped: %s" % (E.__name__, ran, time.monotonic() - t,
                                                                 "; ".join(skipped) or "none"))
        # the only skip allowed is the pandas half of check_classifier_data_not_an_array (pandas absent)
        assert all("pandas" in s for s in skipped), skipped
    assert not failures, failures


@case
def cross_val_score_and_grid_search_over_epsilon():
    if not HAVE_SKLEARN:
        return
    from sklearn.model_selection import GridSearchCV, cross_val_score
    X, y = blobs()
    scores = cross_val_score(FedPLTClassifier(epsilon=1.0, random_state=0, max_rounds=20), X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.8, scores
    gs = GridSearchCV(FedPLTClassifier(random_state=0, max_rounds=20), {"epsilon": [0.001, 1.0, 20.0]}, cv=3)
    gs.fit(X, y)
    means = gs.cv_results_["mean_test_score"]
    print("# GridSearchCV Fed-PLT mean accuracy at epsilon 0.001, 1, 20: %s" % np.round(means, 3))
    assert gs.best_params_["epsilon"] in (1.0, 20.0) and means[2] > 0.9 and means[0] + 0.02 < min(means[1:]), means
    assert gs.best_estimator_.privacy_["epsilon"] <= gs.best_params_["epsilon"] * (1 + 1e-9)


@case
def fit_predict_privacy_history_and_the_fitted_attributes():
    X, y = blobs(n=2000, d=4)
    for E in ESTIMATORS:
        c = E(epsilon=2.0, random_state=1, record_history=True).fit(X, y)
        assert c.coef_.shape == (1, 4) and c.intercept_.shape == (1,) and list(c.classes_) == [0, 1]
        assert c.n_features_in_ == 4
        p = c.privacy_
        assert 0 < p["epsilon"] <= 2.0 * (1 + 1e-9) and p["delta"] == 1e-5 and p["accountant"] == "auto", p
        assert p["randomness"] == "reproducible" and isinstance(p["notes"], str)
        assert "epsilon" in c.privacy_report()
        h = c.history_[0]
        assert len(h) >= 5 and all(set(r) == {"round", "epsilon", "objective"} for r in h)
        eps = [r["epsilon"] for r in h]
        assert all(a <= b + 1e-12 for a, b in zip(eps, eps[1:])) and abs(eps[-1] - p["epsilon"]) < 1e-9, eps
        pr = c.predict_proba(X)
        assert pr.shape == (2000, 2) and np.allclose(pr.sum(axis=1), 1)
        assert np.array_equal(c.predict(X), c.classes_[(c.decision_function(X) > 0).astype(int)])
        acc = c.score(X, y)
        print("# %s at epsilon 2 on 2000 blob samples: accuracy %.3f" % (E.__name__, acc))
        assert acc > 0.8, (E.__name__, acc)  # chance is 0.5; the non-private fits reach 0.96-0.998
    every = DOADPClassifier(max_rounds=40, random_state=0, record_history=1).fit(X, y).history_[0]
    assert [r["round"] for r in every] == list(range(1, 41)) + [40], every[-3:]  # every round (+ the final report)
    h = DPDDAClassifier(loss="hinge")
    assert not hasattr(h, "predict_proba")
    # C instead of alpha, hinge, squared; FedPLT refuses the non-smooth hinge
    assert DOADPClassifier(C=10.0, loss="squared", random_state=0).fit(X, y).score(X, y) > 0.8
    raises(ValueError, FedPLTClassifier(loss="hinge").fit, X, y, contains="smooth")
    raises(ValueError, DPDDAClassifier(n_nodes=4000).fit, X, y, contains="every node needs")


@case
def random_state_gives_reproducible_fits_and_none_the_secure_mode():
    X, y = blobs(n=200, d=3)
    for E in ESTIMATORS:
        a = E(random_state=5).fit(X, y).coef_
        b = E(random_state=5).fit(X, y).coef_
        c = E(random_state=6).fit(X, y).coef_
        assert np.array_equal(a, b) and not np.array_equal(a, c), E.__name__
        s = E(random_state=None).fit(X, y)
        assert s.privacy_["randomness"] == "secure"


@case
def multiclass_one_vs_rest_splits_the_budget():
    X, y = blobs(n=2000, d=4, k=3, seed=2)
    c = FedPLTClassifier(epsilon=3.0, random_state=0).fit(X, y)
    assert c.coef_.shape == (3, 4) and c.decision_function(X).shape == (2000, 3)
    per = c.privacy_["per_model"]
    assert len(per) == 3 and all(p["epsilon"] <= 1.0 + 1e-9 for p in per), per
    assert abs(c.privacy_["epsilon"] - sum(p["epsilon"] for p in per)) < 1e-12 and c.privacy_["epsilon"] <= 3.0 + 1e-9
    assert "one-vs-rest" in c.privacy_["notes"]
    assert c.score(X, y) > 0.8, c.score(X, y)


@case
def partial_fit_runs_more_rounds_on_the_same_budget():
    X, y = blobs(n=300, d=4)
    c = DOADPClassifier(epsilon=1.0, max_rounds=100, partial_rounds=30, random_state=3, record_history=True)
    rounds = []
    for _ in range(5):
        c.partial_fit(X, y, classes=[0, 1])
        rounds.append(c.privacy_["rounds"][0])
        assert c.privacy_["epsilon"] <= 1.0 + 1e-9
    assert rounds == [30, 60, 90, 100, 100], rounds
    full = DOADPClassifier(epsilon=1.0, max_rounds=100, random_state=3).fit(X, y)
    assert np.array_equal(full.coef_, c.coef_)  # the slices make exactly the full run
    raises(ValueError, c.partial_fit, X[:, :3], y)
    raises(ValueError, c.partial_fit, X, y + 5, contains="not in the first call")
    # an unfinished run does not survive pickling: partial_fit then refuses to start a second one silently
    u = DOADPClassifier(max_rounds=100, partial_rounds=30, random_state=3).partial_fit(X, y)
    u2 = pickle.loads(pickle.dumps(u))
    assert np.array_equal(u2.coef_, u.coef_)
    raises(ValueError, u2.partial_fit, X, y, contains="pickled in the middle")
    assert u2.fit(X, y).privacy_["rounds"] == [100]
    # an accountant without calibration: noise_multiplier bisects on its epsilon (same answer)
    import dpdo.privacy as P
    orig = P.Accountant.calibrate_sigma

    def unsupported(*a, **k):
        raise dpdo.Unsupported(-8, "no calibration here")
    P.Accountant.calibrate_sigma = unsupported
    try:
        z_bisect = P.noise_multiplier(1.0, 1e-5, 0.01, steps=1000, accountant="rdp")
    finally:
        P.Accountant.calibrate_sigma = orig
    z_c = P.noise_multiplier(1.0, 1e-5, 0.01, steps=1000, accountant="rdp")
    assert abs(z_bisect / z_c - 1) < 1e-8, (z_bisect, z_c)


@case
def sparse_input_and_node_ids():
    import scipy.sparse as sp
    X, y = blobs(n=240, d=6)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.2, X, 0.0))
    a = DPWORSGDClassifier(random_state=2).fit(Xs, y)
    b = DPWORSGDClassifier(random_state=2).fit(Xs.toarray(), y)
    assert np.allclose(a.coef_, b.coef_, rtol=0, atol=1e-12), np.abs(a.coef_ - b.coef_).max()
    ids = np.arange(240) % 6
    c = DPDDAClassifier(random_state=0, network="complete").fit(X, y, node_ids=ids)
    assert c.privacy_["epsilon"] > 0 and len(c._runs[0].alg.nodes) == 6
    d = DPDDAClassifier(random_state=0, network="complete").fit(X, y, groups=ids)
    assert np.array_equal(c.coef_, d.coef_)


@case
def estimators_pickle_and_predict_the_same():
    X, y = blobs(n=200, d=3)
    for E in ESTIMATORS:
        c = E(random_state=0).fit(X, y)
        c2 = pickle.loads(pickle.dumps(c))
        assert np.array_equal(c2.predict(X), c.predict(X)) and repr(c2.privacy_) == repr(c.privacy_)
        assert repr(c2).startswith(E.__name__ + "(")


FASHION = "/usr/share/datasets/fashion-mnist"


def fashion(kind, classes=(0, 2)):
    X = np.frombuffer(gzip.open("%s/%s-images-idx3-ubyte.gz" % (FASHION, kind)).read(), np.uint8, offset=16)
    y = np.frombuffer(gzip.open("%s/%s-labels-idx1-ubyte.gz" % (FASHION, kind)).read(), np.uint8, offset=8)
    X = X.reshape(-1, 784).astype(np.float64)
    keep = np.isin(y, classes)
    X = X[keep]
    return X / np.linalg.norm(X, axis=1, keepdims=True), y[keep]


@case
def fashion_mnist_dp_logistic_within_the_stated_margin():
    if not os.path.exists(FASHION):
        print("# %s absent: not tested" % FASHION)
        return
    (X, y), (Xt, yt) = fashion("train"), fashion("t10k")
    if HAVE_SKLEARN:
        from sklearn.linear_model import LogisticRegression
        base = LogisticRegression(max_iter=1000).fit(X, y).score(Xt, yt)
    else:
        base = FedPLTClassifier(epsilon=float("inf"), n_nodes=10, random_state=0).fit(X, y).score(Xt, yt)
    accs = []
    for rs in (None, 11):  # the secure default and one reproducible seed
        c = FedPLTClassifier(epsilon=1.0, n_nodes=10, random_state=rs).fit(X, y)
        assert c.privacy_["epsilon"] <= 1.0 + 1e-9
        accs.append(c.score(Xt, yt))
    print("# Fashion-MNIST T-shirt vs pullover, 10 nodes: Fed-PLT at epsilon 1: %s; non-private logistic "
          "regression %.4f" % (", ".join("%.4f" % a for a in accs), base))
    # the margin stated in docs/python.md: within 3 accuracy points of the non-private model
    assert all(a >= base - 0.03 for a in accs) and all(a > 0.9 for a in accs), (accs, base)


# ---- privacy helpers ----------------------------------------------------------------------------
# TF Privacy, tutorials/README.md, "Select Parameters" (MNIST, 60000 examples, batch 256, delta 1e-5;
# tensorflow/privacy): noise 1.12 / 60 epochs -> eps 2.92; 0.6 / 30 -> 9.74; 1.2 / 10 -> 1.20.
# Those figures come from TF Privacy's RDP accountant: its order grid (TF_PRIVACY_ORDERS) and the
# classic RDP-to-DP conversion; they are printed to 2 decimals, so the tolerance is 0.005 plus the
# 0.013 by which our exact computation of the 0.6 row exceeds the published 9.74.
TF_PUBLISHED = [(1.12, 60, 2.92), (0.6, 30, 9.74), (1.2, 10, 1.20)]


@case
def compute_dp_sgd_privacy_matches_tf_privacy_published_values():
    for z, epochs, eps in TF_PUBLISHED:
        got, order = privacy.compute_dp_sgd_privacy(60000, 256, z, epochs, 1e-5, orders=privacy.TF_PRIVACY_ORDERS,
                                                    conversion="classic", accountant="rdp")
        assert abs(got - eps) <= 0.005 + 0.013, (z, epochs, got, eps)
        assert order in privacy.TF_PRIVACY_ORDERS
        improved, _ = privacy.compute_dp_sgd_privacy(60000, 256, z, epochs, 1e-5, accountant="rdp")
        assert 0.7 * got < improved <= got, (improved, got)  # the improved conversion is never worse
    # Opacus-style inverse: the noise for (2.92, 1e-5) over 60 epochs is TF's 1.12
    z = privacy.noise_multiplier(2.92, 1e-5, 256 / 60000, epochs=60, orders=privacy.TF_PRIVACY_ORDERS,
                                 conversion="classic", accountant="rdp")
    assert abs(z - 1.12) < 0.005, z


@case
def privacy_helpers_agree_with_the_c_accountant_and_leave_ledgers_alone():
    q, T, z, delta = 256 / 60000, 14063, 1.1, 1e-5
    led = dpdo.Ledger(1)
    led.charge(dpdo.Event.gaussian(1.0, z, dpdo.Sampling.poisson(q)), T)
    direct = dpdo.Accountant(led, "rdp").epsilon(delta)
    assert privacy.epsilon(z, q, delta, steps=T, accountant="rdp") == direct
    assert privacy.compute_dp_sgd_privacy(60000, 256, z, 60, delta, accountant="rdp")[0] == direct  # ceil(60*60000/256)
    assert privacy.epsilon(z, q, delta, epochs=60, accountant="rdp") == direct
    # noise_multiplier inverts epsilon (to the calibration's 1e-10)
    for target in (0.5, 1.0, 3.0, 8.0):
        s = privacy.noise_multiplier(target, delta, q, steps=T)  # the default accountant ("auto" or "rdp")
        e = privacy.epsilon(s, q, delta, steps=T)
        assert e <= target * (1 + 1e-9) and e > target * (1 - 1e-6), (target, s, e)
    assert led.charges(0) == T  # the user's ledger is untouched
    assert privacy.default_accountant() in ("auto", "rdp")
    assert privacy.epsilon(z, 1.0, delta, steps=T, accountant="zcdp") > 0  # unsampled: zCDP applies
    raises(dpdo.Unsupported, privacy.epsilon, z, q, delta, steps=T, accountant="zcdp", contains="use rdp")
    raises(dpdo.InvalidArgument, privacy.epsilon, z, q, delta, steps=T, accountant="no-such")
    raises(dpdo.InvalidArgument, privacy.epsilon, z, q, delta, steps=T, epochs=3)
    raises(dpdo.InvalidArgument, privacy.epsilon, z, 1.5, delta, steps=T)
    raises(dpdo.NumericError, privacy.noise_multiplier, 1e-9, 1e-12, 1.0, steps=10 ** 9)
    assert privacy.epsilon(0.0, q, delta, steps=10) == math.inf


@case
def dpdo_privacy_cli_takes_n_batch_size_epochs_and_json():
    cli = os.path.join(REPO, os.environ.get("BUILD", "build"), "bin", "dpdo-privacy")
    if not os.path.exists(cli):
        raise AssertionError("%s not built" % cli)
    r = subprocess.run([cli, "--n", "60000", "--batch-size", "256", "--epochs", "60", "--sigma", "1.1",
                        "--delta", "1e-5", "--method", "rdp", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    want, _ = privacy.compute_dp_sgd_privacy(60000, 256, 1.1, 60, 1e-5, accountant="rdp")
    assert out["steps"] == 14063 and abs(out["q"] - 256 / 60000) < 1e-15, out
    assert abs(out["epsilon"] - want) <= 1e-9 * want, (out, want)
    r = subprocess.run([cli, "--n", "60000", "--batch-size", "256", "--epochs", "60", "--sigma", "1.1",
                        "--steps", "5"], capture_output=True, text=True)
    assert r.returncode == 2 and "steps" in r.stderr, r.stderr


@case
def sklearn_module_imports_without_scikit_learn():
    code = r'''
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ImportError("blocked for the test")
sys.meta_path.insert(0, Block())
import numpy as np
from dpdo.sklearn import DOADPClassifier, HAVE_SKLEARN
assert not HAVE_SKLEARN
X = np.r_[np.random.RandomState(0).randn(50, 2) + 2, np.random.RandomState(1).randn(50, 2) - 2] / 5
y = np.r_[np.ones(50), np.zeros(50)]
c = DOADPClassifier(random_state=0).set_params(epsilon=5.0)
assert c.get_params()["epsilon"] == 5.0 and "DOADPClassifier(" in repr(c)
print(c.fit(X, y).score(X, y))
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) > 0.9, r.stdout


@case
def library_plan_is_in_the_notes_and_the_paper_profile_keeps_the_fixed_settings():
    X, y = blobs(400, 5)
    for E in ESTIMATORS:
        lib = E(epsilon=1.0, n_nodes=4, random_state=0).fit(X, y)
        assert lib.privacy_["notes"].startswith("plan (library): "), lib.privacy_["notes"][:80]
        assert lib.plan_["profile"] == "library" and 0.2 <= lib.plan_["lipschitz"] <= 2.0, lib.plan_
        assert lib.privacy_["epsilon"] <= 1.0 * (1 + 1e-9)
        paper = E(epsilon=1.0, n_nodes=4, random_state=0, profile="paper").fit(X, y)
        assert paper.plan_["profile"] == "paper" and paper.plan_["averaging"] == 0.0
        if E is not DPWORSGDClassifier:
            assert paper.privacy_["rounds"] == [500 if E is not FedPLTClassifier else 50], paper.privacy_["rounds"]
    raises(ValueError, DOADPClassifier(profile="fast").fit, X, y)


@case
def intercept_feature_is_one_over_sqrt_d_when_private_and_intercept_is_its_weight_times_it():
    X, y = blobs(400, 9)
    for E in ESTIMATORS:
        c = E(epsilon=1.0, n_nodes=4, random_state=0).fit(X, y)
        assert abs(c.plan_["intercept_scaling"] - 1.0 / 3.0) < 1e-12, c.plan_
        w = c._runs[0].model()  # the C run's model on the augmented rows [x, 1/sqrt(d)]
        m = np.hstack([X, np.full((len(X), 1), 1.0 / 3.0)]) @ w
        assert np.allclose(c.decision_function(X), m, rtol=1e-10, atol=1e-12)
        assert "intercept feature 0.333" in c.privacy_["notes"], c.privacy_["notes"][:200]
        assert E(epsilon=float("inf"), n_nodes=4, random_state=0).fit(X, y).plan_["intercept_scaling"] == 1.0
        assert E(epsilon=1.0, n_nodes=4, random_state=0, profile="paper").fit(X, y).plan_.get(
            "intercept_scaling", 1.0) == 1.0


summary()
