#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Python checkpoints and pickling of algorithms (issue 20; dpdo_algorithm_save/_load underneath).

* every algorithm type (13 in 0.2): a REPRODUCIBLE run pickled at a random round, unpickled and run to the
  end is bit-identical to the uninterrupted run (every node's output and iterate, the round, the
  ledger text, epsilon); DP-WOR-SGD with a DQN policy (its learned state travels in the pickle);
  pickles and checkpoint files of every type resumed in another Python process (same bytes);
* alg.save / alg.load / Algorithm.load(path, kind, nodes, ...): the same bit-identity; refusals
  (another seed, a truncated file, an algorithm that has started) raise with the mismatch named
  and leave the algorithm usable at round 0;
* SECURE randomness: a private run refuses to pickle and to save without a host key; with a key
  the encrypted file resumes bit-identically to the saving run continued; a wrong key is refused;
  host keys (set_node_key) refuse to pickle.
Prints TAP and the summary line."""
import os
import pickle
import random
import subprocess
import sys
import tempfile

import _tap
from _tap import case, raises

import dpdo  # noqa: E402

N, Q, D = 4, 24, 5
DS = dpdo.Dataset.generate("epsilon-like", n=N * Q, d=D, seed=7)
LOSS = dpdo.Loss("logistic", D)
NODES = [dpdo.Node(s, LOSS) for s in DS.partition(N, seed=1)]
NET = dpdo.Network.complete(N)
REG = dpdo.Regularizer("l2", D, 0.05)
TMP = tempfile.mkdtemp(prefix="dpdo-test-ckpt-")
RNG = random.Random(2026)


def build(kind, noise=True, reg=True, dqn=False, rounds=None, **extra):
    """An algorithm of `kind` on the fixture, as tests/test_checkpoint.c sets them up."""
    o = dict(randomness=dpdo.RANDOMNESS_REPRODUCIBLE, seed=20, epsilon=4.0, batch=2, step_size=0.5,
             noise_mode=dpdo.NOISE_RIGOROUS if noise else dpdo.NOISE_NONE)
    if rounds is not None:
        o["max_rounds"] = rounds
    o.update(extra)
    kw = {}
    if kind == "fed-plt":
        kw["solver"] = dpdo.Solver("noisy-gd" if noise else "gd", D, step=0.5)
    if kind == "5gcs":
        kw["params"] = {"5gcs-tau": 1.0, "5gcs-local-step": 0.5}
    if dqn:
        kw["policy"] = dpdo.Policy("dqn", N, D + 2, replay=16, batch=4, hidden=6)
    return dpdo.Algorithm(kind, NODES, NET, REG if reg else None, dpdo.Accountant(dpdo.Ledger(N), "rdp"), **kw, **o)


def config_for(kind):
    """The first of (noise, l2), (no noise, l2), (no noise, no regularizer) that the type accepts."""
    for noise, reg in ((True, True), (False, True), (False, False)):
        a = build(kind, noise, reg, rounds=30)
        try:
            a.prepare()
            return noise, reg
        except dpdo.DpdoError:
            pass
        finally:
            a.close()
    raise AssertionError("%s: no configuration prepares" % kind)


def snapshot(a):
    """Everything compared: round, state, every node's output and iterate (bytes), ledger, epsilon."""
    rows = [a.output(i).tobytes() if hasattr(a.output(i), "tobytes") else repr(a.output(i)) for i in range(N)]
    its = [a.iterate(i).tobytes() if hasattr(a.iterate(i), "tobytes") else repr(a.iterate(i)) for i in range(N)]
    return (a.round, a.state, a.stop_reason, rows, its, a.accountant.ledger.save(), repr(a.privacy()))


def roundtrip(a):
    return pickle.loads(pickle.dumps(a))


def child(d):
    """In another process (test_checkpoint.py --child DIR): for each (name, kind, noise, reg, dqn, k)
    of DIR/plan.pickle, unpickle DIR/<name>.pickle and run it to the end; build the same algorithm
    afresh, alg.load(DIR/<name>.ckpt) and run it to the end; write both snapshots to
    DIR/result.pickle."""
    with open(os.path.join(d, "plan.pickle"), "rb") as f:
        plan = pickle.load(f)
    out = {}
    for name, kind, noise, reg, dqn, k in plan:
        with open(os.path.join(d, name + ".pickle"), "rb") as f:
            a = pickle.load(f)
        assert a.round == k, (name, a.round, k)
        a.run()
        b = build(kind, noise, reg, dqn=dqn, rounds=30).load(os.path.join(d, name + ".ckpt"))
        assert b.round == k, (name, b.round, k)
        b.run()
        out[name] = (snapshot(a), snapshot(b), os.getpid())
    with open(os.path.join(d, "result.pickle"), "wb") as f:
        pickle.dump(out, f)


if len(sys.argv) == 3 and sys.argv[1] == "--child":
    child(sys.argv[2])
    sys.exit(0)


@case
def pickle_resumes_every_type_bit_identically():
    kinds = dpdo.algorithm_types()
    assert len(kinds) >= 13, kinds  # the 13 of 0.2 and any added since
    for kind in kinds:
        noise, reg = config_for(kind)
        full = build(kind, noise, reg, rounds=30)
        full.run()
        ref = snapshot(full)
        rounds = full.round
        assert rounds >= 2, (kind, rounds)
        if noise:
            assert full.epsilon > 0 and full.accountant.ledger.charges(0) > 0, kind
        k = RNG.randrange(1, rounds)
        part = build(kind, noise, reg, rounds=30)
        part.run(k)
        assert part.round == k
        blob = pickle.dumps(part)
        part.close()
        back = pickle.loads(blob)
        assert back.round == k and back.state == "RUNNING", (kind, back.round, back.state)
        back.run()
        got = snapshot(back)
        assert got == ref, "%s: resumed at %d of %d differs" % (kind, k, rounds)
        # pickling a finished run keeps it finished, with the same figures
        assert snapshot(roundtrip(back)) == ref, kind
        print("# %-16s %s: pickled at round %2d of %2d, %6d bytes" % (kind, "noise" if noise else "no noise", k,
                                                                      rounds, len(blob)))
        full.close()
        back.close()


@case
def pickle_carries_a_dqn_policy():
    full = build("dp-wor-sgd", dqn=True)
    full.run()
    ref = snapshot(full)
    part = build("dp-wor-sgd", dqn=True)
    part.run(full.round // 2)
    back = roundtrip(part)
    assert back.policy is not None and back.policy is not part.policy
    back.run()
    assert snapshot(back) == ref
    # the policy decides something: without it (always-global) the run differs
    plain = build("dp-wor-sgd")
    plain.run()
    assert snapshot(plain)[3] != ref[3]
    raises(TypeError, pickle.dumps, part.policy, contains="checkpoint")


@case
def pickles_and_checkpoint_files_resume_in_another_process_for_every_type():
    d = tempfile.mkdtemp(prefix="child-", dir=TMP)
    plan, refs = [], {}
    # every type, and DP-WOR-SGD with a DQN policy (its weights and replay buffer travel)
    runs = [(kind, kind, False) for kind in dpdo.algorithm_types()] + [("dp-wor-sgd+dqn", "dp-wor-sgd", True)]
    for name, kind, dqn in runs:
        noise, reg = config_for(kind)
        full = build(kind, noise, reg, dqn=dqn, rounds=30)
        full.run()
        refs[name] = snapshot(full)
        k = RNG.randrange(1, full.round)
        part = build(kind, noise, reg, dqn=dqn, rounds=30)
        part.run(k)
        with open(os.path.join(d, name + ".pickle"), "wb") as f:
            pickle.dump(part, f)
        part.save(os.path.join(d, name + ".ckpt"))
        plan.append((name, kind, noise, reg, dqn, k))
        full.close()
        part.close()
    assert len(plan) == len(runs) and len(runs) >= 14  # every type (13 in 0.2) and the DQN run
    with open(os.path.join(d, "plan.pickle"), "wb") as f:
        pickle.dump(plan, f)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", d], capture_output=True, text=True,
                       env=os.environ, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(d, "result.pickle"), "rb") as f:
        got = pickle.load(f)
    assert sorted(got) == sorted(refs), sorted(got)
    for name, kind, noise, reg, dqn, k in plan:
        by_pickle, by_file, pid = got[name]
        assert pid != os.getpid()
        assert by_pickle == refs[name], "%s: the pickle resumed at %d in another process differs" % (name, k)
        assert by_file == refs[name], "%s: the file loaded at %d in another process differs" % (name, k)


@case
def a_run_that_has_not_started_pickles_its_configuration():
    a = build("do-adp")
    a.set("adp-beta", 0.3)
    b = roundtrip(a)
    assert b.round == 0 and b.state == "READY" and b.get("adp-beta") == 0.3
    a.run()
    b.run()
    assert snapshot(a) == snapshot(b)


@case
def save_and_load_files():
    full = build("fed-plt")
    full.run()
    ref = snapshot(full)
    part = build("fed-plt")
    part.run(5)
    p = os.path.join(TMP, "fed.ckpt")
    part.save(p)
    assert open(p, "rb").read(8) == b"DPDOCKPT"
    # alg.load on an identical fresh algorithm
    a = build("fed-plt")
    assert a.load(p) is a and a.round == 5
    a.run()
    assert snapshot(a) == ref
    # Algorithm.load(path, constructor arguments)
    b = dpdo.Algorithm.load(p, "fed-plt", NODES, NET, REG, dpdo.Accountant(dpdo.Ledger(N), "rdp"),
                            solver=dpdo.Solver("noisy-gd", D, step=0.5), randomness=dpdo.RANDOMNESS_REPRODUCIBLE,
                            seed=20, epsilon=4.0, batch=2, step_size=0.5)
    assert b.round == 5
    b.run()
    assert snapshot(b) == ref
    raises(TypeError, a.load, p, "fed-plt", contains="no other arguments")


@case
def refusals_name_the_mismatch_and_change_nothing():
    part = build("dp-dda")
    part.run(4)
    p = os.path.join(TMP, "dda.ckpt")
    part.save(p)
    other = build("dp-dda", seed=21)
    e = raises(dpdo.FormatError, other.load, p, contains="seed")
    assert "20" in str(e) and "21" in str(e), str(e)
    assert other.round == 0 and other.state == "READY" and other.accountant.ledger.charges(0) == 0
    other.run()  # still a usable fresh algorithm
    assert other.state == "DONE"
    data = open(p, "rb").read()
    t = os.path.join(TMP, "truncated.ckpt")
    with open(t, "wb") as f:
        f.write(data[:len(data) // 2])
    fresh = build("dp-dda")
    raises(dpdo.FormatError, fresh.load, t)
    assert fresh.round == 0 and fresh.state == "READY"
    fresh.run(1)
    raises(dpdo.StateError, fresh.load, p)  # it has started
    raises(dpdo.IOFailure, build("dp-dda").load, os.path.join(TMP, "absent.ckpt"))
    raises(dpdo.InvalidArgument, part.save, p, key=b"short", contains="32 bytes")
    unstarted = build("dp-dda")
    raises(dpdo.StateError, unstarted.save, p)  # nothing to save before round 1


@case
def secure_runs_need_a_host_key():
    def secure():
        return build("dp-dda", randomness=dpdo.RANDOMNESS_SECURE)
    a = secure()
    a.run(6)
    raises(TypeError, pickle.dumps, a, contains="key")
    p = os.path.join(TMP, "secure.ckpt")
    raises(TypeError, pickle.dumps, a, contains="alg.save(path, key=<32 bytes>)")
    raises(dpdo.StateError, a.save, p, contains="key=<32 bytes>")
    assert not os.path.exists(p)
    key = bytes(range(32))
    a.save(p, key=key)
    assert open(p, "rb").read(8) == b"DPDOCKPT"
    b = secure()
    raises(dpdo.FormatError, b.load, p, key=bytes(32))  # wrong key: authentication fails
    assert b.round == 0
    raises(dpdo.DpdoError, b.load, p)                   # no key for an encrypted file
    b.load(p, key=key)
    a.run()
    b.run()
    assert snapshot(a) == snapshot(b)  # the node keys came back from the encrypted file
    # two fresh SECURE runs differ (their keys come from the OS): the identity above is not trivial
    c, d = secure(), secure()
    c.run()
    d.run()
    assert c.output().tobytes() != d.output().tobytes()
    # host keys are secret: a run with them does not pickle, even in REPRODUCIBLE mode
    h = build("dp-dda")
    h.set_node_key(0, bytes(range(1, 33)))
    raises(TypeError, pickle.dumps, h, contains="host keys")


_tap.summary()
