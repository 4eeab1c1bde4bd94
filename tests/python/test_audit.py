#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpdo.audit: the Python wrapper of the C auditor (include/dpdo/audit.h).

* the statistics against SciPy, an independent implementation: Clopper-Pearson bounds (beta
  quantiles), the bound from counts, the Steinke-Nasr-Jagielski one-run bound (a bisection over
  scipy.stats.binom written here);
* audits: a non-private run is caught (a large lower bound with an infinite claim), a private
  run's lower bound stays below its claim, a reproducible audit replays exactly, the one-run
  audit, progress and cancel, a raising progress callback, bad options named.
Prints TAP and the summary line."""
import math

import _tap
from _tap import case, raises

import dpdo  # noqa: E402
from dpdo import audit  # noqa: E402

try:
    from scipy import stats
except ImportError:  # pragma: no cover - Debian's python3-scipy is a test dependency
    stats = None


@case
def clopper_pearson_matches_scipy_beta_quantiles():
    assert stats is not None, "python3-scipy is needed (scripts/install-deps.sh)"
    worst = 0.0
    for n in (1, 7, 20, 100, 1000):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for conf in (0.9, 0.95, 0.999):
                lo, hi = audit.clopper_pearson(k, n, conf)
                rlo = 0.0 if k == 0 else stats.beta.ppf(1 - conf, k, n - k + 1)
                rhi = 1.0 if k == n else stats.beta.ppf(conf, k + 1, n - k)
                for a, b in ((lo, rlo), (hi, rhi)):
                    err = abs(a - b) / max(b, 1e-300) if b else abs(a)
                    worst = max(worst, err)
                    assert err < 1e-9, (k, n, conf, a, b)
                assert 0 <= lo <= k / n <= hi <= 1
    print("# worst relative difference to scipy.stats.beta.ppf: %.2e" % worst)
    raises(dpdo.InvalidArgument, audit.clopper_pearson, 5, 3)


@case
def epsilon_from_counts_matches_the_formula():
    for tp, n1, fp, n0, delta in ((90, 100, 10, 100, 0.0), (60, 100, 40, 100, 1e-5), (100, 100, 0, 100, 0.0),
                                  (50, 100, 50, 100, 0.0)):
        c = 1 - 0.05 / 2
        tpr_lo = 0.0 if tp == 0 else stats.beta.ppf(1 - c, tp, n1 - tp + 1)
        fpr_hi = 1.0 if fp == n0 else stats.beta.ppf(c, fp + 1, n0 - fp)
        cands = [0.0]
        for num, den in ((tpr_lo - delta, fpr_hi), (1 - fpr_hi - delta, 1 - tpr_lo)):
            if den <= 0:
                cands.append(math.inf)
            elif num > 0:
                cands.append(math.log(num / den))
        ref = max(cands)
        got = audit.epsilon_from_counts(tp, n1, fp, n0, delta, 0.95)
        assert abs(got - ref) <= 1e-9 * max(1.0, ref), (tp, fp, got, ref)
    assert audit.epsilon_from_counts(50, 100, 50, 100) == 0.0  # a coin flip shows nothing
    assert audit.epsilon_from_counts(100, 100, 0, 100) > 3.0


def snj_reference(m, r, v, conf):
    """The one-run bound with delta = 0: the largest eps with P[Bin(r, e^eps/(1+e^eps)) >= v] < 1 - conf."""
    def rejected(eps):
        return stats.binom.sf(v - 1, r, math.exp(eps) / (1 + math.exp(eps))) < 1 - conf
    if not rejected(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while rejected(hi):
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if rejected(mid):
            lo = mid
        else:
            hi = mid
    return lo


@case
def one_run_bound_matches_an_independent_bisection():
    prev = -1.0
    for v in (10, 12, 15, 18, 20):
        got = audit.one_run_epsilon(1000, 20, v, 0.0, 0.95)
        ref = snj_reference(1000, 20, v, 0.95)
        assert abs(got - ref) <= 1e-7 * max(1.0, ref), (v, got, ref)
        assert got >= prev
        prev = got
    assert audit.one_run_epsilon(1000, 20, 10, 0.0, 0.95) == 0.0
    # delta > 0 only weakens the bound
    assert audit.one_run_epsilon(1000, 20, 18, 1e-6, 0.95) <= audit.one_run_epsilon(1000, 20, 18, 0.0, 0.95)


def quick(kind="dp-dda", **kw):
    opts = dict(runs=40, randomness="reproducible", seed=3)
    opts.update(kw)
    ao = opts.pop("algorithm_options", dict(epsilon=4.0, max_rounds=3))
    return audit.Audit(kind, algorithm_options=ao, **opts)


@case
def a_non_private_run_is_caught_and_a_private_one_is_not():
    r = quick(algorithm_options=dict(noise_mode=dpdo.NOISE_NONE, max_rounds=3)).run()
    assert r.eps_claimed == math.inf and r.verdict == "consistent", r
    # the attack is perfect on the test split: 20 runs each, TPR 1, FPR 0 -> the bound of
    # epsilon_from_counts(20, 20, 0, 20)
    assert r.tpr == 1.0 and r.fpr == 0.0, r
    assert abs(r.eps_lower - audit.epsilon_from_counts(20, 20, 0, 20, r.delta, 0.95)) < 1e-12, r
    assert r.eps_lower > 1.2, r
    p = quick().run()
    assert 3.9 < p.eps_claimed < 4.1 and p.eps_lower <= p.eps_claimed and p.verdict == "consistent", p
    assert p.runs == 80 and p.test_runs == 20 and p.rounds == 3 and p.sigma > 0, p
    print("# non-private: eps_lower %.3f (claim inf); private: eps_lower %.3f (claim %.3f)"
          % (r.eps_lower, p.eps_lower, p.eps_claimed))


@case
def a_reproducible_audit_replays_and_one_run_audits_work():
    assert dict(quick().run()) == dict(quick().run())
    o = quick(method="one-run", canaries=50, guesses=10,
              algorithm_options=dict(noise_mode=dpdo.NOISE_NONE, max_rounds=3)).run()
    assert o.canaries == 50 and o.runs == 2 and o.guesses == 20 and o.correct <= o.guesses, o
    assert o.eps_lower == audit.one_run_epsilon(50, o.guesses, o.correct, o.delta, o.confidence), o
    assert o.correct == 20 and o.eps_lower > 1.0, o  # no noise: every guess right


@case
def progress_cancel_and_errors():
    seen = []
    a = quick()
    r = a.run(progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] and [d for d, _ in seen] == sorted(d for d, _ in seen), seen
    raises(dpdo.Canceled, a.run, progress=lambda done, total: done >= 3)

    def boom(done, total):
        raise RuntimeError("stop here")
    e = raises(dpdo.CallbackError, a.run, progress=boom)
    assert isinstance(e.__cause__, RuntimeError)
    assert dict(a.run()) == dict(r)  # still usable after a cancel and an error
    raises(dpdo.InvalidArgument, audit.Audit, "dp-dda", nonsense=1, contains="nonsense")
    raises(dpdo.InvalidArgument, audit.Audit, "dp-dda", method="psychic", contains="method")
    raises(dpdo.InvalidArgument, audit.Audit, "no-such", contains="unknown algorithm")
    e = raises(dpdo.InvalidArgument, audit.Audit, "dp-dda", runs=5)
    assert "runs" in str(e), str(e)
    assert "release audit" in repr(a)


_tap.summary()
