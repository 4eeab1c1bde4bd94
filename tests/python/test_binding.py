#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the Python binding (python/dpdo), run by `make check` with Debian's python3.

Every wrapped class; error paths (bad shapes, NaN, closed handles, a raising callback whose
traceback survives, impossible privacy parameters); reference-count safety (10^5 create/destroy
cycles without growth in resident memory); a Python-stepped DP-DDA run bit-identical to the same
run stepped in C; and the same calls without NumPy (plain sequences in, lists out).
Prints TAP lines and "# summary: N passed, M failed"."""
import gc
import math
import os
import struct
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
if "DPDO_LIBRARY" not in os.environ:
    os.environ["DPDO_LIBRARY"] = os.path.join(REPO, os.environ.get("BUILD", "build"), "lib", "libdpdo.so.1")

import dpdo  # noqa: E402
from dpdo import _lib  # noqa: E402

NUMPY = dpdo.has_numpy()
if NUMPY:
    import numpy as np

passed = failed = 0


def case(fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print("ok %d - %s" % (passed + failed, fn.__name__))
    except Exception:  # noqa: BLE001 - a test runner reports everything
        failed += 1
        print("not ok %d - %s" % (passed + failed, fn.__name__))
        for line in traceback.format_exc().splitlines():
            print("#   " + line)
    sys.stdout.flush()
    return fn


def raises(exc, fn, *args, contains=None, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        if contains is not None and contains not in str(e):
            raise AssertionError("%s raised, but %r is not in %r" % (exc.__name__, contains, str(e)))
        return e
    raise AssertionError("%s not raised" % exc.__name__)


def bits(xs):
    return struct.pack("%dd" % len(xs), *[float(v) for v in xs])


def problem(n=8, q=60, d=12, seed=3):
    ds = dpdo.Dataset.generate("epsilon-like", n=n * q, d=d, seed=seed)
    loss = dpdo.Loss("logistic", d)
    shards = ds.partition([q] * n, seed=1)
    nodes = [dpdo.Node(s, loss) for s in shards]
    return ds, loss, nodes


def dda(nodes, d, seed=11, rounds=200, **kw):
    net = dpdo.Network.ring(len(nodes))
    reg = dpdo.Regularizer("l2", d, 0.05)
    acc = dpdo.Accountant(dpdo.Ledger(len(nodes)))
    kw.setdefault("randomness", dpdo.RANDOMNESS_REPRODUCIBLE)  # bit-identical reruns
    return dpdo.Algorithm("dp-dda", nodes, net, reg, acc, seed=seed, max_rounds=rounds, epsilon=2.0,
                          params={"dda-active": 4}, **kw)


@case
def library_loaded_and_every_prototype_resolves():
    assert dpdo.version() == dpdo.__version__, (dpdo.version(), dpdo.__version__)
    assert _lib.lib.dpdo_abi_major() == dpdo.ABI_MAJOR
    for name, (res, args) in _lib.PROTOS.items():
        f = getattr(_lib.lib, name)
        assert f.argtypes == args and f.restype == res, name
    assert len(_lib.PROTOS) > 120
    # a wrong ABI is refused at import
    env = dict(os.environ, DPDO_LIBRARY="/nonexistent/libdpdo.so.1")
    r = subprocess.run([sys.executable, "-c", "import dpdo"], env=env, capture_output=True, text=True,
                       cwd=os.path.join(REPO, "python"))
    assert r.returncode != 0 and "DPDO_LIBRARY" in r.stderr, r.stderr


@case
def dataset_from_arrays_and_generators():
    X = [[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [0.5, 0.5, 0.5], [3.0, 0.0, 0.0]]
    y = [1, -1, 1, -1]
    with dpdo.Dataset(np.array(X) if NUMPY else X, y) as ds:
        assert (ds.rows, ds.features) == (4, 3)
        assert list(ds.labels()) == [1, -1, 1, -1]
        m = ds.margins([1.0, 2.0, 3.0])
        want = [sum(a * b for a, b in zip(r, [1, 2, 3])) for r in X]
        assert bits(m) == bits(want), (m, want)
    # non-contiguous / integer input is copied, not misread
    if NUMPY:
        big = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2]
        ds = dpdo.Dataset(big, y)
        assert bits(ds.margins([1, 0, 0])) == bits(big[:, 0].astype(float))
    g = dpdo.Dataset.generate("rcv1-like", n=200, d=500, seed=2)
    assert (g.rows, g.features) == (200, 500)
    parts = g.partition([50, 50, 100], seed=4)
    assert [s.rows for s in parts] == [50, 50, 100]
    assert g.shard(10, 20).rows == 20


@case
def dataset_csr_and_libsvm():
    indptr, indices, data = [0, 2, 3, 5], [0, 2, 1, 0, 3], [1.0, 2.0, 3.0, -1.0, 0.5]
    y = [1, -1, 1]
    ds = dpdo.Dataset.csr(None, y, indptr=indptr, indices=indices, data=data, n_features=4)
    assert bits(ds.margins([1, 1, 1, 1])) == bits([3.0, 3.0, -0.5])
    try:
        if not NUMPY:
            raise ImportError("no NumPy")
        import scipy.sparse as sp
        m = sp.csr_matrix((data, indices, indptr), shape=(3, 4))
        ds2 = dpdo.Dataset.csr(m, y)
        assert bits(ds2.margins([1, 2, 3, 4])) == bits(m @ np.array([1, 2, 3, 4.0]))
    except ImportError:
        print("# scipy absent: CSR from a SciPy matrix not tested")
    with tempfile.NamedTemporaryFile("w", suffix=".libsvm", delete=False) as f:
        f.write("+1 1:0.5 3:1.5\n-1 2:2\n")
        path = f.name
    try:
        ds3 = dpdo.Dataset.libsvm(path)
        assert (ds3.rows, ds3.features) == (2, 3)
        assert list(ds3.labels()) == [1, -1]
        with open(path, "w") as f:
            f.write("+1 1:0.5 3:zz\n")
        raises(dpdo.FormatError, dpdo.Dataset.libsvm, path, contains="line 1")
    finally:
        os.unlink(path)
    raises(dpdo.IOFailure, dpdo.Dataset.libsvm, "/nonexistent.libsvm")
    fm = "/usr/share/datasets/fashion-mnist"
    img, lab = os.path.join(fm, "t10k-images-idx3-ubyte.gz"), os.path.join(fm, "t10k-labels-idx1-ubyte.gz")
    if os.path.exists(img) and os.path.exists(lab):
        f = dpdo.Dataset.idx(img, lab)
        assert (f.rows, f.features) == (10000, 784)
        assert set(int(v) for v in f.labels()) == set(range(10))
    else:
        print("# Fashion-MNIST absent: IDX loading not tested")


@case
def bad_shapes_and_nan_are_errors_with_messages():
    raises(dpdo.InvalidArgument, dpdo.Dataset, [1.0, 2.0], [1, 1], contains="2-D")
    raises(dpdo.InvalidArgument, dpdo.Dataset, [[1.0, 2.0], [3.0, 4.0]], [1, 1, 1], contains="expected 2")
    e = raises(dpdo.InvalidArgument, dpdo.Dataset, [[1.0, float("nan")], [3.0, 4.0]], [1, -1])
    assert "NaN" in e.message and e.status == dpdo.InvalidArgument(-1, "").status
    raises(dpdo.InvalidArgument, dpdo.Loss, "no-such-loss", 3)
    raises(dpdo.InvalidArgument, dpdo.Loss, "logistic", 0)
    raises(dpdo.InvalidArgument, dpdo.Regularizer, "l2", 3, -1.0)
    raises(dpdo.InvalidArgument, dpdo.Network.ring, 0)
    _, loss, nodes = problem()
    raises(dpdo.InvalidArgument, dpdo.Algorithm, "dp-dda", nodes, dpdo.Network.ring(7), None, None,
           noise_mode=dpdo.NOISE_NONE, contains="7 nodes")
    raises(dpdo.InvalidArgument, dpdo.Algorithm, "dp-dda", nodes, dpdo.Network.ring(8), None, None, bogus=1,
           contains="unknown option")
    raises(dpdo.InvalidArgument, dpdo.Algorithm, "no-such", nodes)
    alg = dda(nodes, 12)
    raises(dpdo.InvalidArgument, alg.set, "no-such-param", 1, contains="unknown parameter")
    raises(dpdo.InvalidArgument, alg.set, "dda-active", 99, contains="dda-active")
    raises(dpdo.InvalidArgument, alg.iterate, 99)
    raises(dpdo.InvalidArgument, alg.objective, x=[0.0] * 5, contains="expected 12")


@case
def impossible_privacy_parameters():
    _, loss, nodes = problem()
    net = dpdo.Network.ring(8)
    acc8 = dpdo.Accountant(dpdo.Ledger(8))
    raises(dpdo.InvalidArgument, dpdo.Algorithm, "dp-dda", nodes, net, None, acc8, delta=1.5, contains="delta")
    raises(dpdo.InvalidArgument, dpdo.Algorithm, "dp-dda", nodes, net, None, acc8, epsilon=-1.0, contains="epsilon")
    acc = dpdo.Accountant(dpdo.Ledger(1))
    raises(dpdo.InvalidArgument, acc.epsilon, 0.0)
    raises(dpdo.NumericError, acc.calibrate_sigma, 1e-9, 1e-300, 1e9, 1.0, dpdo.Sampling.poisson(1.0))


@case
def loss_regularizer_node_and_a_python_loss():
    ds, loss, nodes = problem(n=2, q=30, d=5)
    assert loss.dim == 5 and loss.name == "logistic"
    x = [0.1, -0.2, 0.3, 0.0, 0.5]
    v, g = nodes[0].evaluate(x, grad=True)

    def logistic(m, y):
        z = -y * m
        return (math.log1p(math.exp(z)), -y / (1.0 + math.exp(-z)))
    ploss = dpdo.Loss.phi(logistic, 5, bound=1.0)
    pn = dpdo.Node(nodes[0]._deps[0], ploss)
    v2, g2 = pn.evaluate(x, grad=True)
    assert abs(v - v2) < 1e-14 and max(abs(a - b) for a, b in zip(g, g2)) < 1e-14, (v, v2)
    reg = dpdo.Regularizer("l2", 5, 0.5)
    assert abs(reg.value(x) - 0.25 * sum(t * t for t in x)) < 1e-15

    # a batch loss over rows (squared loss on the margins, computed in Python)
    labels = ds.labels()
    X = [[0.0] * 5 for _ in range(ds.rows)]
    for j in range(5):
        e = [0.0] * 5
        e[j] = 1.0
        for i, mv in enumerate(ds.margins(e)):
            X[i][j] = mv

    def sq(xv, rows):
        tot, grad = 0.0, [0.0] * 5
        for r in rows:
            m = sum(a * b for a, b in zip(X[r], xv)) - labels[r]
            tot += 0.5 * m * m
            for j in range(5):
                grad[j] += m * X[r][j]
        return tot, grad
    bl = dpdo.Loss.batch(sq, 5)
    bn = dpdo.Node(nodes[0]._deps[0], bl)
    builtin = dpdo.Node(nodes[0]._deps[0], dpdo.Loss("squared", 5))
    a, ga = bn.evaluate(x, grad=True)
    b, gb = builtin.evaluate(x, grad=True)
    assert abs(a - b) < 1e-12 and max(abs(s - t) for s, t in zip(ga, gb)) < 1e-12, (a, b)


@case
def raising_callback_stops_the_round_and_keeps_the_traceback():
    ds, loss, nodes = problem(n=4, q=30, d=6)
    calls = {"n": 0}

    def bad(m, y):
        calls["n"] += 1
        if calls["n"] > 50:
            raise ZeroDivisionError("boom in user loss")
        return (max(0.0, 1 - y * m), -y if y * m < 1 else 0.0)
    ul = dpdo.Loss.phi(bad, 6, bound=1.0)
    unodes = [dpdo.Node(n._deps[0], ul) for n in nodes]
    alg = dpdo.Algorithm("dp-dda-baseline", unodes, dpdo.Network.ring(4), None, None, noise_mode=dpdo.NOISE_NONE,
                         max_rounds=100)
    e = raises(dpdo.CallbackError, lambda: [t for t in alg])
    assert isinstance(e.__cause__, ZeroDivisionError), repr(e.__cause__)
    tb = "".join(traceback.format_exception(type(e.__cause__), e.__cause__, e.__cause__.__traceback__))
    assert "boom in user loss" in tb and "def bad" not in tb and "in bad" in tb, tb
    assert "callback" in e.message and alg.state == "FAILED"
    r = alg.round
    raises(dpdo.StateError, alg.step)
    assert alg.round == r
    # the node evaluation path re-raises too
    raises(dpdo.CallbackError, unodes[0].evaluate, [0.0] * 6)


@case
def network_sampling_event_ledger_accountant():
    net = dpdo.Network.ring(10)
    assert net.nodes == 10 and net.edge_count == 10
    assert abs(dpdo.Network.complete(5).spectral_gap() - 1.0) < 1e-12
    assert dpdo.Network.edges(3, [(0, 1), (1, 2)]).edge_count == 2
    raises(dpdo.InvalidArgument, dpdo.Network.edges, 3, [(0, 1)], contains="node 2")
    led = dpdo.Ledger(3)
    acc = dpdo.Accountant(led, "rdp")
    ev = dpdo.Event.gaussian(1.0, 2.0, dpdo.Sampling.poisson(0.1))
    led.charge(ev, 100)
    eps = acc.epsilon(1e-5)
    assert 0 < eps < 10 and led.charges(0) == 100
    # calibration round trip: sigma for that epsilon over 100 more steps on a fresh ledger
    led2 = dpdo.Ledger(1)
    acc2 = dpdo.Accountant(led2, "rdp")  # the default is "auto": the round trip needs the same accountant
    s = acc2.calibrate_sigma(eps, 1e-5, 100, 1.0, dpdo.Sampling.poisson(0.1))
    assert abs(s - 2.0) < 1e-6, s
    text = led.save()
    led3 = dpdo.Ledger(3)
    led3.load(text)
    assert dpdo.Accountant(led3, "rdp").epsilon(1e-5) == eps
    k = len(text) // 2
    bad = text[:k] + ("7" if text[k] != "7" else "8") + text[k + 1:]
    raises(dpdo.DpdoError, dpdo.Ledger(3).load, bad)
    # exact Gaussian accountant agrees with the closed form for unsampled releases
    led4 = dpdo.Ledger(1)
    led4.charge(dpdo.Event.gaussian(1.0, 4.0), 16)
    e_exact = dpdo.Accountant(led4, "exact").epsilon(1e-5)
    e_rdp = dpdo.Accountant(led4, "rdp").epsilon(1e-5)
    assert e_exact < e_rdp, (e_exact, e_rdp)


@case
def paper_bounds_as_the_papers_state_them():
    assert "dp-dda-thm1" in dpdo.PaperBound.types()
    pb = dpdo.PaperBound("dp-dda-thm1", eps=0.8, delta0=0.01, b=2, n=20, q=20000, T=600000)
    assert "eps" in pb.parameters and "sigma_thm" in pb.outputs and pb.title
    out = pb.evaluate()
    # spec dp-dda oracle 5: the paper's own parameters give sigma 0.06303759, T_min 3.2e10, invalid
    assert abs(out["sigma_thm"] / 0.06303759 - 1) < 1e-7 and abs(out["T_min"] / 3.2e10 - 1) < 1e-12, out
    assert not pb.valid and "T_min" in pb.violations
    raises(dpdo.InvalidArgument, pb.set, "no-such", 1.0)
    raises(dpdo.InvalidArgument, dpdo.PaperBound, "no-such-theorem")


@case
def lifetimes_close_and_borrow_rules():
    ds, loss, nodes = problem(n=2, q=20, d=4)
    loss.close()  # borrowed by the nodes: deferred, the object counts as closed at once
    assert loss.closed and "closed" in repr(loss)
    raises(ValueError, lambda: loss.dim)
    alg = dpdo.Algorithm("dp-dda", nodes, dpdo.Network.complete(2), None, None, noise_mode=dpdo.NOISE_NONE,
                         max_rounds=3)
    nodes[0].close()  # borrowed by alg: deferred, alg still runs
    assert alg.run() == 3
    alg.close()
    alg.close()  # twice is fine
    raises(ValueError, alg.step)
    raises(ValueError, alg.iterate)
    assert nodes[0]._h.value is None  # freed with its last borrower
    for n in nodes:
        n.close()
    assert loss._h.value is None  # freed once the last node went
    # objects C borrows stay alive while only C refers to them
    _, l2, n2 = problem(n=2, q=20, d=4)
    a2 = dpdo.Algorithm("dp-dda", n2, dpdo.Network.complete(2), dpdo.Regularizer("l2", 4, 0.1),
                        dpdo.Accountant(dpdo.Ledger(2)), max_rounds=5)
    del n2, l2
    gc.collect()
    assert a2.run() == 5 and a2.epsilon > 0


def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@case
def no_leak_over_100k_create_destroy_cycles():
    def cycle(k):
        for i in range(k):
            loss = dpdo.Loss("hinge", 8)
            led = dpdo.Ledger(4)
            acc = dpdo.Accountant(led)
            if i % 2:
                acc.close()
                led.close()
                loss.close()
            # else: left to the finalizers
    cycle(10000)
    gc.collect()
    before = rss_kb()
    cycle(100000)
    gc.collect()
    grown = rss_kb() - before
    print("# RSS growth over 10^5 cycles: %d KiB" % grown)
    assert grown < 2048, grown


@case
def python_stepping_is_bit_identical_to_c_stepping():
    _, loss, nodes = problem()
    a = dda(nodes, 12)
    b = dda(nodes, 12)
    steps = 0
    while a.step():
        steps += 1
    assert steps == 200 and a.stop_reason == "max rounds"
    assert b.run() == 200  # dpdo_algorithm_run: the loop over step() in C
    for node in list(range(8)) + [dpdo.NODE_ALL]:
        for getter in ("iterate", "output"):
            assert bits(getattr(a, getter)(node)) == bits(getattr(b, getter)(node)), (getter, node)
        assert bits(a.state_row("z", node)) == bits(b.state_row("z", node))
    assert a.accountant.ledger.save() == b.accountant.ledger.save()
    assert a.privacy() == b.privacy() and a.comm() == b.comm()
    # reset reproduces the same bytes; iteration yields the rounds
    x = bits(a.output())
    a.reset()
    assert a.round == 0 and a.state == "READY"
    rounds = list(a)
    assert rounds == list(range(1, 201)) and bits(a.output()) == x


@case
def algorithm_getters_params_privacy_counters():
    _, loss, nodes = problem()
    alg = dda(nodes, 12, rounds=50)
    assert alg.get("dda-active") == 4
    alg.set("dda-active", 2)
    alg.set("max-rounds", 60)
    alg.prepare()
    assert alg.get("sigma") > 0
    for _ in alg:
        pass
    assert alg.round == 60
    eps, delta, valid = alg.privacy()
    assert 0 < eps <= 2.0 + 1e-9 and delta == 1e-5 and valid
    pe, pd, pv = alg.privacy(dpdo.PRIVACY_PAPER)
    assert pe > 0 and alg.privacy_source(dpdo.PRIVACY_PAPER) == "dp-dda-thm1"
    assert "active set treated as public" in alg.privacy_notes
    # sigma was planned for a high-probability bound on each node's releases, below every round
    planned = alg.planned_releases()
    assert 0 < planned < 60 and all(0 < alg.planned_releases(i) <= planned for i in range(8))
    act = alg.active
    assert sum(act) == 2 and len(act) == 8
    # the host chooses the next round's nodes (DP-DDA pairs them in order)
    alg2 = dda(nodes, 12, rounds=5)
    alg2.set_next_active([1, 1, 0, 0, 1, 1, 0, 0])
    assert alg2.step() and alg2.active == [1, 1, 0, 0, 1, 1, 0, 0]
    raises(dpdo.InvalidArgument, alg2.set_next_active, [2] * 8)
    raises(dpdo.Unsupported, alg2.set_node_probabilities, [0.5] * 8)
    m, s, b = alg.comm()
    assert m == 60 * 2 and s == m * 12 and b == s * 8, (m, s, b)
    F = alg.objective()
    assert F == alg.objective(x=alg.output())
    assert sorted(dpdo.algorithm_types())[:3] == ["5gcs", "cpgt", "do-adp"]


@case
def federated_with_a_python_solver():
    d = 5
    ds = dpdo.Dataset.generate("fedplt-logistic", n=200, d=d, seed=5)
    loss = dpdo.Loss("logistic", d)
    nodes = [dpdo.Node(s, loss) for s in ds.partition([50] * 4)]
    seen = {"calls": 0}

    def gd(node_eval, v, rho, epochs, w):
        seen["calls"] += 1
        for _ in range(epochs):
            _, g = node_eval(w)
            for k in range(len(w)):
                w[k] -= 0.5 * (g[k] + (w[k] - v[k]) / rho)
        return w
    sol = dpdo.Solver.python(gd, d)
    alg = dpdo.Algorithm("fed-plt", nodes, None, dpdo.Regularizer("l2", d, 0.1), None,
                         noise_mode=dpdo.NOISE_NONE, max_rounds=30, solver=sol, params={"fed-epochs": 2})
    F0 = alg.objective(x=[0.0] * d)
    alg.run()
    assert seen["calls"] == 4 * 30 and alg.objective() < F0
    # the built-in GD reaches the same kind of point
    g = dpdo.Solver("gd", d, step=0.5)
    assert g.get("step") == 0.5
    raises(dpdo.InvalidArgument, g.set, "no-such", 1.0)

    def broken(node_eval, v, rho, epochs, w):
        raise KeyError("solver state lost")
    bad = dpdo.Algorithm("fed-plt", nodes, None, None, None, noise_mode=dpdo.NOISE_NONE, max_rounds=3,
                         solver=dpdo.Solver.python(broken, d))
    e = raises(dpdo.CallbackError, bad.step)
    assert isinstance(e.__cause__, KeyError)


@case
def secure_default_and_node_keys():
    _, loss, nodes = problem(n=8, q=30, d=12)
    a, b = dda(nodes, 12, rounds=3, randomness=dpdo.RANDOMNESS_SECURE), dda(nodes, 12, rounds=3, randomness=dpdo.RANDOMNESS_SECURE)
    a.run(), b.run()
    assert a.randomness_source.startswith("secure:"), a.randomness_source
    assert all(x != y for x, y in zip(a.iterate(dpdo.NODE_ALL), b.iterate(dpdo.NODE_ALL)))
    r = dda(nodes, 12, rounds=3)
    r.run()
    assert r.randomness_source.startswith("reproducible") and "reproducible mode" in r.privacy_notes
    k = [dda(nodes, 12, rounds=3, randomness=dpdo.RANDOMNESS_SECURE) for _ in range(2)]
    for alg in k:
        for i in range(8):
            alg.set_node_key(i, bytes(range(i, i + 32)))
        alg.run()
    assert bits(k[0].iterate(dpdo.NODE_ALL)) == bits(k[1].iterate(dpdo.NODE_ALL))
    raises(ValueError, k[0].set_node_key, 0, b"short")


@case
def compressor_policy_and_do_adp_dp_wor_sgd():
    _, loss, nodes = problem(n=6, q=40, d=10)
    comp = dpdo.Compressor("top-k", 10, k=3)
    alg = dpdo.Algorithm("do-adp", nodes, dpdo.Network.ring(6), dpdo.Regularizer("l2", 10, 0.1),
                         dpdo.Accountant(dpdo.Ledger(6)), max_rounds=20, compressor=comp, params={"adp-p": 0.5})
    alg.set_node_probabilities([1.0, 1.0, 1.0, 0.5, 0.5, 0.5])
    alg.run()
    assert alg.round == 20 and alg.comm()[1] > 0
    pol = dpdo.Policy("dqn", 6, 12)
    w = dpdo.Algorithm("dp-wor-sgd", nodes, None, dpdo.Regularizer("l2", 10, 0.1), dpdo.Accountant(dpdo.Ledger(6)),
                       max_rounds=30, policy=pol)
    w.run()
    assert w.round > 0 and w.epsilon > 0
    raises(dpdo.InvalidArgument, dpdo.Compressor, "top-k", 10, k=11)


@case
def without_numpy_plain_sequences_in_and_lists_out():
    code = r'''
import sys, struct
sys.path.insert(0, %r)
import dpdo
assert not dpdo.has_numpy()
ds = dpdo.Dataset.generate("epsilon-like", n=480, d=12, seed=3)
loss = dpdo.Loss("logistic", 12)
nodes = [dpdo.Node(s, loss) for s in ds.partition([60] * 8, seed=1)]
alg = dpdo.Algorithm("dp-dda", nodes, dpdo.Network.ring(8), dpdo.Regularizer("l2", 12, 0.05),
                     dpdo.Accountant(dpdo.Ledger(8)), seed=11, max_rounds=200, epsilon=2.0, params={"dda-active": 4},
                     randomness=dpdo.RANDOMNESS_REPRODUCIBLE)
for t in alg: pass
x = alg.output()
assert isinstance(x, list) and len(x) == 12
small = dpdo.Dataset([[1.0, 2.0], [3.0, 4.0]], [1, -1])
assert small.margins([1.0, 1.0]) == [3.0, 7.0]
sys.stdout.write(struct.pack("12d", *x).hex())
''' % os.path.join(REPO, "python")
    env = dict(os.environ, DPDO_PY_NO_NUMPY="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    _, loss, nodes = problem()
    a = dda(nodes, 12)
    a.run()
    assert r.stdout == bits(a.output()).hex()


@case
def pip_install_works_offline():
    has_pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0
    if not has_pip:
        print("# pip absent: install not tested")
        return
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--target", tmp,
                            os.path.join(REPO, "python")], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        r = subprocess.run([sys.executable, "-c", "import dpdo; print(dpdo.__file__, dpdo.version())"],
                           env=dict(os.environ, PYTHONPATH=tmp), capture_output=True, text=True, cwd=tmp)
        assert r.returncode == 0 and r.stdout.startswith(tmp) and dpdo.__version__ in r.stdout, r.stdout + r.stderr


print("# summary: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
