#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Authenticated files from Python (docs/model.md "Durable, authenticated model files"):

* dpdo.Model: a saved file carries a checksum; an edited epsilon line is refused
  ("checksum mismatch"); with a key the file carries a MAC, an edited one is refused
  ("MAC mismatch"), a MAC file loaded without the key is refused, a 0.2 file (no integrity line)
  loads as integrity "none"; pickling a keyed model gives a checksummed text;
* dpdo.Ledger.set_key: an authenticated ledger text, refused when edited or loaded without the
  key; the (run, sequence) pin refuses a rolled-back text in a fresh ledger;
* DPDO_E_MISUSE maps to dpdo.MisuseError (a StateError).
Prints TAP and the summary line."""
import os
import pickle
import tempfile

import _tap
from _tap import case, raises

import dpdo  # noqa: E402
from dpdo import _lib  # noqa: E402

KEY = b"k" * 32


def tmp(name):
    d = tempfile.mkdtemp(prefix="dpdo_integrity_")
    return os.path.join(d, name)


@case
def model_checksum_and_mac():
    m = dpdo.Model.from_vector([0.5, -1.25, 2.0])
    assert m.integrity == "local"
    p = tmp("a.model")
    m.save(p)
    assert dpdo.Model.load(p).integrity == "checksum"
    with open(p) as f:
        t = f.read()
    assert "\n# checksum blake2b-256 " in t
    raises(dpdo.FormatError, dpdo.Model.parse, t.replace("epsilon inf", "epsilon 0.5"), contains="checksum mismatch")
    legacy = t[:t.index("# checksum")]
    assert dpdo.Model.parse(legacy).integrity == "none"
    raises(dpdo.FormatError, dpdo.Model.parse, legacy, key=KEY, contains="not authenticated")
    m.set_key(KEY)
    m.save(p)
    with open(p) as f:
        t = f.read()
    assert "\n# mac blake2b-256 " in t
    k = dpdo.Model.load(p, key=KEY)
    assert k.integrity == "mac" and list(k.x) == [0.5, -1.25, 2.0]
    raises(dpdo.FormatError, dpdo.Model.load, p, contains="set its key")
    raises(dpdo.FormatError, dpdo.Model.parse, t.replace("\n2\n", "\n3\n"), key=KEY, contains="MAC mismatch")
    raises(dpdo.FormatError, dpdo.Model.load, p, key=b"o" * 32, contains="MAC mismatch")
    raises(dpdo.InvalidArgument, m.set_key, b"short")
    # a pickle carries a checksummed text, never the key
    r = pickle.loads(pickle.dumps(k))
    assert r.integrity == "checksum" and list(r.x) == [0.5, -1.25, 2.0]


@case
def ledger_set_key_and_rollback():
    ev = dpdo.Event.gaussian(1.0, 2.0)
    led = dpdo.Ledger(2)
    led.set_key(KEY)
    led.charge(ev, 1, [0])
    old = led.save()
    led.charge(ev, 2, [0])
    cur = led.save()
    run, seq = led.sequence()
    assert len(run) == 16 and seq == 2
    raises(TypeError, pickle.dumps, led)
    fresh = dpdo.Ledger(2)
    raises(dpdo.FormatError, fresh.load, cur, contains="set its key")
    fresh.set_key(KEY)
    raises(dpdo.FormatError, fresh.load, cur.replace("counts 3", "counts 1"), contains="MAC mismatch")
    fresh.set_min_sequence(run, seq)
    raises(dpdo.FormatError, fresh.load, old, contains="stale ledger")
    fresh.load(cur)
    assert fresh.charges(0) == 3


@case
def misuse_status_maps_to_misuse_error():
    e = _lib.error(_lib.E_MISUSE, "busy")
    assert isinstance(e, dpdo.MisuseError) and isinstance(e, dpdo.StateError)


_tap.summary()
