# SPDX-License-Identifier: BSD-3-Clause
"""Empirical privacy auditing (the C auditor, include/dpdo/audit.h; docs/privacy-audit.md).

    from dpdo.audit import Audit
    r = Audit("dp-dda", algorithm_options=dict(epsilon=2, max_rounds=3)).run()
    print(r.verdict, r.path, r.eps_lower, r.eps_claimed)

The defaults audit what users run: the secure path (exact discrete noise, fresh OS keys), the
white-box method (every noisy release, composed as a Gaussian), the canary at every node in turn,
30000 runs per dataset and node, the "auto" accountant.

An audit runs an algorithm on two neighbouring datasets (a canary row present or replaced),
attacks what an adversary sees, and turns the attack's success into a lower bound on epsilon
that holds with a stated confidence; a lower bound above the library's epsilon is a VIOLATION.
The statistics functions (Clopper-Pearson bounds, the bound from counts, the one-run bound) are
the library's pure functions.
"""
import ctypes as C
from typing import Any, Callable, Dict, Optional, Tuple

from . import _capi, _lib
from ._core import _Callbacks, _fill, _guarded, _Handle, _new, _option_names, param_key
from ._lib import InvalidArgument, as_doubles, error, lib, text

__all__ = ["Audit", "AuditResult", "clopper_pearson", "epsilon_from_counts", "one_run_epsilon", "verdict_name"]

_METHODS = {"white-box": _capi.DPDO_AUDIT_WHITE_BOX, "release": _capi.DPDO_AUDIT_RELEASE,
            "one-run": _capi.DPDO_AUDIT_ONE_RUN}
_VIEWS = {"transcript": _capi.DPDO_AUDIT_VIEW_TRANSCRIPT, "model": _capi.DPDO_AUDIT_VIEW_MODEL}
_NEIGHBOURS = {"replace": _capi.DPDO_AUDIT_REPLACE, "remove": _capi.DPDO_AUDIT_REMOVE}
_LOSSES = {"linear": _capi.DPDO_AUDIT_LOSS_LINEAR, "logistic": _capi.DPDO_AUDIT_LOSS_LOGISTIC}
_RANDOMNESS = {"secure": _capi.DPDO_RANDOMNESS_SECURE, "reproducible": _capi.DPDO_RANDOMNESS_REPRODUCIBLE}


def verdict_name(verdict) -> str:
    """"consistent", "VIOLATION" or "no claim" for a DPDO_AUDIT_* verdict."""
    return text(lib.dpdo_audit_verdict_name(int(verdict)))


class AuditResult(dict):
    """The fields of dpdo_audit_result by name (eps_lower, eps_claimed, verdict, ...), also as
    attributes; verdict and paper_verdict are names ("consistent", "VIOLATION", "no claim")."""

    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k) from None

    def __repr__(self):
        return "<dpdo.audit.AuditResult %s: eps_lower %.4g vs claimed %.4g at delta %g (%d runs)>" % (
            self["verdict"], self["eps_lower"], self["eps_claimed"], self["delta"], self["runs"])


def _choice(table, value, what):
    if isinstance(value, int) and value in table.values():
        return value
    if value not in table:
        raise InvalidArgument(_lib.E_INVAL, "%s must be one of %s, not %r" % (what, ", ".join(table), value))
    return table[value]


class Audit(_Handle):
    """An audit of algorithm type `kind` (dpdo_audit).

    Audit(kind, method="white-box" | "release" | "one-run", view="transcript" | "model",
          neighbour="replace" | "remove", randomness="secure" | "reproducible",
          path="secure" | "reproducible",
          loss="linear" | "logistic", accountant=None, policy=None, params=None,
          algorithm_options=None, **options)

    randomness says where each run's keys come from, path which of the algorithm's paths is
    audited (the result's "path" names it: the verdict holds for that path).
    options are the other fields of dpdo_audit_options (runs, train_fraction, confidence,
    canaries, guesses, nodes, rows, dim, canary_node, canary_norm, l2, seed, max_features,
    single_node);
    algorithm_options the fields of dpdo_algorithm_options for every run (epsilon, max_rounds,
    noise_mode, seed: the public seed, ...); params typed algorithm parameters by name.
    run(progress=None) runs it and returns an AuditResult; progress(done, total) is called after
    every algorithm run and a true return value stops the audit (dpdo.Canceled)."""

    _destroy = lib.dpdo_audit_destroy
    _errmsg = lib.dpdo_audit_errmsg

    def __init__(self, kind, method="white-box", view="transcript", neighbour="replace", randomness="secure",
                 loss="linear", accountant=None, policy=None, params=None, algorithm_options=None,
                 path="secure", **options):
        super().__init__()
        t = lib.dpdo_algorithm_type_find(kind.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown algorithm %r" % (kind,))
        self._h = _new(lib.dpdo_audit_create, "audit: out of memory")
        self._own()
        self.kind = kind
        ao = _fill(_capi.dpdo_algorithm_options, lib.dpdo_algorithm_options_init, dict(algorithm_options or {}),
                   "algorithm options")
        opts = dict(options, method=_choice(_METHODS, method, "method"), view=_choice(_VIEWS, view, "view"),
                    neighbour=_choice(_NEIGHBOURS, neighbour, "neighbour"),
                    randomness=_choice(_RANDOMNESS, randomness, "randomness"), loss=_choice(_LOSSES, loss, "loss"),
                    path=_choice(_RANDOMNESS, path, "path"))
        self._names = (accountant.encode() if accountant else None, policy.encode() if policy else None)
        o = _fill(_capi.dpdo_audit_options, lib.dpdo_audit_options_init, opts, "audit options")
        o.accountant, o.policy = self._names  # copied by setup
        self._check(lib.dpdo_audit_setup(self._ptr(), t, C.byref(ao), C.byref(o)))
        self.options = {k: getattr(o, k) for k in _option_names(_capi.dpdo_audit_options)}
        for k, v in (params or {}).items():
            key = param_key(k) if isinstance(k, str) else int(k)
            self._check(lib.dpdo_audit_set_param(self._ptr(), key, float(v)))

    @_guarded()
    def run(self, progress: Optional[Callable[[int, int], Any]] = None) -> AuditResult:
        """Run the audit (allocates; the algorithm runs `runs` times per dataset, or twice for the
        one-run audit) and return its result."""
        cb = _Callbacks()
        keep = None
        if progress is not None:
            def report(done, total, user):
                return 1 if progress(done, total) else 0
            fn = keep = _capi.dpdo_audit_progress_fn(cb.guard(report))  # alive until the run returns
            self._check(lib.dpdo_audit_set_progress(self._ptr(), fn, None))
        try:
            r = _capi.dpdo_audit_result()
            r.struct_size = C.sizeof(r)
            rc = lib.dpdo_audit_run(self._ptr(), C.byref(r))
        finally:
            if progress is not None:
                lib.dpdo_audit_set_progress(self._ptr(), None, None)
            del keep
        if rc == _lib.E_CANCELED and cb.exc is not None:
            cb.reraise(error(_lib.E_CALLBACK, "audit: the progress callback raised"))
        self._check(rc)
        out = AuditResult((k, getattr(r, k)) for k, _ in _capi.dpdo_audit_result._fields_ if k != "struct_size")
        out["verdict"] = verdict_name(r.verdict)
        out["paper_verdict"] = verdict_name(r.paper_verdict)
        names = {v: k for k, v in _RANDOMNESS.items()}
        out["path"], out["keys"] = names.get(r.path, r.path), names.get(r.keys, r.keys)
        return out

    def _describe(self):
        return "%s, %s audit" % (self.kind, {v: k for k, v in _METHODS.items()}[self.options["method"]])


# ---- statistics (pure) -------------------------------------------------------------------------------
def _call(fn, *args):
    rc = fn(*args)
    if rc < 0:
        raise error(rc, "%s: invalid arguments %r" % (fn.__name__, tuple(a for a in args
                                                                         if isinstance(a, (int, float)))))


def clopper_pearson(k, n, confidence=0.95) -> Tuple[float, float]:
    """One-sided exact Clopper-Pearson (lower, upper) bounds for k successes in n trials."""
    lo, hi = C.c_double(), C.c_double()
    _call(lib.dpdo_audit_clopper_pearson, int(k), int(n), float(confidence), C.byref(lo), C.byref(hi))
    return lo.value, hi.value


def epsilon_from_counts(tp, n1, fp, n0, delta=0.0, confidence=0.95) -> float:
    """The epsilon lower bound of a test that said "D1" for tp of n1 runs on D1 and fp of n0 on D0."""
    e = C.c_double()
    _call(lib.dpdo_audit_epsilon_from_counts, int(tp), int(n1), int(fp), int(n0), float(delta), float(confidence),
          C.byref(e))
    return e.value


def one_run_epsilon(m, r, v, delta=0.0, confidence=0.95) -> float:
    """Steinke-Nasr-Jagielski: the epsilon lower bound from m canaries, r guesses, v right."""
    e = C.c_double()
    _call(lib.dpdo_audit_one_run_epsilon, int(m), int(r), int(v), float(delta), float(confidence), C.byref(e))
    return e.value


def mu_lower(s1, s0, confidence=0.95) -> float:
    """The white-box statistic: a lower confidence bound on the Gaussian shift (GDP mu) between
    scores s1 (runs on D1) and s0 (runs on D0); NaN when the two spreads differ."""
    k1, p1, n1 = as_doubles(s1)
    k0, p0, n0 = as_doubles(s0)
    m = C.c_double()
    _call(lib.dpdo_audit_mu_lower, p1, n1, p0, n0, float(confidence), C.byref(m))
    return m.value


def eps_laplace_lower(s1, s0, confidence=0.95) -> float:
    """The white-box statistic for Laplace releases: a lower confidence bound on the shift over
    the scale, (m1 - m0) / b, between scores s1 (runs on D1) and s0 (runs on D0) (0.3)."""
    k1, p1, n1 = as_doubles(s1)
    k0, p0, n0 = as_doubles(s0)
    e = C.c_double()
    _call(lib.dpdo_audit_eps_laplace_lower, p1, n1, p0, n0, float(confidence), C.byref(e))
    return e.value


def bound_scores(s1, s0, train_fraction=0.5, delta=0.0, confidence=0.95) -> Dict[str, Any]:
    """The release audit's statistics on given scores (runs on D1 and D0, in order)."""
    k1, p1, n1 = as_doubles(s1)
    k0, p0, n0 = as_doubles(s0)
    if n1 != n0:
        raise InvalidArgument(_lib.E_INVAL, "s1 and s0 must have the same length (%d, %d)" % (n1, n0))
    e, t, tpr, fpr = C.c_double(), C.c_double(), C.c_double(), C.c_double()
    d = C.c_int32()
    _call(lib.dpdo_audit_bound_scores, p1, p0, n1, float(train_fraction), float(delta), float(confidence),
          C.byref(e), C.byref(t), C.byref(d), C.byref(tpr), C.byref(fpr))
    return {"eps_lower": e.value, "threshold": t.value, "direction": d.value, "tpr": tpr.value, "fpr": fpr.value}


__all__ += ["bound_scores", "mu_lower", "eps_laplace_lower"]
