#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""DP-DDA on a synthetic epsilon-like set, from Python.

20 nodes on a ring each hold 500 rows; every round 4 of them compute a noisy gradient and
average with a neighbour (Algorithm 1 of Liu, Johansson and Shi). The noise is calibrated so
that every node's data is (epsilon, 1e-5)-DP over the whole run, and the run prints both the
rigorous epsilon (RDP accountant) and the paper's Theorem 1 figure.

    PYTHONPATH=python DPDO_LIBRARY=build/lib/libdpdo.so.1 python3 examples/python/dp_dda_synthetic.py
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import dpdo  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--nodes", type=int, default=20)
ap.add_argument("--rows", type=int, default=500, help="rows per node")
ap.add_argument("--features", type=int, default=20)
ap.add_argument("--rounds", type=int, default=3000)
ap.add_argument("--epsilon", type=float, default=1.0)
ap.add_argument("--quick", action="store_true", help="a small run for tests")
a = ap.parse_args()
if a.quick:
    a.nodes, a.rows, a.rounds = 8, 100, 300

# Data: one synthetic set, split at random into equal shards (one per node).
ds = dpdo.Dataset.generate("epsilon-like", n=a.nodes * a.rows, d=a.features, seed=7)
loss = dpdo.Loss("logistic", a.features)
nodes = [dpdo.Node(shard, loss) for shard in ds.partition([a.rows] * a.nodes, seed=1)]

# Problem: mean logistic loss + (lambda/2)|x|^2, gossip on a ring, privacy per node.
reg = dpdo.Regularizer("l2", a.features, 0.1)
net = dpdo.Network.ring(a.nodes)
acc = dpdo.Accountant(dpdo.Ledger(a.nodes), "auto")  # the tightest valid figure (rdp, exact or pld)
alg = dpdo.Algorithm("dp-dda", nodes, net, reg, acc, seed=1, max_rounds=a.rounds, epsilon=a.epsilon, delta=1e-5,
                     params={"dda-active": 4, "dda-schedule": 3})  # 4 active; schedule 3: the paper's L2 runs

F0 = alg.objective(x=[0.0] * a.features)
for t in alg:  # one round per iteration
    if t % (a.rounds // 5) == 0:
        print("round %5d  F(x) = %.4f  epsilon = %.3f" % (t, alg.objective(), alg.epsilon))

x = alg.output()
margins, labels = ds.margins(x), ds.labels()
accuracy = sum(1 for m, y in zip(margins, labels) if m * y > 0) / len(labels)
eps, delta, _ = alg.privacy(dpdo.PRIVACY_RIGOROUS)
peps, pdelta, pvalid = alg.privacy(dpdo.PRIVACY_PAPER)
print("stopped after %d rounds (%s)" % (alg.round, alg.stop_reason))
print("F: %.4f -> %.4f, training accuracy %.3f" % (F0, alg.objective(), accuracy))
print("privacy: rigorous epsilon %.3f at delta %g (%s)" % (eps, delta, alg.privacy_source()))
print("         paper bound %.3f at delta %.3g (%s)" % (peps, pdelta, "valid" if pvalid else "preconditions fail"))
print("messages sent: %d, bytes: %d" % alg.comm()[::2])
