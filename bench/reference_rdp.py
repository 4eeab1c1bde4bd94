#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A straightforward Python implementation of the RDP accountant for the
Poisson-subsampled Gaussian mechanism, written from the published math
(Mironov, Talwar, Zhang 2019, Sec. 3.3; conversion of Canonne, Kamath,
Steinke 2020 Prop. 12 / Balle et al. 2020). It follows the same algorithm as
the widely used Python accountants (TensorFlow Privacy / Opacus
`compute_rdp` + `get_privacy_spent`): per order, a log-space sum of binomial
terms for integer orders and the two-sided erfc series for fractional orders,
then the (eps, delta) conversion minimised over the orders. It is the
baseline that bench/bench_accountant.c compares against.

Usage: reference_rdp.py [seconds]   prints "epsilon <eps> order <alpha>" and
"queries_per_second <qps>" for q = 0.01, sigma = 1.1, T = 10000,
delta = 1e-5 on the default 156-order grid.
"""
import math
import sys
import time

import numpy as np


def log_add(a, b):
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    m = max(a, b)
    return m + math.log1p(math.exp(-abs(a - b)))


def log_sub(a, b):
    # log(e^a - e^b), a > b
    if b == -math.inf:
        return a
    return a + math.log1p(-math.exp(b - a))


def log_erfc(x):
    if x < 25.0:
        return math.log(math.erfc(x))
    r = 1.0 / (2.0 * x * x)
    return -x * x - math.log(x) - 0.5 * math.log(math.pi) + math.log(1 - r + 3 * r * r - 15 * r ** 3)


def log_comb(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def log_a_int(q, sigma, alpha):
    log_a = -math.inf
    for k in range(alpha + 1):
        t = log_comb(alpha, k) + k * math.log(q) + (alpha - k) * math.log1p(-q) + (k * k - k) / (2 * sigma ** 2)
        log_a = log_add(log_a, t)
    return log_a


def log_a_frac(q, sigma, alpha):
    log_a0, log_a1 = -math.inf, -math.inf
    z0 = sigma ** 2 * math.log(1 / q - 1) + 0.5
    i = 0
    coef_log, sign = 0.0, 1.0
    while True:
        j = alpha - i
        t0 = coef_log + i * math.log(q) + j * math.log1p(-q)
        t1 = coef_log + j * math.log(q) + i * math.log1p(-q)
        e0 = math.log(0.5) + log_erfc((i - z0) / (math.sqrt(2) * sigma))
        e1 = math.log(0.5) + log_erfc((z0 - j) / (math.sqrt(2) * sigma))
        s0 = t0 + (i * i - i) / (2 * sigma ** 2) + e0
        s1 = t1 + (j * j - j) / (2 * sigma ** 2) + e1
        if sign > 0:
            log_a0, log_a1 = log_add(log_a0, s0), log_add(log_a1, s1)
        else:
            log_a0, log_a1 = log_sub(log_a0, s0), log_sub(log_a1, s1)
        if i > alpha and max(s0, s1) < -30:
            break
        f = alpha - i
        if f < 0:
            sign = -sign
        coef_log += math.log(abs(f)) - math.log(i + 1)
        i += 1
    return log_add(log_a0, log_a1)


def rdp_order(q, sigma, alpha):
    if q == 0:
        return 0.0
    if np.isinf(alpha):
        return math.inf
    if q == 1.0:
        return alpha / (2 * sigma ** 2)
    if float(alpha).is_integer():
        return log_a_int(q, sigma, int(alpha)) / (alpha - 1)
    return log_a_frac(q, sigma, alpha) / (alpha - 1)


def compute_rdp(q, sigma, steps, orders):
    return np.array([rdp_order(q, sigma, a) for a in orders]) * steps


def get_privacy_spent(orders, rdp, delta):
    best, best_order = math.inf, None
    for a, r in zip(orders, rdp):
        if delta ** 2 + math.expm1(-r) >= 0:
            eps = 0.0
        else:
            eps = r + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1)
        if eps < best:
            best, best_order = max(eps, 0.0), a
    return best, best_order


def default_orders():
    return [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    orders = default_orders()
    q, sigma, steps, delta = 0.01, 1.1, 10000, 1e-5
    eps, order = get_privacy_spent(orders, compute_rdp(q, sigma, steps, orders), delta)
    print("epsilon %.12f order %g" % (eps, order))
    n, t0 = 0, time.process_time()
    while True:
        get_privacy_spent(orders, compute_rdp(q, sigma, steps, orders), delta)
        n += 1
        el = time.process_time() - t0
        if el >= seconds and n >= 3:
            break
    print("queries_per_second %.6g" % (n / el))


if __name__ == "__main__":
    main()
