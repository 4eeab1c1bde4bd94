#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The log callback from Python (docs/logging.md): Algorithm.set_log forwards the run's privacy
notes, calibration, warnings and summary to the "dpdo" logger of the logging module or to a
function; the notes it receives, joined, equal Algorithm.privacy_notes; the summary's epsilon is
the one privacy() reports; a raising handler does not stop the run; None silences it.
Prints TAP and "# summary: N passed, M failed"."""
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _tap import case, summary  # noqa: E402

import dpdo  # noqa: E402


def run(handler="logging", level=dpdo.LOG_NOTE, rounds=30, delta=0.01):
    ds = dpdo.Dataset.generate("epsilon-like", n=400, d=8, seed=3)
    loss = dpdo.Loss("logistic", 8)
    nodes = [dpdo.Node(s, loss) for s in ds.partition([100] * 4, seed=1)]
    acc = dpdo.Accountant(dpdo.Ledger(4))
    alg = dpdo.Algorithm("dp-dda", nodes, dpdo.Network.ring(4), None, acc, seed=5, max_rounds=rounds,
                         delta=delta, randomness=dpdo.RANDOMNESS_REPRODUCIBLE)
    alg.set_log(handler, level)
    alg.run()
    return alg


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@case
def to_the_logging_module():
    h = Collect()
    log = logging.getLogger("dpdo")
    log.addHandler(h)
    log.setLevel(logging.DEBUG)
    try:
        alg = run(level=dpdo.LOG_INFO)  # delta = 0.01 >= 1/400: a warning
    finally:
        log.removeHandler(h)
    notes = [r.getMessage()[len("note: "):] for r in h.records if r.getMessage().startswith("note: ")]
    assert "; ".join(notes) == alg.privacy_notes, (notes, alg.privacy_notes)
    warns = [r for r in h.records if r.levelno == logging.WARNING]
    assert any(">= 1/n" in r.getMessage() for r in warns), [r.getMessage() for r in warns]
    assert logging.getLevelName(dpdo.LOG_NOTE) == "NOTE"
    cal = [r.getMessage() for r in h.records if r.getMessage().startswith("calibration: ")]
    summ = [r.getMessage() for r in h.records if r.getMessage().startswith("summary: ")]
    assert len(cal) == 1 and len(summ) == 1, (cal, summ)
    eps = alg.privacy()[0]
    got = float(summ[0].split("epsilon = ")[1].split()[0])
    assert got == eps, (got, eps)


@case
def to_a_function_and_silenced():
    seen = []
    run(lambda lv, topic, msg: seen.append((lv, topic)), dpdo.LOG_WARN)
    assert seen and all(lv >= dpdo.LOG_WARN for lv, _ in seen), seen

    def bad(lv, topic, msg):
        raise RuntimeError("handler failure")
    alg = run(bad, dpdo.LOG_DEBUG)  # the run goes on
    assert alg.round == 30, alg.round
    quiet = []
    ds = dpdo.Dataset.generate("epsilon-like", n=400, d=8, seed=3)
    loss = dpdo.Loss("logistic", 8)
    nodes = [dpdo.Node(s, loss) for s in ds.partition([100] * 4, seed=1)]
    alg = dpdo.Algorithm("dp-dda", nodes, dpdo.Network.ring(4), None, dpdo.Accountant(dpdo.Ledger(4)),
                         max_rounds=5, delta=0.01, randomness=dpdo.RANDOMNESS_REPRODUCIBLE)
    alg.set_log(lambda *a: quiet.append(a), dpdo.LOG_DEBUG)
    alg.set_log(None)
    alg.run()
    assert quiet == [], quiet


if __name__ == "__main__":
    summary()
