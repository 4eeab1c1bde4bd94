# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn estimators over libdpdo: one differentially private linear classifier per
algorithm family.

    from dpdo.sklearn import DPDDAClassifier, DOADPClassifier, DPWORSGDClassifier, FedPLTClassifier
    clf = DOADPClassifier(epsilon=1.0, n_nodes=10, random_state=0).fit(X, y)
    clf.score(X_test, y_test), clf.privacy_["epsilon"], clf.coef_

fit(X, y) splits the rows of X (dense NumPy, or SciPy sparse, used as CSR) at random over
`n_nodes` simulated nodes, or by `node_ids` (alias `groups`: one node per distinct value) for
data that already lives on nodes, and runs the algorithm in libdpdo. Binary problems train one
model; K > 2 classes train K one-vs-rest models, each with budget (epsilon / K, delta / K), so
that the whole fit is (epsilon, delta)-DP by basic composition (privacy_ reports it).

Privacy: the noise is calibrated by the library's accountant for the sampling that runs
(noise_mode "rigorous"); per-sample gradients are clipped to norm `lipschitz` (an explicit clip,
so the guarantee holds whatever the scale of X; scale rows to norm <= 1, e.g. with
sklearn.preprocessing.Normalizer, so that clipping does not bias the model).
epsilon=float("inf") runs the same algorithm without noise (the non-private baseline).

random_state: None (default) draws the private randomness from the operating system (the
library's SECURE mode, not reproducible); an int (or a RandomState, from which an int is
drawn) selects REPRODUCIBLE mode with that seed: bit-identical refits, but the guarantee then
holds only against parties who do not know the seed.

The module imports without scikit-learn; the classes are then plain Python classes with the same
methods (get_params/set_params/score included). With scikit-learn installed they derive from
BaseEstimator and ClassifierMixin and pass sklearn.utils.estimator_checks.check_estimator.
"""
import inspect
import math
import numbers
import warnings
from typing import Any, Dict, List, Optional

from . import _core
from . import diagnostics as _diag
from . import tuning as _tuning
from ._lib import require_numpy

#: The accountant every estimator uses when accountant=None: "auto", the tightest sound figure
#: (docs/privacy.md, "Which accountant").
DEFAULT_ACCOUNTANT = "auto"

try:  # scikit-learn is optional
    from sklearn.base import BaseEstimator as _Base, ClassifierMixin as _Mixin
    from sklearn.utils.multiclass import check_classification_targets as _check_targets
    from sklearn.utils.validation import check_is_fitted as _check_is_fitted, column_or_1d as _column_or_1d
    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised by the no-sklearn test in a subprocess
    HAVE_SKLEARN = False

    class _Base:
        """Minimal stand-in for sklearn.base.BaseEstimator (get_params/set_params/repr)."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(p for p in sig.parameters if p != "self")

        def get_params(self, deep=True):
            """The constructor parameters as a dict."""
            return {k: getattr(self, k) for k in self._get_param_names()}

        def set_params(self, **params):
            """Set constructor parameters; returns self."""
            valid = self._get_param_names()
            for k, v in params.items():
                if k not in valid:
                    raise ValueError("Invalid parameter %r for estimator %s. Valid parameters are: %s"
                                     % (k, type(self).__name__, valid))
                setattr(self, k, v)
            return self

        def __repr__(self):
            return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % kv for kv in self.get_params().items()))

    class _Mixin:
        """Minimal stand-in for sklearn.base.ClassifierMixin (score = accuracy)."""
        _estimator_type = "classifier"

        def score(self, X, y, sample_weight=None):
            """Mean accuracy of predict(X) against y."""
            np = require_numpy("score")
            p = self.predict(X)
            w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
            return float(np.average(p == np.asarray(y), weights=w))

    class NotFittedError(ValueError, AttributeError):
        """The estimator is used before fit."""

    def _check_is_fitted(est, attributes=None):
        if not hasattr(est, "coef_"):
            raise NotFittedError("This %s instance is not fitted yet. Call 'fit' first." % type(est).__name__)

    def _check_targets(y):
        np = require_numpy("dpdo.sklearn")
        if np.asarray(y).dtype.kind == "f" and not np.all(np.asarray(y) == np.round(np.asarray(y))):
            raise ValueError("Unknown label type: continuous targets (a classifier needs class labels)")

    def _column_or_1d(y, warn=False):
        np = require_numpy("dpdo.sklearn")
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            return y.ravel()
        if y.ndim != 1:
            raise ValueError("y should be a 1d array, got an array of shape %r instead." % (y.shape,))
        return y


class _ConditionalMethod:
    """A method that exists only when check(instance) is true (like sklearn's available_if), so
    hasattr(clf, "predict_proba") is False for losses without probabilities."""

    def __init__(self, fn, check):
        self.fn, self.check = fn, check
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if not self.check(obj):
            raise AttributeError("%s has no %s for loss=%r (only the logistic loss gives probabilities)"
                                 % (type(obj).__name__, self.fn.__name__, getattr(obj, "loss", None)))
        return self.fn.__get__(obj, owner)


def _has_proba(est):
    return est.loss == "logistic"


class _Run:
    """One binary problem being trained: the libdpdo objects of one one-vs-rest class."""

    def __init__(self, alg, objs):
        self.alg, self.objs = alg, objs
        self.avg, self.n_avg = None, 0

    def add_snapshot(self):
        np = require_numpy("dpdo.sklearn")
        x = np.asarray(self.alg.output(), dtype=np.float64)
        self.n_avg += 1
        self.avg = x.copy() if self.avg is None else self.avg + (x - self.avg) / self.n_avg

    def model(self):
        """The averaged snapshots, or the algorithm's output when none was taken."""
        np = require_numpy("dpdo.sklearn")
        return self.avg if self.avg is not None else np.asarray(self.alg.output(), dtype=np.float64)

    def close(self):
        self.alg.close()
        for o in self.objs:
            o.close()


_PAPER_ROUNDS = {"dp-dda": 500, "do-adp": 500, "fed-plt": 50}
# Why (docs/choosing.md, "Library defaults"): with replace-one accounting of b of q rows drawn
# without replacement, the noise on a run's averaged gradient is nearly the same for every batch
# and number of releases at a given (eps, delta) (q = 43 rows, eps = 1, delta = 1e-5, "auto"
# accountant: 0.17-0.20 x clip per coordinate for batches 2..43 and 50..4000 releases), so the plan
# takes the whole local data per release (most signal per release, fewest releases to compute).
_REASON = {
    "dp-dda": "every node computes every round on its whole local data (q = %(q)d rows; node sampling is "
              "public and amplifies nothing), static gossip on the network; a run's gradient noise depends on the "
              "budget, not on the batch or the round count, so the plan uses full batches and 200 rounds; L2 "
              "0.01 rising to 0.03 as the budget's noise grows",
    "do-adp": "full local batch (q = %(q)d rows) each round, consensus step 0.5, no momentum, 300 rounds, "
              "model = tail average of the network average; the step shrinks from 0.5 to 0.1 as the budget's "
              "noise grows",
    "dp-wor-sgd": "one mini-batch = the whole local data (q = %(q)d rows) per pass, 40 passes: the noise per "
                  "pass is set by the budget, so passes converge the model at no privacy cost beyond the "
                  "calibrated sigma; model = tail average",
    "fed-plt": "one noisy local gradient step per round (every extra step is another full-data release), "
               "50 rounds shrinking to 20 (and the clip L/2 from the others' clip to half of it) as the budget's "
               "noise grows, model = tail average",
}


def _plan_run(kind, sizes, dim, eps, delta, acc_name, library, tune):
    """The plan of one binary run (see _DPClassifier._plan)."""
    q, n = min(sizes), len(sizes)
    if not library:
        return {"rounds": _PAPER_ROUNDS.get(kind, 1), "batch": None, "step_size": None, "alpha": 1e-3, "lipschitz": 1.0,
                "params": {}, "averaging": 0.0, "epochs": 1, "kind": kind, "profile": "paper",
                "reason": "the settings of 0.2 (fixed, not planned)"}
    g = tune.get
    plan = {"params": {}, "step_size": None, "alpha": g("alpha", 1e-3 if kind != "dp-dda" else 1e-2),
            "averaging": g("averaging", 0.5)}
    if kind == "dp-dda":
        plan["batch"] = int(min(q, g("batch", q)))
        plan["rounds"] = int(g("rounds", 200))
        plan["params"] = {"dda-active": n, "dda-scheme": g("scheme", 0), "dda-all-compute": 1}
        plan["averaging"] = g("averaging", 0.0)
    elif kind == "do-adp":
        plan["batch"] = int(min(q, g("batch", q)))
        plan["rounds"] = int(g("rounds", 300))
        plan["step_size"] = None  # below: set by the noise level
        plan["params"] = {"adp-gamma": g("gamma", 0.5), "adp-beta": g("beta", 0.0)}
    elif kind == "dp-wor-sgd":
        plan["batch"] = int(min(q, g("batch", q)))
        plan["epochs"] = int(g("epochs", 40))
        plan["step_size"] = g("step", 0.5)
        plan["rounds"] = plan["epochs"] * (max(sizes) // plan["batch"])
        if g("smooth"):
            plan["params"] = {"wor-smooth": g("smooth")}
    elif kind == "fed-plt":
        plan["params"] = {"fed-epochs": int(g("fed_epochs", 1)), "fed-rho": g("rho", 1.0)}
    # per-sample clip: at x = 0 every logistic gradient on a unit-norm row has norm 0.5 (0.71 with
    # the intercept feature); a clip of 0.2 rescales them alike instead of biasing their mix, and
    # the noise, proportional to the clip, drops 5-fold against clip 1
    # the noise the budget implies: per coordinate on a run's averaged full-batch gradient (clip 1),
    # from the accountant (T releases of sensitivity 2/q), times sqrt(d / n) for its norm after the
    # average over the n nodes; clip 1 where it is small (<= 0.1), 0.2 where it is large (>= 0.3),
    # geometric in between
    nu = math.inf
    if math.isfinite(eps):
        acc = _core.Accountant(_core.Ledger(1), acc_name)
        try:
            nu = acc.calibrate_sigma(eps, delta, 100, sensitivity=2.0 / q) / 10.0 * math.sqrt(dim / n)
        finally:
            acc.ledger.close()
            acc.close()
    # t: 0 where the noise is small (nu <= 0.1), 1 where it is large (nu >= 0.3), log-linear between
    t = 0.0 if nu <= 0.1 or not math.isfinite(eps) else 1.0 if nu >= 0.3 else math.log(nu / 0.1) / math.log(3.0)
    clip = 0.2 ** t
    plan["noise"] = nu
    # how far the model travels (rounds x step x clip): where the noise is large, the rounds after
    # the gradient has shrunk add noise and no signal (the noise per round grows with the number of
    # rounds calibrated for), so the plan travels less: DP-DDA L2 0.01 -> 0.03, DO-ADP step 0.5 -> 0.1,
    # Fed-PLT (whose local step is 1 / smoothness, about 4 on unit-norm rows) 50 -> 20 rounds and
    # clip L/2 = clip -> clip/2;
    # measured on tuning data only (docs/choosing.md, "Why the travel shrinks with the noise")
    if kind == "dp-dda":  # dual averaging: the L2 term scales the primal map down
        plan["alpha"] = g("alpha", 1e-2 * 3.0 ** t)
    elif kind == "do-adp":
        plan["step_size"] = g("step", 0.5 * 0.2 ** t)
    elif kind == "fed-plt":
        plan["rounds"] = int(g("rounds", round(50 * 0.4 ** t)))
        clip *= 2.0 * 0.5 ** t  # Fed-PLT clips at L/2: L = 2 clip is the others' clip, L = clip half of it
    # the constant feature of the intercept: 1/sqrt(d), the typical size of one coordinate of a
    # unit-norm row, instead of 1. The noise on its weight moves every margin by the same amount
    # (noise of norm s on the intercept), a shift that turns a noisy model into a one-class
    # predictor; at s = 1 that shift has the variance of all the other coordinates' noise together
    # (docs/choosing.md, "Why the intercept feature is small")
    plan["intercept_scaling"] = g("icpt", 1.0 / math.sqrt(max(1, dim - 1)) if math.isfinite(eps) else 1.0)
    plan["lipschitz"] = g("lipschitz", clip)
    plan["reason"] = _REASON[kind] % {"q": q, "n": n, "eps": eps}
    plan["kind"], plan["profile"] = kind, "library"
    return plan


def _plan_note(plan, rounds):
    """One line of notes: what the plan chose and why."""
    parts = ["%d rounds" % rounds]
    for k, fmt in (("batch", "batch %d"), ("epochs", "%d passes"), ("step_size", "step %g"), ("alpha", "L2 %g"),
                   ("lipschitz", "clip/L %g"), ("intercept_scaling", "intercept feature %.3g"),
                   ("averaging", "tail average over the last %.0f%% of rounds")):
        if plan.get(k) is not None and not (k == "averaging" and not plan[k]) and not (k == "epochs" and "wor" not in
                                                                                        plan.get("kind", "")):
            parts.append(fmt % (plan[k] * 100 if k == "averaging" else plan[k]))
    parts += ["%s=%s" % kv for kv in sorted(plan.get("params", {}).items())]
    if plan.get("noise") is not None:
        parts.append("budget noise %.3g (norm of the averaged gradient's noise at clip 1; the clip is 1 below 0.1 and "
                     "0.2 above 0.3)" % plan["noise"])
    return "plan (%s): %s; %s" % (plan.get("profile", "library"), ", ".join(parts), plan["reason"])


class _DPClassifier(_Mixin, _Base):
    """Shared implementation; see the subclasses (one per algorithm family)."""

    _kind = None           # libdpdo algorithm type
    _uses_network = True

    # ---- parameters ------------------------------------------------------------------------------
    def _common(self, epsilon, delta, n_nodes, network, loss, alpha, C, fit_intercept, random_state,
                accountant, lipschitz, step_size, record_history, partial_rounds, verbose):
        self.epsilon = epsilon
        self.delta = delta
        self.n_nodes = n_nodes
        if self._uses_network:
            self.network = network
        self.loss = loss
        self.alpha = alpha
        self.C = C
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant
        self.lipschitz = lipschitz
        self.step_size = step_size
        self.record_history = record_history
        self.partial_rounds = partial_rounds
        self.verbose = verbose

    # ---- validation ------------------------------------------------------------------------------
    def _validate(self, X, y=None, reset=True):
        np = require_numpy("dpdo.sklearn estimators")
        if HAVE_SKLEARN:
            if reset:  # y None: sklearn raises "requires y to be passed"
                return self._validate_data(X, y, accept_sparse="csr", dtype=np.float64, reset=True)
            return self._validate_data(X, accept_sparse="csr", dtype=np.float64, reset=False), None
        if y is None and reset:
            raise ValueError("%s requires y to be passed, but the target y is None" % type(self).__name__)
        if hasattr(X, "tocsr"):
            X = X.tocsr().astype(np.float64)
            data = X.data
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2:
                raise ValueError("Expected 2D array, got %dD array instead" % X.ndim)
            data = X
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError("Found array with shape %r: need at least one sample and one feature" % (X.shape,))
        if not np.all(np.isfinite(data)):
            raise ValueError("Input X contains NaN or infinity.")
        if reset:
            self.n_features_in_ = X.shape[1]
        elif X.shape[1] != self.n_features_in_:
            raise ValueError("X has %d features, but %s is expecting %d features as input."
                             % (X.shape[1], type(self).__name__, self.n_features_in_))
        if y is not None:
            y = np.asarray(y)
            if y.shape[0] != X.shape[0]:
                raise ValueError("X and y have different numbers of samples: %d, %d" % (X.shape[0], y.shape[0]))
        return X, y

    def _check_params(self, n_samples):
        if not (isinstance(self.n_nodes, numbers.Integral) and self.n_nodes >= 1):
            raise ValueError("n_nodes must be an int >= 1, got %r" % (self.n_nodes,))
        if not (isinstance(self.epsilon, numbers.Real) and self.epsilon > 0):
            raise ValueError("epsilon must be > 0 (float('inf') for a non-private run), got %r" % (self.epsilon,))
        if not (self.delta == "auto" or (isinstance(self.delta, numbers.Real) and 0 < self.delta < 1)):
            raise ValueError("delta must be 'auto' or in (0, 1), got %r" % (self.delta,))
        if self.loss not in ("logistic", "hinge", "squared"):
            raise ValueError("loss must be 'logistic', 'hinge' or 'squared', got %r" % (self.loss,))
        if self.C is not None and not (isinstance(self.C, numbers.Real) and self.C > 0):
            raise ValueError("C must be > 0 or None, got %r" % (self.C,))
        if not (self.alpha == "auto" or (isinstance(self.alpha, numbers.Real) and self.alpha >= 0)):
            raise ValueError("alpha must be >= 0 or 'auto', got %r" % (self.alpha,))
        if n_samples < self.n_nodes:
            raise ValueError("n_samples=%d < n_nodes=%d: every node needs at least one sample"
                             % (n_samples, self.n_nodes))

    def _seed(self):
        """(randomness mode, seed) from random_state."""
        np = require_numpy("dpdo.sklearn")
        rs = self.random_state
        if rs is None:
            return _core.RANDOMNESS_SECURE, 0
        if isinstance(rs, numbers.Integral):
            return _core.RANDOMNESS_REPRODUCIBLE, int(rs) & ((1 << 64) - 1)
        if isinstance(rs, np.random.RandomState):
            return _core.RANDOMNESS_REPRODUCIBLE, int(rs.randint(0, 2 ** 31 - 1))
        raise ValueError("random_state must be None, an int or a numpy RandomState, got %r" % (rs,))

    def _reg_strength(self, n_samples):
        if self.C is not None:
            return 1.0 / (self.C * n_samples)
        if self.alpha == "auto":
            return float(self._cur_plan["alpha"])
        return float(self.alpha)

    # ---- building one binary run -----------------------------------------------------------------
    def _icpt(self):
        """Value of the appended constant feature (the intercept is its weight times it)."""
        return float(getattr(self, "_cur_plan", {}).get("intercept_scaling", 1.0))

    def _clip(self):
        """The clip norm / per-sample gradient bound of the current fit (the plan's when "auto")."""
        return self._cur_plan["lipschitz"] if self.lipschitz == "auto" else float(self.lipschitz)

    def _augment(self, X):
        np = require_numpy("dpdo.sklearn")
        if not self.fit_intercept:
            return X
        c = np.full((X.shape[0], 1), self._icpt())
        if hasattr(X, "tocsr"):
            import scipy.sparse as sp
            return sp.hstack([X, c], format="csr")
        return np.hstack([X, c])

    def _node_rows(self, n, node_ids, seed):
        """Row indices of each node."""
        np = require_numpy("dpdo.sklearn")
        if node_ids is not None:
            ids = np.asarray(node_ids)
            if ids.shape[0] != n:
                raise ValueError("node_ids/groups has %d entries for %d samples" % (ids.shape[0], n))
            return [np.flatnonzero(ids == v) for v in np.unique(ids)]
        perm = np.random.RandomState(seed % (2 ** 32)).permutation(n)
        return [np.sort(part) for part in np.array_split(perm, self.n_nodes)]

    def _budget(self, n_classes_trained):
        if math.isinf(self.epsilon):
            return math.inf, self._delta
        return self.epsilon / n_classes_trained, self._delta / n_classes_trained

    def _options(self, eps, delta, mode, seed, horizon):
        lip = self._clip()
        o = dict(max_rounds=horizon, seed=seed, randomness=mode, lipschitz=lip, clip=lip, delta=delta)
        plan = self._cur_plan
        if plan.get("batch"):
            o["batch"] = int(plan["batch"])
        if plan.get("step_size") is not None:
            o["step_size"] = float(plan["step_size"])
        if math.isinf(eps):
            o["noise_mode"] = _core.NOISE_NONE
        else:
            o["noise_mode"] = _core.NOISE_RIGOROUS
            o["epsilon"] = eps
        if self.step_size is not None:
            o["step_size"] = float(self.step_size)
        return o

    def _horizon(self, rows):
        if self.max_rounds == "auto":
            return int(self._plan(rows)["rounds"])
        if not (isinstance(self.max_rounds, numbers.Integral) and self.max_rounds >= 1):
            raise ValueError("max_rounds must be an int >= 1 or 'auto', got %r" % (self.max_rounds,))
        return int(self.max_rounds)

    # ---- library defaults (budget-aware planning) --------------------------------------------------
    _TUNE = {}  # class-level overrides of the plan's numbers (scripts/eval-defaults.py --tune)

    def _library(self):
        p = getattr(self, "profile", "library")
        if p not in ("library", "paper"):
            raise ValueError("profile must be 'library' or 'paper', got %r" % (p,))
        return p == "library"

    def _plan(self, rows):
        """The run's plan for these node sizes (cached per fit): dict of rounds, batch, step_size,
        params (typed keys), averaging (fraction of the rounds in the tail average) and reason."""
        key = (tuple(len(r) for r in rows), self.epsilon, self.delta, self._n_models)
        cached = getattr(self, "_plan_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        eps, delta = self._budget(self._n_models)
        plan = _plan_run(self._kind, [len(r) for r in rows], self.n_features_in_ + bool(self.fit_intercept), eps,
                         delta, self._acc_name(), self._library(),
                         dict(self._TUNE))
        # PrivateSearchCV's candidates around the plan ("plan.alpha": 3 = the plan's alpha x 3)
        for k, f in sorted(getattr(self, "_plan_scale", {}).items()):
            if plan.get(k) is not None:
                plan[k] = max(1, int(round(plan[k] * f))) if k in ("rounds", "epochs", "batch") else plan[k] * f
        self._plan_cache = (key, plan)
        return plan

    def _acc_name(self):
        return self.accountant or DEFAULT_ACCOUNTANT

    def _extra(self, d, rows, Xa):
        """(params dict, solver, compressor, policy) of the family."""
        return {}, None, None, None

    def _build(self, Xa, yk, rows, eps, delta, mode, seed):
        np = require_numpy("dpdo.sklearn")
        d = Xa.shape[1]
        if hasattr(Xa, "tocsr"):
            ds = _core.Dataset.csr(Xa, yk)
        else:
            ds = _core.Dataset(Xa, yk)
        loss = _core.Loss(self.loss, d)
        shards = [ds.subset(r) for r in rows]
        nodes = [_core.Node(s, loss) for s in shards]
        k = len(nodes)
        net = _core.Network.make(self.network, k) if (self._uses_network and k > 1) else (
            _core.Network.complete(1) if self._uses_network else None)
        reg = _core.Regularizer("l2", d, self._reg_strength(Xa.shape[0]))
        acc = _core.Accountant(_core.Ledger(k), self._acc_name())
        params, solver, comp, pol = self._extra(d, rows, Xa)
        params = dict(self._cur_plan.get("params", {}), **params)
        alg = _core.Algorithm(self._kind, nodes, net, reg, acc, params=params, solver=solver, compressor=comp,
                              policy=pol, **self._options(eps, delta, mode, seed, self._horizon(rows)))
        objs = [o for o in [acc, acc.ledger, reg, net, solver, comp, pol] + nodes + shards + [loss, ds]
                if o is not None]
        return _Run(alg, objs)

    def _targets(self, y):
        """The +-1 label vectors of the binary problems (one for 2 classes, K for K > 2)."""
        np = require_numpy("dpdo.sklearn")
        if len(self.classes_) == 2:
            return [np.where(y == self.classes_[1], 1.0, -1.0)]
        return [np.where(y == c, 1.0, -1.0) for c in self.classes_]

    def _run_one(self, run, rounds, hist):
        if run.alg.state == "DONE":  # the horizon is reached: the budget is spent, nothing more runs
            return
        history = [] if self.record_history else None
        every = None
        if self.record_history:
            rh = self.record_history
            every = int(rh) if (isinstance(rh, numbers.Integral) and not isinstance(rh, bool)) \
                else max(1, self._horizon_estimate // 100)
            if every < 1:
                raise ValueError("record_history must be True or a number of rounds >= 1, got %r" % (rh,))
        kw = dict(progress=True if self.verbose else None, every=every, epsilon=bool(self.record_history),
                  objective=bool(self.record_history), history=history)
        frac = self._cur_plan.get("averaging", 0.0)
        if not frac:
            run.alg.run(max_steps=rounds, **kw)
        else:
            # tail averaging (library default): the model is the mean of snapshots of the output
            # taken evenly over the last `frac` of the planned rounds (post-processing: free)
            T = self._horizon_estimate
            tail = max(1, int(math.ceil(frac * T)))
            t0, chunk = T - tail, max(1, tail // 64)
            limit = run.alg.round + rounds if rounds > 0 else None
            while run.alg.state != "DONE" and (limit is None or run.alg.round < limit):
                r = run.alg.round
                nxt = t0 if r < t0 else r + chunk
                if limit is not None:
                    nxt = min(nxt, limit)
                run.alg.run(max_steps=max(1, nxt - r), **kw)
                if run.alg.round >= t0 and run.alg.round > r:
                    run.add_snapshot()
        if history is not None:
            hist.extend({"round": r, "epsilon": e, "objective": f} for r, e, f in history)

    def _collect(self):
        np = require_numpy("dpdo.sklearn")
        W = np.array([r.model() for r in self._runs])
        if self.fit_intercept:
            self.coef_, self.intercept_ = W[:, :-1].copy(), W[:, -1] * self._icpt()
        else:
            self.coef_, self.intercept_ = W, np.zeros(W.shape[0])
        per = []
        for r in self._runs:
            e, dl, _ = r.alg.privacy(_core.PRIVACY_RIGOROUS)
            try:
                pe, pd, pv = r.alg.privacy(_core.PRIVACY_PAPER)
            except _core.DpdoError:
                pe, pd, pv = math.nan, math.nan, False
            per.append({"epsilon": e, "delta": dl, "paper_epsilon": pe, "paper_delta": pd, "paper_valid": pv,
                        "rounds": r.alg.round, "stop_reason": r.alg.stop_reason, "notes": r.alg.privacy_notes})
        K = len(per)
        notes = [p["notes"] for p in per if p["notes"]]
        notes.insert(0, _plan_note(self._cur_plan, self._horizon_estimate))
        self.plan_ = dict(self._cur_plan, rounds=self._horizon_estimate)
        if K > 1:
            notes.insert(0, "%d one-vs-rest models, each charged (epsilon/%d, delta/%d); totals by basic "
                         "composition" % (K, K, K))
        self.privacy_ = {
            "epsilon": float(sum(p["epsilon"] for p in per)),
            "delta": float(sum(p["delta"] for p in per)),
            "target_epsilon": self.epsilon, "target_delta": self._delta,
            "accountant": self._runs[0].alg.accountant.name,
            "paper_epsilon": float(sum(p["paper_epsilon"] for p in per)),
            "paper_delta": float(sum(p["paper_delta"] for p in per)),
            "paper_valid": all(p["paper_valid"] for p in per),
            "randomness": "reproducible" if self.random_state is not None else "secure",
            "rounds": [p["rounds"] for p in per], "stop_reason": [p["stop_reason"] for p in per],
            "notes": "; ".join(dict.fromkeys([n for n in [self._delta_note] if n] + notes)),
            "per_model": per,
        }

    def _close_runs(self):
        for r in getattr(self, "_runs", None) or []:
            r.close()
        self._runs = None

    def _start(self, X, y, node_ids):
        np = require_numpy("dpdo.sklearn")
        _check_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError("%s needs samples of at least two classes; got one class (%r)"
                             % (type(self).__name__, self.classes_[0] if len(self.classes_) else None))
        self._check_params(X.shape[0])
        self._partial_lost = False
        mode, seed = self._seed()
        rows = self._node_rows(X.shape[0], node_ids, seed)
        if any(len(r) == 0 for r in rows):
            raise ValueError("a node has no samples")
        targets = self._targets(y)
        self._delta, self._delta_note = _diag.resolve_delta(self.delta, X.shape[0])
        self._fit_rows = rows
        eps, delta = self._budget(len(targets))
        self._close_runs()
        self._n_models = len(targets)
        self._plan_cache = None
        self._cur_plan = self._plan(rows)
        Xa = self._augment(X)
        self._horizon_estimate = self._horizon(rows)
        self._runs = [self._build(Xa, yk, rows, eps, delta, mode, (seed + 7919 * k) & ((1 << 64) - 1))
                      for k, yk in enumerate(targets)]
        self.history_ = [[] for _ in targets] if self.record_history else None

    # ---- public API ------------------------------------------------------------------------------
    def fit(self, X, y, node_ids=None, groups=None):
        """Train on X (n_samples x n_features, dense or sparse) and labels y. The rows are split at
        random over n_nodes nodes, or by node_ids (alias groups): one node per distinct value.
        Returns self."""
        if node_ids is None:
            node_ids = groups
        X, y = self._validate(X, y, reset=True)
        y = _column_or_1d(y, warn=True)
        self._start(X, y, node_ids)
        for k, run in enumerate(self._runs):
            self._run_one(run, 0, self.history_[k] if self.history_ is not None else [])
        self._collect()
        self.diagnostics_ = _diag.diagnose(self, X, y, self._augment(X), self._fit_rows)
        _tuning.note_fit(self, X, y)
        return self

    def partial_fit(self, X, y, classes=None, node_ids=None, groups=None):
        """More rounds on the same budget. The first call sets the run up on (X, y) exactly as
        fit() does (the noise is calibrated for the whole horizon, so the budget is the one of a
        full fit) and runs `partial_rounds` rounds (default: a tenth of the horizon); each later
        call runs the next `partial_rounds` rounds of that same run, on the data of the first call
        (later X, y are only checked: same features, known classes). Once the horizon is reached
        the model stops changing and privacy_ never exceeds the budget. Returns self."""
        np = require_numpy("dpdo.sklearn")
        if node_ids is None:
            node_ids = groups
        first = getattr(self, "_runs", None) is None
        if first and getattr(self, "_partial_lost", False):
            raise ValueError("partial_fit: this estimator was pickled in the middle of a partial_fit run, whose state "
                             "does not pickle; call fit() to train anew (a new run spends a new budget)")
        if first:
            X, y = self._validate(X, y, reset=True)
        else:
            X, _ = self._validate(X, None, reset=False)
            y = np.asarray(y)
        y = _column_or_1d(y, warn=True)
        if first:
            self._start(X, y, node_ids)
            if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
                self._close_runs()
                raise ValueError("partial_fit: classes=%r, but the first batch has classes %r: a one-vs-rest run "
                                 "needs every class in the first call" % (list(classes), list(self.classes_)))
        else:
            unknown = np.setdiff1d(np.unique(y), self.classes_)
            if unknown.size:
                raise ValueError("partial_fit: classes %r were not in the first call" % (list(unknown),))
        step = self.partial_rounds or max(1, self._horizon_estimate // 10)
        for k, run in enumerate(self._runs):
            self._run_one(run, int(step), self.history_[k] if self.history_ is not None else [])
        self._collect()
        if first:
            self._partial_X, self._partial_y = X, y
        if all(r.alg.state == "DONE" for r in self._runs) and getattr(self, "_partial_X", None) is not None:
            Xp, yp = self._partial_X, self._partial_y  # the data of the run: diagnostics once it is complete
            self._partial_X = self._partial_y = None
            self.diagnostics_ = _diag.diagnose(self, Xp, yp, self._augment(Xp), self._fit_rows)
        return self

    def decision_function(self, X):
        """Margins X w + b: shape (n,) for two classes, (n, K) for K > 2 (one-vs-rest)."""
        _check_is_fitted(self)
        X, _ = self._validate(X, None, reset=False)
        s = X @ self.coef_.T + self.intercept_
        s = require_numpy("dpdo.sklearn").asarray(s)
        return s.ravel() if s.shape[1] == 1 else s

    def predict(self, X):
        """Class labels (from classes_)."""
        np = require_numpy("dpdo.sklearn")
        s = self.decision_function(X)
        if s.ndim == 1:
            return self.classes_[(s > 0).astype(int)]
        return self.classes_[np.argmax(s, axis=1)]

    def _predict_proba(self, X):
        """Class probabilities (logistic loss only): the sigmoid of the margin for two classes;
        for K > 2 the softmax of the one-vs-rest margins (it keeps their order, so the argmax is
        predict's class even where the sigmoids saturate)."""
        np = require_numpy("dpdo.sklearn")
        s = self.decision_function(X)
        if s.ndim == 1:
            p = 1.0 / (1.0 + np.exp(-np.clip(s, -500, 500)))
            return np.column_stack([1.0 - p, p])
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    predict_proba = _ConditionalMethod(_predict_proba, _has_proba)

    def _predict_log_proba(self, X):
        """log of predict_proba (logistic loss only)."""
        np = require_numpy("dpdo.sklearn")
        with np.errstate(divide="ignore"):
            return np.log(self._predict_proba(X))

    predict_log_proba = _ConditionalMethod(_predict_log_proba, _has_proba)

    def privacy_report(self) -> str:
        """privacy_ as a few lines of text."""
        _check_is_fitted(self)
        p = self.privacy_
        lines = ["%s: (epsilon, delta) = (%.4g, %.3g) by the %s accountant (target %.4g, %.3g); randomness %s"
                 % (type(self).__name__, p["epsilon"], p["delta"], p["accountant"], p["target_epsilon"],
                    p["target_delta"], p["randomness"]),
                 "paper bound: (%.4g, %.3g)%s" % (p["paper_epsilon"], p["paper_delta"],
                                                  "" if p["paper_valid"] else " (a precondition fails: see notes)"),
                 "rounds %s, stopped by %s" % (p["rounds"], p["stop_reason"])]
        if p["notes"]:
            lines.append("notes: " + p["notes"])
        return "\n".join(lines)

    def __getstate__(self):
        state = dict(self.__dict__)
        runs = state.pop("_runs", None)  # the live C run (for partial_fit) does not pickle; the model does
        state["_partial_lost"] = bool(runs) and any(r.alg.state != "DONE" for r in runs)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._runs = None

    def __del__(self):
        try:
            self._close_runs()
        except Exception:  # noqa: BLE001
            pass

    def _more_tags(self):
        return {"requires_y": True}


_COMMON_DOC = """
    Parameters (common to the four estimators)
    ----------
    epsilon, delta : the (epsilon, delta)-DP budget of the whole fit (float('inf'): no noise);
        delta "auto" (default) = min(1e-5, 1/(10 n)) for n training rows; a delta >= 1/n warns
        (dpdo.diagnostics.PrivacyWarning; docs/privacy.md, "Choosing delta")
    n_nodes : number of simulated nodes the rows are split over (ignored with node_ids/groups)
    network : "ring", "complete", "star", "torus", "circulant-K", "erdos-renyi-P" (decentralised
        families only)
    loss : "logistic" (predict_proba available), "hinge" or "squared"
    alpha : L2 regularisation strength lambda; C (if not None) overrides it: lambda = 1 / (C n)
    fit_intercept : append a constant feature (its weight is intercept_; it is regularised too)
    random_state : None = secure randomness; int = reproducible mode with that seed
    accountant : libdpdo accountant name; None (default) = "auto", the smallest certified figure
        of rdp, exact and pld (docs/privacy.md, "Which accountant")
    lipschitz : per-sample gradient bound L, also the clip norm
    step_size : the algorithm's base step (None: the library's preset)
    record_history : fill history_ with (round, epsilon, objective): True about 100 times per run,
        an int k every k rounds (1: every round)
    partial_rounds : rounds per partial_fit call (None: a tenth of the horizon)
    verbose : a tqdm progress bar (when tqdm is installed)

    Attributes
    ----------
    coef_ (n_models x n_features), intercept_ (n_models,), classes_, n_features_in_,
    privacy_ (dict: epsilon, delta, accountant, paper_epsilon, paper_delta, paper_valid, notes,
    rounds, stop_reason, per_model), history_ (list per model of dicts, when record_history),
    diagnostics_ (dict: clipped_fraction_start, clipped_fraction_final, noise_to_signal,
    train_score, baseline_score, better_than_baseline, warnings; dpdo.diagnostics.UtilityWarning
    when clipping or noise dominates; docs/python.md, "Diagnostics")
"""


class DPDDAClassifier(_DPClassifier):
    """Decentralised DP dual averaging (DP-DDA, "dp-dda"): nodes on a gossip network, a random
    subset computing each round; max_rounds rounds."""
    __doc__ += _COMMON_DOC
    _kind = "dp-dda"

    def __init__(self, epsilon=1.0, delta="auto", n_nodes=4, network="ring", loss="logistic", alpha="auto", C=None,
                 fit_intercept=True, max_rounds="auto", random_state=None, accountant=None, lipschitz="auto",
                 step_size=None, record_history=False, partial_rounds=None, verbose=False,
                 profile="library"):
        self._common(epsilon, delta, n_nodes, network, loss, alpha, C, fit_intercept, random_state, accountant,
                     lipschitz, step_size, record_history, partial_rounds, verbose)
        self.max_rounds = max_rounds
        self.profile = profile


class DOADPClassifier(_DPClassifier):
    """Decentralised DP optimisation with adaptive participation (DO-ADP, "do-adp"): nodes on a
    gossip network; max_rounds rounds."""
    __doc__ += _COMMON_DOC
    _kind = "do-adp"

    def __init__(self, epsilon=1.0, delta="auto", n_nodes=4, network="ring", loss="logistic", alpha="auto", C=None,
                 fit_intercept=True, max_rounds="auto", random_state=None, accountant=None, lipschitz="auto",
                 step_size=None, record_history=False, partial_rounds=None, verbose=False,
                 profile="library"):
        self._common(epsilon, delta, n_nodes, network, loss, alpha, C, fit_intercept, random_state, accountant,
                     lipschitz, step_size, record_history, partial_rounds, verbose)
        self.max_rounds = max_rounds
        self.profile = profile


class DPWORSGDClassifier(_DPClassifier):
    """DP SGD with mini-batches drawn without replacement (DP-WOR-SGD, "dp-wor-sgd"): each node
    makes `epochs` passes over its data in mini-batches of batch_size (None: min(32, smallest
    node)); the global model is shared, no gossip network."""
    __doc__ += _COMMON_DOC
    _kind = "dp-wor-sgd"
    _uses_network = False

    def __init__(self, epsilon=1.0, delta="auto", n_nodes=4, loss="logistic", alpha="auto", C=None,
                 fit_intercept=True, epochs="auto", batch_size="auto", random_state=None, accountant=None, lipschitz="auto",
                 step_size=None, record_history=False, partial_rounds=None, verbose=False,
                 profile="library"):
        self._common(epsilon, delta, n_nodes, None, loss, alpha, C, fit_intercept, random_state, accountant,
                     lipschitz, step_size, record_history, partial_rounds, verbose)
        self.epochs = epochs
        self.batch_size = batch_size
        self.profile = profile

    def _batch(self, rows):
        smallest = min(len(r) for r in rows)
        b = self.batch_size
        if b is None or (b == "auto" and not self._library()):
            b = 32
        elif b == "auto":
            b = self._plan(rows)["batch"]
        if not (isinstance(b, numbers.Integral) and b >= 1):
            raise ValueError("batch_size must be an int >= 1, 'auto' or None, got %r" % (b,))
        return int(max(1, min(b, smallest)))

    def _epochs(self, rows):
        e = self.epochs
        if e == "auto":
            e = self._plan(rows)["epochs"] if self._library() else 1
        if not (isinstance(e, numbers.Integral) and e >= 1):
            raise ValueError("epochs must be an int >= 1 or 'auto', got %r" % (e,))
        return int(e)

    def _horizon(self, rows):
        b = self._batch(rows)
        if self._library():  # synchronous schedule: every node steps once a round
            return self._epochs(rows) * (max(len(r) for r in rows) // b)
        return self._epochs(rows) * len(rows) * max(len(r) for r in rows) // b + 1

    def _options(self, eps, delta, mode, seed, horizon):
        o = _DPClassifier._options(self, eps, delta, mode, seed, 1 << 40)  # the passes end the run
        o["batch"] = self._cur_batch
        return o

    def _extra(self, d, rows, Xa):
        return {"wor-passes": self._epochs(rows)}, None, None, None

    def _build(self, Xa, yk, rows, eps, delta, mode, seed):
        self._cur_batch = self._batch(rows)
        return _DPClassifier._build(self, Xa, yk, rows, eps, delta, mode, seed)


class FedPLTClassifier(_DPClassifier):
    """Federated proximal local training (Fed-PLT, "fed-plt"): a coordinator and n_nodes clients
    running a noisy local gradient solver; max_rounds rounds. Needs a smooth loss (logistic or
    squared)."""
    __doc__ += _COMMON_DOC
    _kind = "fed-plt"
    _uses_network = False

    def __init__(self, epsilon=1.0, delta="auto", n_nodes=4, loss="logistic", alpha="auto", C=None,
                 fit_intercept=True, max_rounds="auto", random_state=None, accountant=None, lipschitz="auto",
                 step_size=None, record_history=False, partial_rounds=None, verbose=False,
                 profile="library"):
        self._common(epsilon, delta, n_nodes, None, loss, alpha, C, fit_intercept, random_state, accountant,
                     lipschitz, step_size, record_history, partial_rounds, verbose)
        self.max_rounds = max_rounds
        self.profile = profile

    def _extra(self, d, rows, Xa):
        np = require_numpy("dpdo.sklearn")
        if self.loss == "hinge":
            raise ValueError("FedPLTClassifier needs a smooth loss ('logistic' or 'squared'), not 'hinge'")
        if hasattr(Xa, "multiply"):
            r2 = float(np.max(np.asarray(Xa.multiply(Xa).sum(axis=1)))) if Xa.shape[0] else 0.0
        else:
            r2 = float(np.max(np.einsum("ij,ij->i", Xa, Xa))) if Xa.shape[0] else 0.0
        hi = (0.25 if self.loss == "logistic" else 1.0) * max(r2, 1e-12)
        solver = _core.Solver("noisy-gd" if not math.isinf(self.epsilon) else "gd", d, lambda_hi=hi, lambda_lo=0.0)
        return {}, solver, None, None

    def _options(self, eps, delta, mode, seed, horizon):
        o = _DPClassifier._options(self, eps, delta, mode, seed, horizon)
        o.pop("step_size", None)
        return o


ESTIMATORS = [DPDDAClassifier, DOADPClassifier, DPWORSGDClassifier, FedPLTClassifier]
PrivateSearchCV = _tuning.PrivateSearchCV  # privately accounted hyper-parameter search (dpdo.tuning)
__all__ = ["DPDDAClassifier", "DOADPClassifier", "DPWORSGDClassifier", "FedPLTClassifier", "ESTIMATORS",
           "HAVE_SKLEARN", "PrivateSearchCV", "DEFAULT_ACCOUNTANT"]
