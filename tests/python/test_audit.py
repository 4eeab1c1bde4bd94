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


def same(r1, r2):
    """equal results (NaN fields equal NaN)"""
    def key(v):
        return "nan" if isinstance(v, float) and math.isnan(v) else v
    return {k: key(v) for k, v in r1.items()} == {k: key(v) for k, v in r2.items()}


def quick(kind="dp-dda", **kw):
    opts = dict(runs=40, randomness="reproducible", seed=3, method="release", single_node=1)
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
    assert same(quick().run(), quick().run())
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
    assert same(a.run(), r)  # still usable after a cancel and an error
    raises(dpdo.InvalidArgument, audit.Audit, "dp-dda", nonsense=1, contains="nonsense")
    raises(dpdo.InvalidArgument, audit.Audit, "dp-dda", method="psychic", contains="method")
    raises(dpdo.InvalidArgument, audit.Audit, "no-such", contains="unknown algorithm")
    e = raises(dpdo.InvalidArgument, audit.Audit, "dp-dda", runs=5)
    assert "runs" in str(e), str(e)
    assert "release audit" in repr(a)


@case
def the_default_audit_is_white_box_on_the_secure_path_at_every_node():
    r = audit.Audit("dp-dda", runs=2000, algorithm_options=dict(epsilon=2.0, max_rounds=3)).run()
    assert r.path == "secure" and r["keys"] == "secure" and r.nodes_audited == 2, dict(r)
    assert r.releases == 3 and r.runs == 2 * 2 * 2000, r
    assert r.eps_lower == max(r.eps_lower_white, r.eps_lower_black) and r.verdict == "consistent", r
    assert 0.3 < r.eps_lower_white < r.eps_claimed, r  # 2000 runs: about 0.6-0.8 of the claim
    rp = audit.Audit("dp-dda", runs=300, path="reproducible", randomness="reproducible",
                     algorithm_options=dict(epsilon=2.0, max_rounds=3)).run()
    assert rp.path == "reproducible" and rp["keys"] == "reproducible", rp
    print("# white box, secure path: eps_lower %.3f (mu >= %.3f) of claimed %.3f"
          % (r.eps_lower_white, r.mu_lower, r.eps_claimed))


@case
def mu_lower_brackets_a_known_shift():
    # scores N(mu, 1) against N(0, 1) from a fixed linear congruential uniform stream (Box-Muller)
    state = [12345]

    def unif():
        state[0] = (6364136223846793005 * state[0] + 1442695040888963407) % 2**64
        return ((state[0] >> 11) + 0.5) / 2**53

    def normal():
        return math.sqrt(-2 * math.log(unif())) * math.cos(2 * math.pi * unif())
    n, mu = 20000, 0.5
    s1 = [mu + normal() for _ in range(n)]
    s0 = [normal() for _ in range(n)]
    lo = audit.mu_lower(s1, s0, 0.95)
    # below the truth, and within the intervals' width (about 3 sqrt(2/n) + the spread's share)
    assert mu - 0.08 < lo < mu, lo
    assert audit.mu_lower(s0, s1, 0.95) == 0.0  # no positive shift
    assert math.isnan(audit.mu_lower([3 * x for x in s1], s0, 0.95))  # spreads differ


@case
def eps_laplace_lower_matches_the_tables_on_a_constructed_sample():
    # the C test's sample (tests/test_audit.c, test_laplace_lower): median ranks 8 and 23 of 30,
    # deviation sums 281 + 281, the 0.01 quantile of chi-square(120) = 86.923 (tables)
    s1 = [100.0 + i for i in range(30)]
    s0 = [float(i) for i in range(30)]
    want = (107 - 22) * 86.923 / (2 * 562)
    got = audit.eps_laplace_lower(s1, s0, 0.97)
    assert abs(got - want) <= 1e-3 * want, (got, want)
    assert audit.eps_laplace_lower(s0, s1, 0.97) == 0.0


_tap.summary()
