#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The binding's former traps, one test each (issue 21), plus Ctrl-C/progress (issue 20):
library discovery without DPDO_LIBRARY after `make install` to a temporary prefix; partition(k);
context managers in any order; repr and docstrings everywhere; pickle round-trips; one handle
used by two threads (no crash, StateError); close()/reset() during another thread's run();
exceptions of a Loss shared by two threads reaching the right thread; the GIL released during
C calls; Ctrl-C during run() (KeyboardInterrupt within 0.5 s, then resumed to the bytes of an
uninterrupted run); run(progress=...) with tqdm; the reference solver against SciPy; a clear
message when NumPy is missing. Prints TAP and "# summary: N passed, M failed"."""
import gc
import inspect
import os
import pickle
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

from _tap import REPO, LIBFILE, case, raises, summary

import dpdo  # noqa: E402
from dpdo import _lib  # noqa: E402
from dpdo import privacy as dpdo_privacy  # noqa: E402
from dpdo import sklearn as dpdo_sklearn  # noqa: E402

NUMPY = dpdo.has_numpy()
if NUMPY:
    import numpy as np


def bits(xs):
    return struct.pack("%dd" % len(xs), *[float(v) for v in xs])


def problem(n=4, q=50, d=8, seed=3):
    ds = dpdo.Dataset.generate("epsilon-like", n=n * q, d=d, seed=seed)
    loss = dpdo.Loss("logistic", d)
    nodes = [dpdo.Node(s, loss) for s in ds.partition(n, seed=1)]
    return ds, loss, nodes


def dda(nodes, d, rounds=200, seed=11, **kw):
    kw.setdefault("randomness", dpdo.RANDOMNESS_REPRODUCIBLE)  # bit-identical reruns
    return dpdo.Algorithm("dp-dda", nodes, dpdo.Network.ring(len(nodes)), dpdo.Regularizer("l2", d, 0.05),
                          dpdo.Accountant(dpdo.Ledger(len(nodes))), seed=seed, max_rounds=rounds, epsilon=2.0, **kw)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DPDO_LIBRARY", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "BUILD")}
    env.update(extra)
    return env


# ---- library discovery --------------------------------------------------------------------------
PROBE = "import dpdo, dpdo._lib as L; print(L.LIBRARY_SOURCE); print(L.LIBRARY_PATH); print(dpdo.version())"
# the probe with the system's loader blinded: find_library finds nothing and the bare SONAME does not
# load, so the result does not depend on a libdpdo installed on this machine (hermetic)
HIDE_SYSTEM = ("import ctypes, ctypes.util\n"
               "ctypes.util.find_library = lambda name: None\n"
               "_CDLL = ctypes.CDLL\n"
               "class _Hidden(_CDLL):\n"
               "    def __init__(self, name, *a, **k):\n"
               "        if name == 'libdpdo.so.1':\n"
               "            raise OSError('hidden by the test')\n"
               "        _CDLL.__init__(self, name, *a, **k)\n"
               "ctypes.CDLL = _Hidden\n")


def install_prefix(prefix):
    r = subprocess.run(["make", "--no-print-directory", "-s", "BUILD=" + os.environ.get("BUILD", "build"),
                        "install", "PREFIX=" + prefix], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def probe(cwd, code=PROBE, **env):
    # PKG_CONFIG_LIBDIR: pkg-config's default search path emptied, so a dpdo.pc of the system is not seen
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd,
                       env=clean_env(PKG_CONFIG_LIBDIR=os.path.join(cwd, "no-pc"), **env))
    return r


@case
def library_found_without_dpdo_library_after_make_install():
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "prefix")
        install_prefix(prefix)
        site = os.path.join(tmp, "site")  # the package outside the source tree: no build-tree copy
        shutil.copytree(os.path.join(REPO, "python", "dpdo"), os.path.join(site, "dpdo"))
        pc = os.path.join(prefix, "lib", "pkgconfig")
        # 1. PKG_CONFIG_PATH names the prefix: its dpdo.pc's libdir
        r = probe(tmp, PYTHONPATH=site, PKG_CONFIG_PATH=pc)
        assert r.returncode == 0, r.stderr
        src, path, ver = r.stdout.split()
        assert src == "PKG_CONFIG_PATH" and path.startswith(prefix) and ver == dpdo.version(), r.stdout
        # 2. the loader (LD_LIBRARY_PATH): the path reported is the file it opened
        r = probe(tmp, PYTHONPATH=site, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
        assert r.returncode == 0, r.stderr
        src, path, ver = r.stdout.split()
        assert src in ("find_library", "loader") and path.startswith(os.path.realpath(prefix)), r.stdout
        # 3. the package's own copy wins over the loader, PKG_CONFIG_PATH (named by the user) over it
        shutil.copy(os.path.join(prefix, "lib", "libdpdo.so.1"), os.path.join(site, "dpdo", "libdpdo.so.1"))
        r = probe(tmp, PYTHONPATH=site, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
        assert r.returncode == 0 and r.stdout.split()[0] == "package", r.stdout + r.stderr
        r = probe(tmp, PYTHONPATH=site, PKG_CONFIG_PATH=pc)
        assert r.returncode == 0 and r.stdout.split()[0] == "PKG_CONFIG_PATH", r.stdout + r.stderr
        os.unlink(os.path.join(site, "dpdo", "libdpdo.so.1"))
        # 4. nothing anywhere (the system's loader blinded): ImportError listing what was tried and the fix
        r = probe(tmp, HIDE_SYSTEM + "import dpdo", PYTHONPATH=site)
        assert r.returncode != 0 and "PKG_CONFIG_PATH" in r.stderr and "DPDO_LIBRARY" in r.stderr, r.stderr
        # 5. PKG_CONFIG_PATH naming a prefix without the library: an error, not a silent fallback
        os.rename(os.path.join(prefix, "lib", "libdpdo.so.1"), os.path.join(prefix, "lib", "moved"))
        r = probe(tmp, PYTHONPATH=site, PKG_CONFIG_PATH=pc)
        assert r.returncode != 0 and "does not exist" in r.stderr and prefix in r.stderr, r.stderr


@case
def library_named_by_pkg_config_path_wins_over_the_installed_one():
    # "installed": a libdpdo the loader finds by itself (LD_LIBRARY_PATH here; /usr/lib with the Debian
    # package); "newer build": another prefix named by PKG_CONFIG_PATH. The named one must load.
    with tempfile.TemporaryDirectory() as tmp:
        system, newer = os.path.join(tmp, "system"), os.path.join(tmp, "newer")
        install_prefix(system)
        install_prefix(newer)
        site = os.path.join(tmp, "site")
        shutil.copytree(os.path.join(REPO, "python", "dpdo"), os.path.join(site, "dpdo"))
        r = probe(tmp, PYTHONPATH=site, LD_LIBRARY_PATH=os.path.join(system, "lib"),
                  PKG_CONFIG_PATH=os.path.join(newer, "lib", "pkgconfig"))
        assert r.returncode == 0, r.stderr
        src, path, ver = r.stdout.split()
        assert src == "PKG_CONFIG_PATH" and path.startswith(newer), r.stdout
        # and without PKG_CONFIG_PATH the installed one (the loader) is used, whatever the machine has
        r = probe(tmp, PYTHONPATH=site, LD_LIBRARY_PATH=os.path.join(system, "lib"))
        assert r.returncode == 0 and r.stdout.split()[1].startswith(os.path.realpath(system)), r.stdout + r.stderr


@case
def library_release_checked_not_only_the_abi_major():
    # the package generated from other headers than the library's: edit its recorded release
    with tempfile.TemporaryDirectory() as tmp:
        site = os.path.join(tmp, "site")
        shutil.copytree(os.path.join(REPO, "python", "dpdo"), os.path.join(site, "dpdo"))
        capi = os.path.join(site, "dpdo", "_capi.py")
        orig = open(capi).read()
        ma, mi, pa = (int(x) for x in dpdo.version().split("."))
        assert "DPDO_VERSION_PATCH = %d\n" % pa in orig
        # a package newer than the library: the library is too old, refused with both releases named
        open(capi, "w").write(orig.replace("DPDO_VERSION_PATCH = %d\n" % pa, "DPDO_VERSION_PATCH = %d\n" % (pa + 1)))
        r = probe(tmp, PYTHONPATH=site, DPDO_LIBRARY=LIBFILE)
        assert r.returncode != 0 and "older" in r.stderr and dpdo.version() in r.stderr, r.stderr
        # a package older than the library (same ABI): loads, with a LibraryVersionWarning naming both
        if pa > 0 or mi > 0:
            old = (ma, mi, pa - 1) if pa > 0 else (ma, mi - 1, 0)
            s = orig.replace("DPDO_VERSION_MINOR = %d\n" % mi, "DPDO_VERSION_MINOR = %d\n" % old[1])
            s = s.replace("DPDO_VERSION_PATCH = %d\n" % pa, "DPDO_VERSION_PATCH = %d\n" % old[2])
            open(capi, "w").write(s)
            r = probe(tmp, PYTHONPATH=site, DPDO_LIBRARY=LIBFILE)
            assert r.returncode == 0 and "LibraryVersionWarning" in r.stderr and "newer" in r.stderr, r.stdout + r.stderr


# ---- partition ----------------------------------------------------------------------------------
@case
def partition_int_means_k_equal_shards():
    ds = dpdo.Dataset.generate("epsilon-like", n=103, d=5, seed=2)
    shards = ds.partition(10, seed=4)
    assert len(shards) == 10
    sizes = [s.rows for s in shards]
    assert sizes == [11, 11, 11] + [10] * 7, sizes
    rows = sorted(r for s in shards for r in s.row_indices())
    assert rows == list(range(103))  # disjoint, every row used
    assert [s.rows for s in ds.partition([30, 20])] == [30, 20]  # a sequence still means sizes
    if NUMPY:
        assert len(ds.partition(np.int64(4))) == 4
        raises(dpdo.InvalidArgument, ds.partition, np.float64(3.0))
    for bad in (2.0, True, 0, 104, "3"):
        raises(dpdo.InvalidArgument, ds.partition, bad)


# ---- context managers ---------------------------------------------------------------------------
@case
def context_managers_close_in_a_safe_order():
    ds, loss, nodes = problem()
    with dpdo.Accountant(dpdo.Ledger(4)) as acc:  # the issue: this raised StateError on exit
        alg = dpdo.Algorithm("dp-dda", nodes, dpdo.Network.ring(4), dpdo.Regularizer("l2", 8, 0.05), acc,
                             max_rounds=20, epsilon=1.0, randomness=1)
    assert acc.closed and acc._h.value  # closed for the user, kept for the algorithm that borrows it
    assert alg.run() == 20 and alg.epsilon > 0
    led = acc.ledger
    with alg:
        pass
    assert alg.closed and acc._h.value is None and led._h.value is not None  # the accountant went with alg
    led.close()
    assert led._h.value is None
    # nested blocks exiting in the reverse of the borrowing order
    with dpdo.Loss("logistic", 8) as l2:
        with dpdo.Node(ds, l2) as nd:
            pass
        assert nd.closed
    assert l2._h.value is None
    for n in nodes:
        n.close()
    gc.collect()


# ---- repr and docstrings ------------------------------------------------------------------------
@case
def every_class_has_a_repr_and_every_public_name_a_docstring():
    ds, loss, nodes = problem()
    alg = dda(nodes, 8, rounds=5)
    objs = [ds, nodes[0].data, loss, dpdo.Regularizer("l2", 8, 0.1), nodes[0], dpdo.Network.ring(4),
            dpdo.Sampling.poisson(0.1), dpdo.Event.gaussian(1.0, 2.0), dpdo.Ledger(3), alg.accountant,
            dpdo.PaperBound("dp-dda-thm1"), dpdo.Solver("gd", 8), dpdo.Compressor("top-k", 8, k=2),
            dpdo.Policy("always-global", 4, 10), alg, dpdo.Reference(nodes, alg.regularizer), alg.model()]
    seen = set()
    for o in objs:
        r = repr(o)
        assert r.startswith("<dpdo.%s" % type(o).__name__) and "object at" not in r, r
        seen.add(type(o).__name__)
    classes = {n for n in dpdo.__all__ if inspect.isclass(getattr(dpdo, n)) and
               issubclass(getattr(dpdo, n), dpdo._core._Handle)}
    assert classes <= seen, classes - seen
    r = dpdo.Regularizer("l2", 3, 0.1)
    r.close()
    assert repr(r) == "<dpdo.Regularizer closed>"
    missing = []
    for mod in (dpdo, dpdo_privacy, dpdo_sklearn):
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if not (obj.__doc__ or "").strip():
                missing.append("%s.%s" % (mod.__name__, name))
            if inspect.isclass(obj):
                for mname, m in vars(obj).items():
                    if mname.startswith("_"):
                        continue
                    f = m.fget if isinstance(m, property) else getattr(m, "__func__", m)
                    if callable(f) and not (getattr(f, "__doc__", "") or "").strip():
                        missing.append("%s.%s.%s" % (mod.__name__, name, mname))
    assert not missing, missing
    assert "KeyboardInterrupt" in dpdo.Algorithm.run.__doc__
    assert os.path.exists(os.path.join(os.path.dirname(dpdo.__file__), "py.typed"))


# ---- pickling -----------------------------------------------------------------------------------
@case
def pickle_round_trips():
    def rt(o):
        return pickle.loads(pickle.dumps(o))
    ds = dpdo.Dataset.generate("epsilon-like", n=40, d=6, seed=5)
    w = [0.1 * k for k in range(6)]
    ds2 = rt(ds)
    assert (ds2.rows, ds2.features, ds2.layout) == (40, 6, "dense")
    assert bits(ds2.labels()) == bits(ds.labels()) and bits(ds2.margins(w)) == bits(ds.margins(w))
    sp = dpdo.Dataset.generate("rcv1-like", n=30, d=50, seed=5)
    if sp.layout == "csr":
        sp2 = rt(sp)
        assert sp2.layout == "csr" and bits(sp2.margins([1.0] * 50)) == bits(sp.margins([1.0] * 50))
    sh = ds.partition(4, seed=2)[1]
    sh2 = rt(sh)
    assert sh2.row_indices() == sh.row_indices()
    loss = dpdo.Loss("logistic", 6)
    node = dpdo.Node(sh, loss)
    node2 = rt(node)
    assert node2.samples == node.samples and node2.evaluate(w) == node.evaluate(w)
    reg = rt(dpdo.Regularizer("elastic-net", 6, 0.1, 0.2))
    assert reg.value(w) == dpdo.Regularizer("elastic-net", 6, 0.1, 0.2).value(w)
    net = rt(dpdo.Network.torus(3, 4))
    assert (net.nodes, net.edge_count) == (12, dpdo.Network.torus(3, 4).edge_count)
    assert rt(dpdo.Network.edges(3, [(0, 1), (1, 2)])).edge_count == 2
    led = dpdo.Ledger(2)
    led.charge(dpdo.Event.gaussian(1.0, 3.0, dpdo.Sampling.poisson(0.05)), 100)
    acc = dpdo.Accountant(led, "rdp")
    acc2 = rt(acc)
    assert acc2.epsilon(1e-5) == acc.epsilon(1e-5) and acc2.ledger.save() == led.save()
    assert rt(dpdo.Sampling.wor(100, 10))._recipe == ("wor", (100, 10))
    pb = dpdo.PaperBound("dp-dda-thm1", eps=0.1)
    assert rt(pb)._params == {"eps": 0.1}
    assert rt(dpdo.Solver("gd", 6, step=0.5)).get("step") == 0.5
    assert rt(dpdo.Compressor("top-k", 6, k=2))._args == ("top-k", 6, 2)
    raises(TypeError, pickle.dumps, dpdo.Loss.phi(lambda m, y: (0.0, 0.0), 6), contains="Python functions")
    _, _, nodes = problem()
    sec = dda(nodes, 8, rounds=50, randomness=dpdo.RANDOMNESS_SECURE)
    sec.step()
    raises(TypeError, pickle.dumps, sec, contains="alg.save(path, key=")  # its keys exist only here
    alg = dda(nodes, 8, rounds=50)  # REPRODUCIBLE: pickles through a checkpoint (test_checkpoint.py)
    alg.run()
    m = alg.model()  # the model file of issue 20: output, loss, privacy, rounds
    m2 = rt(m)
    assert bits(m2.x) == bits(alg.output()) and m2.privacy == (alg.epsilon, alg.privacy()[1]) and m2.rounds == 50
    assert m2.field("loss") == "logistic" and m2.field("algorithm") == "dp-dda" and m2.field("accountant") in ("rdp", "pld", "exact")
    ds8 = dpdo.Dataset.generate("epsilon-like", n=30, d=8, seed=4)
    assert bits(m2.predict(ds8, "margin")) == bits(ds8.margins(alg.output()))
    assert set(m2.predict(ds8, "label")) <= {1.0, -1.0}
    with tempfile.TemporaryDirectory() as tmp:
        m.save(os.path.join(tmp, "run.model"))
        m3 = dpdo.Model.load(os.path.join(tmp, "run.model"))
        assert bits(m3.x) == bits(m.x) and m3.text() == m.text()
    raises(dpdo.FormatError, dpdo.Model.parse, "not a model file\n")
    assert repr(m2).startswith("<dpdo.Model dp-dda, logistic loss, dim 8, 50 rounds")


# ---- threads ------------------------------------------------------------------------------------
def in_threads(*fns):
    errs = [None] * len(fns)

    def wrap(i, f):
        try:
            f()
        except BaseException as e:  # noqa: B902
            errs[i] = e
    ts = [threading.Thread(target=wrap, args=(i, f), name="worker-%d" % i) for i, f in enumerate(fns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errs


@case
def two_threads_on_one_handle_raise_state_error_instead_of_crashing():
    _, loss, nodes = problem()
    alg = dda(nodes, 8, rounds=300000)
    inside, tried = threading.Event(), threading.Event()

    def hold(p):  # the first run() waits inside its progress callback until the other thread has tried
        if not inside.is_set():
            inside.set()
            tried.wait(10)

    def second():
        inside.wait(10)
        try:
            alg.run()
        finally:
            tried.set()
    errs = in_threads(lambda: alg.run(progress=hold), second)
    kinds = [type(e).__name__ if e is not None else None for e in errs]
    assert kinds == [None, "StateError"], errs  # the second run() was refused, the first one finished
    assert "busy with run()" in str(errs[1]) and "one thread at a time" in str(errs[1]), str(errs[1])
    assert alg.round == 300000 and alg.state == "DONE"
    # step() + step() from two threads: each call either runs a round or raises StateError
    alg2 = dda(nodes, 8, rounds=100000)
    done = [0, 0]
    refused = [0, 0]

    def stepper(i):
        def f():
            for _ in range(30000):
                try:
                    if alg2.step():
                        done[i] += 1
                except dpdo.StateError:
                    refused[i] += 1
        return f
    errs = in_threads(stepper(0), stepper(1))
    assert errs == [None, None], errs
    assert done[0] + done[1] == alg2.round == 60000 - refused[0] - refused[1], (done, refused, alg2.round)
    # reset(), a getter or step() from another thread during run(): refused, the run's result intact
    alg3 = dda(nodes, 8, rounds=200000)
    ref = dda(nodes, 8, rounds=200000)
    ref.run()
    got = {}
    inside.clear()
    tried.clear()

    def meddle():
        inside.wait(10)
        for what, f in (("reset", alg3.reset), ("output", alg3.output), ("step", alg3.step)):
            try:
                f()
                got[what] = "ran"
            except dpdo.StateError:
                got[what] = "StateError"
        tried.set()
    t = threading.Thread(target=meddle)
    t.start()
    alg3.run(progress=hold)
    t.join()
    assert got == {"reset": "StateError", "output": "StateError", "step": "StateError"}, got
    assert bits(alg3.output()) == bits(ref.output())


@case
def close_during_another_threads_run_stops_it_and_waits():
    _, loss, nodes = problem()
    T = 4 * 10 ** 6  # (prepare's noise planning grows with the horizon: keep it moderate)
    alg = dda(nodes, 8, rounds=T)
    out = {}
    running = threading.Event()

    def runner():
        out["n"] = alg.run(progress=lambda p: running.set())
    t = threading.Thread(target=runner)
    t.start()
    assert running.wait(60)  # rounds are running (past prepare)
    t0 = time.monotonic()
    alg.close()  # waits for the run, which it asks to stop
    waited = time.monotonic() - t0
    t.join()
    print("# close() during run(): returned after %.1f ms, the run stopped at round %d of %d"
          % (1000 * waited, out["n"], T))
    assert alg.closed and 0 < out["n"] < T, out
    assert waited < 2.0, waited
    raises(ValueError, alg.step)
    raises(ValueError, alg.output)


@case
def shared_loss_exceptions_reach_the_thread_that_raised_them():
    d = 4
    ds = dpdo.Dataset.generate("epsilon-like", n=64, d=d, seed=9)

    def phi(m, y):
        raise RuntimeError(threading.current_thread().name)
    loss = dpdo.Loss.phi(phi, d)
    nodes = [dpdo.Node(s, loss) for s in ds.partition(2)]
    wrong = []
    count = [0, 0]

    def worker(i):
        def f():
            me = threading.current_thread().name
            for _ in range(300):
                try:
                    nodes[i].evaluate([0.1] * d)
                except dpdo.CallbackError as e:
                    count[i] += 1
                    if str(e.__cause__) != me:
                        wrong.append((me, str(e.__cause__)))
        return f
    errs = in_threads(worker(0), worker(1))
    assert errs == [None, None] and count == [300, 300], (errs, count)
    assert not wrong, wrong[:5]
    # the same through two algorithms sharing the loss
    algs = [dpdo.Algorithm("fed-plt", [n], None, None, None, noise_mode=dpdo.NOISE_NONE, max_rounds=5,
                           solver=dpdo.Solver("gd", d, step=0.1)) for n in nodes]
    causes = [[], []]

    def runner(i):
        def f():
            for _ in range(100):
                algs[i].reset()
                try:
                    algs[i].run()
                except dpdo.CallbackError as e:
                    causes[i].append(str(e.__cause__))
        return f
    assert in_threads(runner(0), runner(1)) == [None, None]
    assert causes[0] == ["worker-0"] * 100 and causes[1] == ["worker-1"] * 100, (causes[0][:3], causes[1][:3])


@case
def the_gil_is_released_during_c_calls():
    _, loss, nodes = problem()
    alg = dda(nodes, 8, rounds=400000)
    t = threading.Thread(target=alg.run)
    t.start()
    spins = 0
    while t.is_alive():
        spins += 1  # Python keeps running here while the other thread is inside C
    t.join()
    assert alg.state == "DONE" and spins > 1000, spins


# ---- Ctrl-C and progress ------------------------------------------------------------------------
def _ctrl_c_case():
    _, loss, nodes = problem()
    # Under load the run can end before the signal lands (the first progress report, which
    # starts the timer, may come late): then try again with a run twice as long, at most 3 times.
    for attempt in range(3):
        T = 12 * 10 ** 5 * 2 ** attempt
        alg = dda(nodes, 8, rounds=T)
        ref = dda(nodes, 8, rounds=T)
        t_ref = time.monotonic()
        ref.run()
        t_ref = time.monotonic() - t_ref
        sent = {}
        running = threading.Event()
        delay = min(0.3, t_ref / 4)

        def interrupt():  # SIGINT to the main thread once rounds are running (prepare is done)
            running.wait(60)
            time.sleep(delay)
            sent["t"] = time.monotonic()
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        timer = threading.Thread(target=interrupt)
        timer.start()
        try:
            alg.run(progress=lambda p: running.set())
            t_done = time.monotonic()
            timer.join()
            try:  # a SIGINT that lands after the run is delivered here: swallow it
                time.sleep(0.05)
            except KeyboardInterrupt:
                pass
            if sent.get("t", t_done) < t_done - 0.5:
                raise AssertionError("SIGINT sent %.2f s before run() finished without KeyboardInterrupt"
                                     % (t_done - sent["t"]))
            print("# attempt %d: the %.2f s run finished before SIGINT; again with T doubled" % (attempt, t_ref))
            continue
        except KeyboardInterrupt:
            latency = time.monotonic() - sent["t"]
        break
    else:
        raise AssertionError("run() finished without KeyboardInterrupt in 3 attempts (last %.2f s)" % t_ref)
    timer.join()
    r = alg.round
    print("# SIGINT %.2f s into the rounds of a %.2f s run: KeyboardInterrupt after %.1f ms, at round %d of %d"
          % (delay, t_ref, 1000 * latency, r, T))
    assert latency < 0.5, latency
    assert 0 < r < T and alg.state == "RUNNING"
    assert alg.run() == T - r  # resumes where it stopped
    assert bits(alg.output()) == bits(ref.output()) and alg.accountant.ledger.save() == ref.accountant.ledger.save()
    assert alg.privacy() == ref.privacy()


@case
def ctrl_c_stops_run_within_half_a_second_and_the_run_resumes_to_the_same_bytes():
    if threading.current_thread() is not threading.main_thread():
        return
    # A user at a terminal has Python's default SIGINT handler; a test run in the background (make
    # check from a script, `&`) inherits SIGINT ignored, and run() rightly leaves an ignored SIGINT
    # alone: install the default handler for this case.
    old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _ctrl_c_case()
    finally:
        signal.signal(signal.SIGINT, old_handler)


@case
def progress_callbacks_tqdm_history_and_clean_stop():
    _, loss, nodes = problem()
    alg = dda(nodes, 8, rounds=500)
    seen = []

    def fn(p):
        seen.append(p.round)
        return p.round >= 200  # stop cleanly, no exception
    n = alg.run(progress=fn, every=50)
    assert n == 200 and seen == [50, 100, 150, 200] and alg.round == 200, (n, seen)
    hist = []
    alg.run(every=100, epsilon=True, objective=True, history=hist)
    assert [h[0] for h in hist] == [300, 400, 500, 500], hist
    eps = [h[1] for h in hist]
    assert all(0 < a <= b for a, b in zip(eps, eps[1:])) and abs(eps[-1] - alg.epsilon) < 1e-12, eps
    assert all(h[2] == h[2] and h[2] > 0 for h in hist)  # objective filled (not NaN)
    ref = dda(nodes, 8, rounds=500)
    ref.run()
    assert bits(ref.output()) == bits(alg.output())  # stopping and resuming changed nothing
    try:
        import io
        from tqdm import tqdm
    except ImportError:
        print("# tqdm absent: the progress bar is not tested")
        return
    a2 = dda(nodes, 8, rounds=700)
    bar = tqdm(total=700, file=io.StringIO())
    a2.run(progress=bar)
    assert bar.n == 700, bar.n
    a3 = dda(nodes, 8, rounds=10)
    old = sys.stderr
    sys.stderr = io.StringIO()
    try:
        a3.run(progress=True)
        shown = sys.stderr.getvalue()
    finally:
        sys.stderr = old
    assert "10/10" in shown, shown


# ---- reference solver ---------------------------------------------------------------------------
@case
def reference_solver_agrees_with_scipy():
    if not NUMPY:
        return
    try:
        from scipy.optimize import minimize
    except ImportError:
        print("# scipy absent: reference solver not compared")
        return
    ds, loss, nodes = problem(n=4, q=50, d=8)
    lam = 0.05
    reg = dpdo.Regularizer("l2", 8, lam)
    ref = dpdo.Reference(nodes, reg)
    x, F = ref.solve()
    assert ref.method == "lbfgs" and ref.iterations > 0
    X = np.array([ds.row(i) for i in range(ds.rows)])
    y = np.asarray(ds.labels())
    rows = np.concatenate([n.data.row_indices() for n in nodes])
    A, b = X[rows], y[rows]

    def f(w):
        m = b * (A @ w)
        return np.mean(np.logaddexp(0, -m)) + reg.value(w), None
    val = minimize(lambda w: f(w)[0], np.zeros(8), method="BFGS", options={"gtol": 1e-10}).fun
    assert abs(F - val) < 1e-8 * max(1, abs(val)), (F, val)
    assert abs(ref.objective(x) - F) < 1e-12 and abs(f(np.asarray(x))[0] - F) < 1e-10
    assert abs(reg.value([1.0] * 8) - lam / 2 * 8) < 1e-12 or reg.value([1.0] * 8) > 0


# ---- NumPy missing ------------------------------------------------------------------------------
@case
def clear_message_when_numpy_is_missing_but_an_array_is_expected():
    code = r'''
import dpdo, dpdo.privacy, dpdo.sklearn
assert not dpdo.has_numpy()
e = dpdo.privacy.epsilon(1.1, 0.01, 1e-5, steps=100)   # no arrays needed: works
assert 0 < e < 10
try:
    dpdo.sklearn.DPDDAClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
except ImportError as ex:
    print(ex)
'''
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, DPDO_PY_NO_NUMPY="1", PYTHONPATH=os.path.join(REPO, "python")))
    assert r.returncode == 0, r.stderr
    assert "needs NumPy" in r.stdout and "DPDO_PY_NO_NUMPY" in r.stdout, r.stdout


summary()
