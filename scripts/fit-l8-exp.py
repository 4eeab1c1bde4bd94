#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fit of the 8-lane kernel's exp polynomial (lib/data/kernels_l8_exp.h, DPDO__L8E_C0..C9).

Q(r) ~ (e^r - 1 - r) / r^2 on [-ln2/32, ln2/32] (slightly widened: the reduced argument of the
16-entry table exp), degree 4, minimising the relative error of 1 + r + r^2 Q(r) against e^r
(weight r^2 / e^r) by Lawson's iteratively reweighted least squares on 400 Chebyshev nodes in
50-digit arithmetic (mpmath); prints the coefficients rounded to double and the relative error of
the rounded polynomial on a fine grid, for degrees 3 and 4 (total 5 and 6), and the table
2^(j/16) rounded to double. A one-off generator (needs mpmath: Debian python3-mpmath); the build
does not run it.
"""
import mpmath as mp

mp.mp.dps = 50
A = mp.log(2) / 32 * mp.mpf("1.0001")


def f(r):
    return mp.mpf(1) / 2 if r == 0 else (mp.e**r - 1 - r) / r**2


def w(r):
    return r**2 / mp.e**r


def fit(deg, iters=40, n=400):
    xs = [A * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    lw = [mp.mpf(1)] * n
    c = None
    for _ in range(iters):
        M = mp.matrix(n, deg + 1)
        b = mp.matrix(n, 1)
        for i, x in enumerate(xs):
            s = w(x) * mp.sqrt(lw[i])
            for j in range(deg + 1):
                M[i, j] = s * x**j
            b[i] = s * f(x)
        c = mp.lu_solve(M.T * M, M.T * b)
        errs = [abs(w(x) * (sum(c[j] * x**j for j in range(deg + 1)) - f(x))) for x in xs]
        tot = sum(lw[i] * errs[i] for i in range(n))
        lw = [lw[i] * errs[i] / tot for i in range(n)]
    return [float(c[j]) for j in range(deg + 1)]


for deg in (3, 4):
    cd = fit(deg)
    worst = 0
    for k in range(4001):
        x = -A + 2 * A * k / 4000
        q = sum(mp.mpf(cd[j]) * x**j for j in range(deg + 1))
        worst = max(worst, abs((1 + x + x * x * q) / mp.e**x - 1))
    print("total degree %d: max relative error %s" % (deg + 2, mp.nstr(worst, 5)))
    print("  " + ", ".join(v.hex() for v in cd))

print("table 2^(j/16), j = 0 .. 15:")
print("  " + ", ".join(float(mp.mpf(2) ** (mp.mpf(j) / 16)).hex() for j in range(16)))
