#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The NumPy side of bench/bench_vs_numpy.c: one round of each reference in shared/bench-ref
(imported as they are, unchanged), on the same problem sizes as the libdpdo side, timed like
run_numpy_ref.py (warm-up, repetitions of consecutive rounds on the same state) but reporting the
best repetition in wall time and in process CPU time, so that a run on a shared machine can be
read both ways. Usage: numpy_side.py <bench-ref dir> [reps]. One line per round:
    <name> <best wall us/round> <best CPU us/round>
Data: epsilon-like 40000 x 2000 (n = 20 nodes x q = 2000; the runner uses q = 20000: a round
reads b random rows either way), rcv1-like 40000 x 47236, Fed-PLT N = 100, n = 5, q = 250,
DP-WOR-SGD M = 10, d = 50, 6000 rows per node; seeds as in run_numpy_ref.py."""
import sys

sys.dont_write_bytecode = True
import ctypes
import os
import time

ref = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
sys.path.insert(0, ref)
import numpy as np  # noqa: E402

import do_adp_ref  # noqa: E402
import dp_dda_ref  # noqa: E402
import dp_wor_sgd_ref  # noqa: E402
import fed_plt_ref  # noqa: E402
import synth  # noqa: E402

try:  # the runner's allocator setting (no per-round page faults)
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-3, 32 << 20)
    libc.mallopt(-1, 1 << 30)
except OSError:
    pass


def best(step, rounds, warm=50):
    for _ in range(warm):
        step()
    bw = bc = float("inf")
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(rounds):
            step()
        bw = min(bw, (time.perf_counter() - t0) / rounds)
        bc = min(bc, (time.process_time() - c0) / rounds)
    return bw * 1e6, bc * 1e6


def out(name, wc):
    print(f"{name} {wc[0]:.2f} {wc[1]:.2f}", flush=True)


X, y = synth.epsilon_like(20 * 2000, 2000, seed=0)
for b in (2, 20):
    alg = dp_dda_ref.config_l2_svm(X, y, b=b, n=20, seed=0)
    out(f"dda_l2_epsilon_b{b}", best(alg.step, 200))
alg = do_adp_ref.config_logistic(X, y, n=20, p=0.8, kd=0.3, seed=0)
out("adp_logistic_epsilon", best(alg.step, 200))
del X, y, alg
Xr, yr = synth.rcv1_like(20 * 2000, d=47236, density=0.0016, seed=1)
alg = dp_dda_ref.config_l1_svm(Xr, yr, b=4, n=20, seed=0)
out("dda_l1_rcv1_b4", best(alg.step, 50, warm=20))
del Xr, yr, alg
A, B = synth.fedplt_logistic(N=100, n=5, q=250, s=3.0, seed=0)
alg = fed_plt_ref.config_logistic(A, B, seed=0)
wc = best(alg.step, 200)
out("fedplt_builtin", wc)
out("fedplt_user_callback", wc)
Xw, yw = synth.epsilon_like(10 * 6000, 50, seed=3, threads=1)
alg = dp_wor_sgd_ref.config_always_global(Xw, yw, M=10, seed=0)
out("wor_always_global", best(alg.step, alg.K, warm=alg.K))
