#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""60-digit reference epsilons for tests/test_pld.c (pld_small_delta_exact).

Unsampled Gaussian mechanism composed T times (sensitivity 1, noise sigma): the
composition is the Gaussian with mu = sqrt(T) / sigma, whose exact curve is
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
(Balle and Wang 2018, Theorem 8). eps(delta) is its root, found with mpmath at
80 digits and printed to 60.

Poisson-subsampled Gaussian (rate q, mu = 1/sigma), one release, with the
"remove" pair P = (1-q) N(0,1) + q N(mu,1), Q = N(0,1) and the "add" pair
(P and Q swapped) that lib/privacy/pld.c composes separately (eps = the larger
of the two): the hockey-stick divergence E_Q[(dP/dQ - e^eps)_+] has a closed
form (the likelihood ratio is monotone in x), poisson_remove / poisson_add.

Run: python3 scripts/pld-exact-values.py
"""
import mpmath as mp

mp.mp.dps = 80


def Phi(x):
    return mp.ncdf(x)


def gauss_delta(eps, mu):
    return Phi(-eps / mu + mu / 2) - mp.e ** eps * Phi(-eps / mu - mu / 2)


def eps_of(fdelta, delta, lo, hi):
    """the root of fdelta(eps) = delta in [lo, hi] (fdelta decreasing): bisection on
    log(fdelta) to a bracket of 1e-6, then the Illinois method to 70 digits"""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    g = lambda x: mp.log(fdelta(x)) - mp.log(delta)
    while hi - lo > mp.mpf("1e-6"):
        mid = (lo + hi) / 2
        if fdelta(mid) > delta:
            lo = mid
        else:
            hi = mid
    return mp.findroot(g, (lo, hi), solver="illinois", tol=mp.mpf(10) ** -140)


def poisson_remove(eps, q, mu):
    # P = (1-q) N(0,1) + q N(mu,1), Q = N(0,1): sup_S P(S) - e^eps Q(S)
    # the set {x > x0} with q e^{mu x - mu^2/2} + (1-q) = e^eps
    c = mp.e ** eps - (1 - q)
    if c <= 0:
        return 1 - mp.e ** eps
    x0 = (mp.log(c / q) + mu ** 2 / 2) / mu
    return q * (1 - Phi(x0 - mu)) + (1 - q) * (1 - Phi(x0)) - mp.e ** eps * (1 - Phi(x0))


def poisson_add(eps, q, mu):
    # P = N(0,1), Q = (1-q) N(0,1) + q N(mu,1): the set {x < x0} with
    # 1 = e^eps ((1-q) + q e^{mu x - mu^2/2})
    c = mp.e ** (-eps) - (1 - q)
    if c <= 0:
        return mp.mpf(0)
    x0 = (mp.log(c / q) + mu ** 2 / 2) / mu
    return Phi(x0) - mp.e ** eps * ((1 - q) * Phi(x0) + q * Phi(x0 - mu))


CASES = [  # (name, sigma, T, delta)
    ("sigma=2 T=1000 delta=1e-10", 2, 1000, mp.mpf("1e-10")),
    ("sigma=2 T=10000 delta=1e-10", 2, 10000, mp.mpf("1e-10")),
    ("sigma=8 T=1000 delta=1e-13", 8, 1000, mp.mpf("1e-13")),
]

POISSON1 = [  # (name, q, sigma, delta): one release, the closed forms poisson_remove/_add
    ("poisson q=0.5 sigma=0.5 T=1 delta=1e-10", mp.mpf("0.5"), mp.mpf("0.5"), mp.mpf("1e-10")),
    ("poisson q=0.01 sigma=0.25 T=1 delta=1e-13", mp.mpf("0.01"), mp.mpf("0.25"), mp.mpf("1e-13")),
]

if __name__ == "__main__":
    for name, q, sigma, delta in POISSON1:
        mu = 1 / sigma
        er = eps_of(lambda x: poisson_remove(x, q, mu), delta, 0, 200)
        # the add pair's loss is at most -log(1 - q): its root lies below that
        top = -mp.log(1 - q)
        ea = eps_of(lambda x: poisson_add(x, q, mu), delta, 0, top) if poisson_add(0, q, mu) > delta else 0
        print("%s: remove %s add %s" % (name, mp.nstr(er, 60), mp.nstr(ea, 60)))
    for name, sigma, T, delta in CASES:
        mu = mp.sqrt(T) / sigma
        e = eps_of(lambda x: gauss_delta(x, mu), delta, 0, 4000)
        print("%s: %s" % (name, mp.nstr(e, 60)))
