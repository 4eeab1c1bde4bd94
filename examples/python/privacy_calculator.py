#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy calculator: epsilon of T Gaussian releases, or the sigma that meets a target epsilon.

    python3 privacy_calculator.py --sigma 1.1 --steps 10000 --poisson 0.01         # epsilon
    python3 privacy_calculator.py --epsilon 1 --steps 10000 --poisson 0.01         # sigma
    python3 privacy_calculator.py --sigma 4 --steps 100 --accountant exact          # no sampling

Sensitivity 1 unless --sensitivity is given; delta 1e-5 unless --delta.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import dpdo  # noqa: E402

ap = argparse.ArgumentParser(description="epsilon of repeated Gaussian releases, or sigma for a target")
ap.add_argument("--sigma", type=float, help="noise standard deviation (compute epsilon)")
ap.add_argument("--epsilon", type=float, help="target epsilon (compute sigma)")
ap.add_argument("--steps", type=float, default=1000, help="number of releases")
ap.add_argument("--delta", type=float, default=1e-5)
ap.add_argument("--sensitivity", type=float, default=1.0)
ap.add_argument("--poisson", type=float, help="Poisson sampling rate q")
ap.add_argument("--wor", nargs=2, type=int, metavar=("N", "M"), help="M of N without replacement")
ap.add_argument("--accountant", default="auto", help="auto (the tightest of rdp, exact, pld), rdp, pld, exact, zcdp")
a = ap.parse_args()
if (a.sigma is None) == (a.epsilon is None):
    ap.error("give exactly one of --sigma and --epsilon")

sampling = dpdo.Sampling.poisson(a.poisson) if a.poisson else dpdo.Sampling.wor(*a.wor) if a.wor else None
ledger = dpdo.Ledger(1)
acc = dpdo.Accountant(ledger, a.accountant)
try:
    if a.sigma is not None:
        steps = int(a.steps)
        ledger.charge(dpdo.Event.gaussian(a.sensitivity, a.sigma, sampling), steps)
        print("epsilon = %.6g at delta = %g (%s accountant, %d releases, sigma %g)"
              % (acc.epsilon(a.delta), a.delta, acc.name, steps, a.sigma))
    else:
        s = acc.calibrate_sigma(a.epsilon, a.delta, a.steps, a.sensitivity, sampling)
        print("sigma = %.6g for epsilon %g at delta %g (%s accountant, %g releases)"
              % (s, a.epsilon, a.delta, acc.name, a.steps))
except dpdo.DpdoError as e:  # e.g. an accountant that cannot handle this sampling
    sys.exit("privacy_calculator: %s" % e.message)
