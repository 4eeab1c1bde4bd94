#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per-round overhead of stepping from Python (issue 9; goal: under 2 us extra per step()).

A small DP-DDA problem (4 nodes, d = 10, no noise) is stepped N rounds three ways on one
algorithm handle (reset in between, same rounds): one C call dpdo_algorithm_run(alg, N)
(stepping from C), a Python loop of Algorithm.step(), and a Python loop calling the raw ctypes
function. The difference per round is what Python costs (it includes the per-handle thread
guard). Then two separate algorithms run() in two threads against the same two run one after
the other: the GIL is released during C calls, so on two free cores the threads take about half
the time (speedup near 2; less on a loaded machine). Output: "python_<key> <value>"."""
import threading
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
os.environ.setdefault("DPDO_LIBRARY", os.path.join(REPO, os.environ.get("BUILD", "build"), "lib", "libdpdo.so.1"))
import dpdo  # noqa: E402
from dpdo._lib import lib  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
ds = dpdo.Dataset.generate("epsilon-like", n=400, d=10, seed=1)
loss = dpdo.Loss("logistic", 10)
nodes = [dpdo.Node(s, loss) for s in ds.partition([100] * 4)]
alg = dpdo.Algorithm("dp-dda", nodes, dpdo.Network.complete(4), dpdo.Regularizer("l2", 10, 0.1), None,
                     noise_mode=dpdo.NOISE_NONE, max_rounds=N + 1)


def best(fn, reps=5):
    t = []
    for _ in range(reps):
        alg.reset()
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t) / N * 1e6


def c_loop():
    alg.run(N)


def py_loop():
    step = alg.step
    for _ in range(N):
        step()


def raw_loop():
    f, h = lib.dpdo_algorithm_step, alg._h
    for _ in range(N):
        f(h)


c = best(c_loop)
py = best(py_loop)
raw = best(raw_loop)
print("python_rounds %d" % N)
print("python_c_us_per_step %.3f" % c)
print("python_wrapper_us_per_step %.3f" % py)
print("python_raw_ctypes_us_per_step %.3f" % raw)
print("python_extra_us_per_step %.3f (goal < 2)" % (py - c))

# two algorithms, two threads
M = 10 * N
algs = [dpdo.Algorithm("dp-dda", nodes_k, dpdo.Network.complete(4), dpdo.Regularizer("l2", 10, 0.1), None,
                       noise_mode=dpdo.NOISE_NONE, max_rounds=M)
        for nodes_k in ([dpdo.Node(s, dpdo.Loss("logistic", 10)) for s in ds.partition([100] * 4, seed=k)]
                        for k in (1, 2))]


def sequential():
    for a in algs:
        a.reset()
    t0 = time.perf_counter()
    for a in algs:
        a.run()
    return time.perf_counter() - t0


def threaded():
    for a in algs:
        a.reset()
    ts = [threading.Thread(target=a.run) for a in algs]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0


seq = min(sequential() for _ in range(3))
thr = min(threaded() for _ in range(3))
print("python_two_algorithms_sequential_s %.3f" % seq)
print("python_two_algorithms_two_threads_s %.3f" % thr)
print("python_two_threads_speedup %.2f (2 = both cores used; cores: %d)" % (seq / thr, os.cpu_count()))
sys.exit(0 if py - c < 2.0 else 1)
