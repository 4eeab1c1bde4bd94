# SPDX-License-Identifier: BSD-3-Clause
"""Hyper-parameter search whose privacy is counted (docs/python.md, "Private hyper-parameter
search"), and the warning for searches that do not count it.

note_fit(estimator, X, y) is called by every dpdo estimator's fit: a fit that runs inside
scikit-learn's model selection (GridSearchCV, RandomizedSearchCV, cross_validate, ...), or that
reuses most rows of earlier fits in this process, warns (dpdo.diagnostics.PrivacyWarning) that
privacy_ is the epsilon of ONE fit, and privacy_ records how many fits touched these rows.

Since 0.3.
"""
import math
import sys
import warnings

from ._lib import require_numpy
from .diagnostics import PrivacyWarning

#: fits remembered for the repeated-fit check (their row fingerprints only, never the data)
_REMEMBERED = 64
_history = []  # [(fingerprints, epsilon, delta)], most recent last
_SKLEARN_SEARCH = ("sklearn.model_selection._validation", "sklearn.model_selection._search")
_PRIVATE_SEARCH = False  # set while PrivateSearchCV runs its own, counted, fits


def _row_fingerprints(X):
    """The sorted distinct per-row fingerprints of X (8 bytes a row): a fixed random projection of
    each row, rounded to 12 significant digits (equal rows give equal fingerprints; distinct rows
    collide with negligible probability)."""
    np = require_numpy("dpdo.tuning")
    R = np.random.RandomState(20221).standard_normal(X.shape[1])
    P = np.asarray(X @ R, dtype=np.float64).ravel()
    scale = 10.0 ** (11 - np.floor(np.log10(np.maximum(np.abs(P), 1e-300))))
    return np.unique(np.round(P * scale) / scale)


def _in_sklearn_search():
    f = sys._getframe(2)
    while f is not None:
        if f.f_globals.get("__name__") in _SKLEARN_SEARCH:
            return True
        f = f.f_back
    return False


def note_fit(est, X, y):
    """Record a fit; warn when it is one of several on the same rows (see the module doc)."""
    if _PRIVATE_SEARCH:
        return
    p = getattr(est, "privacy_", None)
    if p is None:
        return
    np = require_numpy("dpdo.tuning")
    fp = _row_fingerprints(X)
    same = [h for h in _history
            if np.intersect1d(fp, h[0], assume_unique=True).size >= 0.5 * min(fp.size, h[0].size)]
    _history.append((fp, p["epsilon"], p["delta"]))
    del _history[:-_REMEMBERED]
    fits = len(same) + 1
    p["fits_on_these_rows"] = fits
    p["epsilon_all_fits"] = float(sum(h[1] for h in same) + p["epsilon"])
    if _in_sklearn_search():
        warnings.warn("a dpdo estimator fitted inside scikit-learn's model selection (GridSearchCV, "
                      "RandomizedSearchCV, cross_validate): each fit's privacy_ (and best_estimator_'s) is the "
                      "epsilon of ONE fit, but the search used the same rows in every fit, and the choice of the "
                      "best depends on them all; use dpdo.sklearn.PrivateSearchCV, whose privacy_ counts them "
                      "(docs/python.md, \"Private hyper-parameter search\")", PrivacyWarning, stacklevel=3)
    elif fits > 1:
        warnings.warn("%s: this is fit %d on (mostly) the same rows in this process; privacy_['epsilon'] = %.4g is "
                      "the epsilon of this fit alone, all %d together spend up to %.4g by basic composition "
                      "(privacy_['epsilon_all_fits']); use dpdo.sklearn.PrivateSearchCV to tune with counted "
                      "privacy" % (type(est).__name__, fits, p["epsilon"], fits, p["epsilon_all_fits"]),
                      PrivacyWarning, stacklevel=3)


def forget_fits():
    """Clear the record of earlier fits (e.g. between independent experiments on public data)."""
    del _history[:]


# ---- PrivateSearchCV ---------------------------------------------------------------------------

#: RDP orders of the random-stopping bound
ORDERS = tuple([1.0 + k / 10.0 for k in range(1, 100)] + list(range(11, 64)) + [64, 96, 128, 192, 256, 512, 1024])


def _gaussian_epsilon(mu, delta):
    """epsilon of a mu-GDP mechanism (the analytic Gaussian mechanism, Balle & Wang 2018) at delta."""
    import ctypes as C
    from . import _core
    out = C.c_double()
    rc = _core.lib.dpdo_gaussian_epsilon(C.c_double(mu), C.c_double(delta), C.byref(out))
    if rc:
        raise ValueError("dpdo_gaussian_epsilon(mu=%r, delta=%r) failed (%d)" % (mu, delta, rc))
    return out.value


def _bisect_up(f, target, lo=1e-6, hi=1e3):
    """The largest x in [lo, hi] with f(x) <= target, f increasing (60 halvings in log x)."""
    if f(lo) > target:
        raise ValueError("a total epsilon of %g is below what one trial needs at the smallest noise level tried" % target)
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if f(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo


def rdp_to_epsilon(curve, delta, orders=ORDERS):
    """(epsilon, order) from an RDP curve by the improved conversion (Canonne, Kamath, Steinke 2020,
    Prop. 12; the library's default "improved" conversion): eps = rdp(a) + log((a-1)/a) - (log delta +
    log a)/(a-1), minimised over the orders."""
    best = (math.inf, math.nan)
    for a, r in zip(orders, curve):
        if not math.isfinite(r):
            continue
        e = r + math.log((a - 1) / a) - (math.log(delta) + math.log(a)) / (a - 1)
        if e < best[0]:
            best = (max(e, 0.0), a)
    return best


def ledger_rdp_curve(ledger, orders=ORDERS):
    """The RDP curve (worst node) of a ledger's charges at the given orders, by the library's rdp
    accountant: with the classic conversion at one order a, eps(delta) = rdp(a) + log(1/delta)/(a-1)
    exactly, so rdp(a) is read back from it (every mechanism the rdp accountant knows, the secure
    lattice noise included)."""
    from . import _core
    out = []
    d = 1e-5
    for a in orders:
        acc = _core.Accountant(ledger, "rdp", orders=[a], conversion="classic")
        try:
            out.append(max(acc.epsilon(d) - math.log(1 / d) / (a - 1), 0.0))
        finally:
            acc.close()
    return out


def tnb_mean(eta, gamma):
    """E[K] of the truncated negative binomial D_{eta,gamma} (Papernot & Steinke 2022, Sec. 2)."""
    if eta == 0:
        return (1 / gamma - 1) / math.log(1 / gamma)
    return eta * (1 - gamma) / (gamma * (1 - gamma ** eta))


def random_stopping_rdp(curve, eta, gamma, orders=ORDERS):
    """Papernot & Steinke (ICLR 2022), Theorem 2: if one trial Q is (a, curve(a))-RDP for every order,
    running Q K ~ D_{eta,gamma} times and releasing the best is (a, eps'(a))-RDP with
    eps'(a) = curve(a) + (1+eta)(1 - 1/b) curve(b) + (1+eta) log(1/gamma)/b + log(E[K])/(a-1),
    minimised over the second order b."""
    extra = min((1 + eta) * (1 - 1 / b) * cb + (1 + eta) * math.log(1 / gamma) / b
                for b, cb in zip(orders, curve) if math.isfinite(cb))
    lk = math.log(tnb_mean(eta, gamma))
    return [c + extra + lk / (a - 1) for a, c in zip(orders, curve)]


def _sample_tnb(rs, eta, gamma):
    """One draw of K ~ D_{eta,gamma}: eta = 0 is the logarithmic distribution, eta = 1 the geometric."""
    if eta == 0:
        return int(rs.logseries(1 - gamma))
    if eta == 1:
        return int(rs.geometric(gamma))
    while True:  # negative binomial conditioned on K >= 1
        k = int(rs.negative_binomial(eta, gamma))
        if k >= 1:
            return k


def _gamma_for_mean(eta, mean):
    lo, hi = 1e-9, 1 - 1e-12
    for _ in range(200):
        mid = (lo + hi) / 2
        if tnb_mean(eta, mid) > mean:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _ledger_charges(ledger):
    """[(mechanism, sampling, rate, n, m, sensitivity, sigma, counts per node)] from a ledger's text."""
    def num(t):
        return float.fromhex(t) if "0x" in t else float(t)
    out, cur = [], None
    for line in ledger.save().splitlines():
        f = line.split()
        if f and f[0] == "event":
            cur = [int(f[1]), int(f[2]), num(f[3]), int(f[4]), int(f[5]), num(f[6]), num(f[7])]
        elif f and f[0] == "counts" and cur is not None:
            out.append(tuple(cur) + ([int(c) for c in f[1:]],))
            cur = None
    return out


def compose_ledgers(ledgers, nodes, extra=(), delta=1e-5, kind="auto"):
    """(epsilon at delta, how) of the composition of every charge in `ledgers` (per node) plus
    `extra` = [(sensitivity, sigma)] unsampled Gaussian releases charged to every node: by the
    `kind` accountant over one ledger holding all of them when every charge is a continuous
    Gaussian; otherwise (the secure lattice noise, which only the library's own runs can charge)
    by adding the rdp curves of the ledgers (RDP composes additively) and converting."""
    from . import _core
    charges = [c for led in ledgers for c in _ledger_charges(led)]
    if all(c[0] == 1 for c in charges):
        led = _core.Ledger(nodes)
        objs = []
        try:
            for mech, samp, rate, n, m, sens, sigma, counts in charges:
                s = _core.Sampling.poisson(rate) if samp == 1 else _core.Sampling.wor(n, m) if samp == 2 else None
                ev = _core.Event.gaussian(sens, sigma, s)
                objs += [o for o in (s, ev) if o is not None]
                for node, cnt in enumerate(counts):
                    if cnt:
                        led.charge(ev, cnt, [node])
            for sens, sigma in extra:
                ev = _core.Event.gaussian(sens, sigma)
                objs.append(ev)
                led.charge(ev, 1)
            acc = _core.Accountant(led, kind)
            try:
                return acc.epsilon(delta), kind
            finally:
                acc.close()
        finally:
            for o in objs:
                o.close()
            led.close()
    curve = [0.0] * len(ORDERS)
    for led in ledgers:
        curve = [a + b for a, b in zip(curve, ledger_rdp_curve(led))]
    for sens, sigma in extra:
        curve = [c + a * (sens / sigma) ** 2 / 2 for c, a in zip(curve, ORDERS)]
    return rdp_to_epsilon(curve, delta)[0], "rdp (sum of the runs' curves)"


#: The default grid (param_grid="auto"): the estimator's plan for the trial's budget and three
#: neighbours of it, one knob each ("plan.K": f = the plan's K times f): the travel of the model
#: (DP-DDA's L2 scales the primal map down; the others' step or rounds) doubled and halved, and the
#: clip halved (half the noise, more bias). The first candidate is the plan itself.
AUTO_GRIDS = {
    "dp-dda": [{}, {"plan.alpha": 1 / 3.0}, {"plan.alpha": 3.0}, {"plan.lipschitz": 0.5}],
    "do-adp": [{}, {"plan.step_size": 2.0}, {"plan.step_size": 0.5}, {"plan.lipschitz": 0.5}],
    "dp-wor-sgd": [{}, {"plan.step_size": 2.0}, {"plan.step_size": 0.5}, {"plan.lipschitz": 0.5}],
    "fed-plt": [{}, {"plan.rounds": 2.0}, {"plan.rounds": 0.5}, {"plan.lipschitz": 0.5}],
}


class PrivateSearchCV:
    """Hyper-parameter search over a dpdo estimator whose privacy is counted (docs/python.md,
    "Private hyper-parameter search").

    The rows are split once at random (public randomness) into a training part and a validation
    part (validation_fraction). One trial trains a clone of `estimator` with one candidate of
    `param_grid` on the training part and scores it on the validation part with Gaussian noise
    (accuracy, sensitivity 1/n_val: the score is private too). param_grid="auto" (default) is the
    estimator's own plan and three neighbours of it (AUTO_GRIDS; a key "plan.K" with value f means
    the plan's K times f). Each trial is calibrated as a mu-GDP mechanism (the estimator's own
    accountant sets its noise for the (epsilon_0, delta) of the analytic Gaussian mechanism at
    mu_0; the score gets mu_s = score_share * mu_0):

    * method="composition": every candidate once; mu per trial such that the composition of all
      trials is (epsilon, delta); privacy_["epsilon"] is the accountant's composition of the
      charges the trials actually made (the library's "auto" accountant over one ledger of them);
    * method="random-stopping": Papernot & Steinke (ICLR 2022, "Hyperparameter Tuning with
      Renyi Differential Privacy", Theorem 2): K ~ truncated negative binomial D_{eta,gamma} trials
      with E[K] = mean_trials (default: the number of candidates), each with a candidate drawn
      from a fixed distribution (the first candidate with probability default_weight, the others
      uniformly; the theorem holds for any trial whose randomness is independent of the data);
      only the best (model, noisy score) is released, so the total does not grow with K but by
      log E[K] and a one-trial term. privacy_["epsilon"] is the smaller of that bound (from the RDP
      curves of the charges that ran, worst trial) and the composition of all trials;
    * method="auto" (default): the one of the two whose plan gives each trial the larger budget.

    refit_share (default 0.75): the share of the budget (of mu^2 in the Gaussian plan) given to one
    more fit of the chosen candidate on ALL rows, which is the model that ships; its charges are
    composed with the search's (privacy_["epsilon"] counts them; the choice is adaptive, see
    _total). refit_share=0: no refit, the best trial's model (trained on the training part) ships.
    validation_fraction "auto": 0.5 with a refit (the trials only rank the candidates), 0.2
    without. score_share (1): mu of the score over mu of the trial's training.
    default_margin ("auto": 2 sqrt(2) score sigmas, two standard deviations of the difference of
    two noisy scores, for param_grid="auto"; 0 otherwise): the first candidate is chosen unless
    another one's noisy score beats it by more (post-processing of the noisy scores).
    max_score_sigma (0.01): where the planned score noise exceeds it (small validation sets, small
    budgets), there is no search: the first candidate is fitted once on all rows with the whole
    budget (privacy_["method"] == "none"; a PrivacyWarning for a user grid).
    privacy_ (epsilon, delta, method, trials, ...) is the whole search's; best_estimator_.privacy_
    is replaced by it too, so the model reports the total. Since 0.3."""

    def __init__(self, estimator, param_grid="auto", epsilon=1.0, delta="auto", method="auto",
                 mean_trials=None, eta=0.0, validation_fraction="auto", score_share=1.0, random_state=None,
                 refit_share=0.75, default_weight=None, max_score_sigma=0.01, default_margin="auto"):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.mean_trials = mean_trials
        self.eta = eta
        self.validation_fraction = validation_fraction
        self.score_share = score_share
        self.random_state = random_state
        self.refit_share = refit_share
        self.default_weight = default_weight
        self.max_score_sigma = max_score_sigma
        self.default_margin = default_margin

    _PARAMS = ("estimator", "param_grid", "epsilon", "delta", "method", "mean_trials", "eta", "validation_fraction",
               "score_share", "random_state", "refit_share", "default_weight", "max_score_sigma", "default_margin")

    def get_params(self, deep=False):
        """The constructor parameters."""
        return {k: getattr(self, k) for k in self._PARAMS}

    def set_params(self, **params):
        """Set constructor parameters; returns self."""
        for k, v in params.items():
            if k not in self.get_params():
                raise ValueError("Invalid parameter %r for PrivateSearchCV" % (k,))
            setattr(self, k, v)
        return self

    def _candidates(self):
        import itertools
        if isinstance(self.param_grid, str):
            if self.param_grid != "auto" or getattr(self.estimator, "_kind", None) not in AUTO_GRIDS:
                raise ValueError("param_grid must be a dict, a list of dicts or 'auto' (for the dpdo estimators), "
                                 "got %r" % (self.param_grid,))
            return [dict(c) for c in AUTO_GRIDS[self.estimator._kind]]
        grids = self.param_grid if isinstance(self.param_grid, (list, tuple)) else [self.param_grid]
        out = []
        for g in grids:
            keys = sorted(g)
            for vals in itertools.product(*[list(g[k]) for k in keys]):
                out.append(dict(zip(keys, vals)))
        if not out:
            raise ValueError("param_grid has no candidate")
        return out

    def _weights(self, k):
        """The fixed distribution of a random-stopping trial's candidate."""
        w0 = self.default_weight
        if w0 is None:
            w0 = 0.5 if self.param_grid == "auto" else 1.0 / k
        if not (0 <= w0 <= 1):
            raise ValueError("default_weight must be in [0, 1], got %r" % (w0,))
        if k == 1:
            return [1.0]
        return [w0] + [(1.0 - w0) / (k - 1)] * (k - 1)

    def _margin(self, sigma_score):
        """How much another candidate's noisy score must beat the first's to be chosen instead."""
        m = self.default_margin
        if m == "auto":
            return 2 * math.sqrt(2) * sigma_score if self.param_grid == "auto" else 0.0
        if not (isinstance(m, (int, float)) and m >= 0):
            raise ValueError("default_margin must be a number >= 0 or 'auto', got %r" % (m,))
        return float(m)

    def _make(self, cand, eps, delta, seed):
        """A clone of the estimator for one candidate at (eps, delta)."""
        params = {k: v for k, v in cand.items() if not k.startswith("plan.")}
        params.update(epsilon=eps, delta=delta)
        if seed is not None:
            params["random_state"] = seed
        est = _clone(self.estimator).set_params(**params)
        est._plan_scale = {k[5:]: float(v) for k, v in cand.items() if k.startswith("plan.")}
        return est

    def _trial_mu(self, method, n_candidates, delta, mu_fin):
        """mu of one trial (training and score together) that meets the total (epsilon, delta)
        beside a final fit of mu_fin."""
        if method == "composition":
            return _bisect_up(lambda mu: _gaussian_epsilon(math.sqrt(n_candidates * mu * mu + mu_fin * mu_fin), delta),
                              self.epsilon)
        gamma = self._gamma(n_candidates)
        return _bisect_up(lambda mu: rdp_to_epsilon([u + a * mu_fin * mu_fin / 2 for u, a in zip(
            random_stopping_rdp([a * mu * mu / 2 for a in ORDERS], self.eta, gamma), ORDERS)], delta)[0], self.epsilon)

    def _total(self, method, trial_ledgers, n_candidates, delta, score, runs, finals=(), plan=False):
        """The search's epsilon for these trials' ledgers (a list per trial) with `runs` trials and
        the score noise (sensitivity, sigma) per trial, and the final fit: `finals` lists the
        ledgers (a list each) of every final fit the selection could have chosen, the one that ran
        among them (empty: no final fit). Returns (total, composition, how, random stopping).
        The final fit is chosen from the trials' outputs, so its mechanism is adaptive: where every
        alternative is the same Gaussian mechanism (unsampled Gaussian charges with the same
        sum of (sensitivity/sigma)^2 on every node: mu_fin-GDP whatever is chosen) the accountant
        composes the trials with it; otherwise the final's RDP curve is the largest of the
        alternatives' order by order (RDP composes adaptively).
        plan=True (the pilots): the random-stopping bound alone, since the composition of the
        trials that will run depends on K."""
        nodes = trial_ledgers[0][0].nodes
        sel = [led for tl in trial_ledgers for led in tl]
        same = not finals or _same_gaussian(finals)
        fin_curve = [0.0] * len(ORDERS)
        for fin in (finals if not same or method != "composition" else ()):  # the worst final fit, order by order
            c = [0.0] * len(ORDERS)
            for led in fin:
                c = [u + v for u, v in zip(c, ledger_rdp_curve(led))]
            fin_curve = [max(u, v) for u, v in zip(fin_curve, c)]
        if same:
            comp, how = compose_ledgers(sel + list(finals[-1] if finals else []), nodes, [score] * runs, delta)
        else:
            curve = [a * (score[0] / score[1]) ** 2 / 2 * runs for a in ORDERS]
            for led in sel:
                curve = [u + v for u, v in zip(curve, ledger_rdp_curve(led))]
            comp = rdp_to_epsilon([u + v for u, v in zip(curve, fin_curve)], delta)[0]
            how = "rdp (sum of the trials' curves and the largest final fit's)"
        if method == "composition":
            return comp, comp, how, math.nan
        curve = [0.0] * len(ORDERS)
        for tl in trial_ledgers:  # one trial: its runs (one per one-vs-rest model) and its score
            c = [a * (score[0] / score[1]) ** 2 / 2 for a in ORDERS]
            for led in tl:
                c = [u + v for u, v in zip(c, ledger_rdp_curve(led))]
            curve = [max(u, v) for u, v in zip(curve, c)]
        rs_eps = rdp_to_epsilon([u + v for u, v in zip(random_stopping_rdp(curve, self.eta, self._gamma(n_candidates)),
                                                       fin_curve)], delta)[0]
        return (rs_eps if plan else min(rs_eps, comp)), comp, how, rs_eps

    def _pilot_ledgers(self, cands, eps, delta, n_rows, y_part):
        """Each candidate fitted at eps on public stand-in data (n_rows x one zero feature): its runs' ledgers."""
        np = require_numpy("PrivateSearchCV")
        Z = np.zeros((n_rows, 1))
        out = []
        for c in cands:
            est = self._make(c, eps, delta, 12345)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Z, y_part)
            out.append([_ledger_from(r.alg.accountant.ledger.nodes, r.alg.accountant.ledger.save())
                        for r in est._runs])
        return out

    def _pilot_scale(self, method, cands, mu0, mu_fin, delta, n_val, y_tr, y_all):
        """The largest t in [0.02, 4] (1: the Gaussian plan) whose pilots meet the target."""
        def total(t):
            ledgers = self._pilot_ledgers(cands, _gaussian_epsilon(t * mu0, delta), delta, len(y_tr), y_tr)
            finals = self._pilot_ledgers(cands, _gaussian_epsilon(t * mu_fin, delta), delta, len(y_all), y_all) \
                if mu_fin > 0 else []
            score = (1.0 / n_val, (1.0 / n_val) / (self.score_share * t * mu0))
            # composition: every candidate once; random stopping: the worst candidate's curve
            return self._total(method, ledgers, len(cands), delta, score, len(cands), finals, plan=True)[0]

        if total(1.0) <= self.epsilon * (1 + 1e-9):
            lo, hi = 1.0, 4.0  # the charges compose better than Gaussian ones: spend what is left
            if total(hi) <= self.epsilon:
                return hi
        else:
            lo, hi = 0.02, 1.0
            if total(lo) > self.epsilon:
                raise ValueError("PrivateSearchCV: even at 1/50 of the planned per-trial budget the pilots exceed "
                                 "epsilon = %g" % self.epsilon)
        for _ in range(7):  # to 1.5 % in t
            mid = math.sqrt(lo * hi)
            if total(mid) <= self.epsilon:
                lo = mid
            else:
                hi = mid
        return lo

    def _gamma(self, n_candidates):
        return _gamma_for_mean(self.eta, float(self.mean_trials or n_candidates))

    def fit(self, X, y):
        """Run the search on (X, y); returns self."""
        global _PRIVATE_SEARCH
        np = require_numpy("PrivateSearchCV")
        from .diagnostics import resolve_delta
        if self.method not in ("auto", "composition", "random-stopping"):
            raise ValueError("method must be 'auto', 'composition' or 'random-stopping', got %r" % (self.method,))
        vf = (0.5 if self.refit_share > 0 else 0.2) if self.validation_fraction == "auto" else self.validation_fraction
        if not (isinstance(vf, float) and 0 < vf < 1):
            raise ValueError("validation_fraction must be in (0, 1) or 'auto', got %r" % (self.validation_fraction,))
        if not self.score_share > 0:
            raise ValueError("score_share must be > 0, got %r" % (self.score_share,))
        if not (self.epsilon > 0 and math.isfinite(self.epsilon)):
            raise ValueError("epsilon must be a finite number > 0, got %r" % (self.epsilon,))
        if not (0 <= self.refit_share < 1):
            raise ValueError("refit_share must be in [0, 1), got %r" % (self.refit_share,))
        y = np.asarray(y)
        n = X.shape[0]
        delta, _ = resolve_delta(self.delta, n)
        rs = np.random.RandomState(self.random_state)
        perm = rs.permutation(n)
        n_val = max(1, int(round(vf * n)))
        val, tr = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        cands = self._candidates()
        weights = self._weights(len(cands))
        # The Gaussian plan: the final fit gets mu_fin^2 = refit_share * mu^2 of the total mu, the
        # trials the rest; checked against pilots: each candidate fitted at the planned budgets on
        # public stand-in data of the same shape (one zero feature: a run's charges depend on the
        # rows per node, rounds, batch and clip, not on the values), and both scaled down until the
        # total of those charges meets the target (subsampled releases are not Gaussian). "auto":
        # the method whose pilots allow the larger per-trial mu.
        mu_all = _bisect_up(lambda mu: _gaussian_epsilon(mu, delta), self.epsilon)
        mu_fin = math.sqrt(self.refit_share) * mu_all if self.refit_share > 0 else 0.0
        # No search where the scores would be noise: if the planned score noise (composition plan,
        # no pilots: it depends on the sizes and the budget only, never on the values) exceeds
        # max_score_sigma, the first candidate (param_grid="auto": the plan) is fitted once on all
        # rows with the whole budget.
        mu_plan = math.sqrt((mu_all ** 2 - mu_fin ** 2) / len(cands) / (1 + self.score_share ** 2))
        planned_sigma = (1.0 / n_val) / (self.score_share * mu_plan)
        if self.max_score_sigma is not None and planned_sigma > self.max_score_sigma:
            return self._fit_first(X, y, cands, delta, rs, planned_sigma)
        plans = []
        _PRIVATE_SEARCH = True
        try:
            for method in (("composition", "random-stopping") if self.method == "auto" else (self.method,)):
                try:
                    mu0 = self._trial_mu(method, len(cands), delta, mu_fin) / math.sqrt(1 + self.score_share ** 2)
                except ValueError:
                    if self.method != "auto":
                        raise ValueError("PrivateSearchCV: method=%r does not fit in epsilon = %g beside a final fit "
                                         "with refit_share = %g (random stopping's fixed overhead); lower refit_share "
                                         "or use method='composition'" % (method, self.epsilon, self.refit_share))
                    continue  # random stopping's fixed overhead does not fit beside the final fit
                t = self._pilot_scale(method, cands, mu0, mu_fin, delta, n_val, y[tr], y)
                plans.append((mu0 * t, t, method))
        finally:
            _PRIVATE_SEARCH = False
        mu0, t, method = max(plans)
        eps0 = _gaussian_epsilon(mu0, delta)
        eps_fin = _gaussian_epsilon(t * mu_fin, delta) if mu_fin > 0 else 0.0
        sigma_score = (1.0 / n_val) / (self.score_share * mu0)
        if method == "composition":
            plan = list(range(len(cands)))
        else:
            gamma = self._gamma(len(cands))
            plan = [int(rs.choice(len(cands), p=weights)) for _ in range(_sample_tnb(rs, self.eta, gamma))]
        trials, best, first, texts, nodes = [], None, None, [], 1
        _PRIVATE_SEARCH = True
        try:
            for c in plan:
                seed = int(rs.randint(2 ** 31 - 1)) if self.random_state is not None else None
                est = self._make(cands[c], eps0, delta, seed)
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    est.fit(X[tr], y[tr])
                score = float(np.mean(est.predict(X[val]) == y[val]))
                noisy = score + float(rs.normal(0.0, sigma_score)) if self.random_state is not None else \
                    score + _secure_normal(sigma_score)
                trials.append({"params": cands[c], "noisy_score": noisy, "epsilon": est.privacy_["epsilon"],
                               "warnings": [str(x.message) for x in w]})
                texts.append([r.alg.accountant.ledger.save() for r in est._runs])
                nodes = est._runs[0].alg.accountant.ledger.nodes
                if best is None or noisy > best[0]:
                    best = (noisy, c, est)
                if c == 0 and (first is None or noisy > first[0]):
                    first = (noisy, c, est)
            margin = self._margin(sigma_score)
            if first is not None and best[1] != 0 and best[0] - first[0] <= margin:
                best = first  # the plan is kept unless another candidate beats it by more than the margin
            final_texts = []
            if mu_fin > 0:  # the chosen candidate on all rows: the model that ships
                seed = int(rs.randint(2 ** 31 - 1)) if self.random_state is not None else None
                est = self._make(cands[best[1]], eps_fin, delta, seed)
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    est.fit(X, y)
                for x in w:
                    warnings.warn(x.message, x.category, stacklevel=2)
                final_texts = [r.alg.accountant.ledger.save() for r in est._runs]
                best = (best[0], best[1], est)
        finally:
            _PRIVATE_SEARCH = False
        trial_ledgers = [[_ledger_from(nodes, t) for t in tt] for tt in texts]
        finals = []
        if final_texts:  # every final fit the selection could have chosen (pilots), then the one that ran
            finals = self._pilot_ledgers(cands, eps_fin, delta, n, y) + [[_ledger_from(nodes, t) for t in final_texts]]
        total, eps_comp, how, eps_rs = self._total(method, trial_ledgers, len(cands), delta,
                                                   (1.0 / n_val, sigma_score), len(trials), finals)
        p = {"method": method, "target_epsilon": self.epsilon, "delta": delta, "trials": len(trials),
             "epsilon": total, "epsilon_composition": eps_comp, "composition_by": how, "trial_epsilon": eps0,
             "trial_mu": mu0, "pilot_scale": t, "score_sigma": sigma_score, "n_validation": n_val,
             "refit": bool(final_texts), "refit_epsilon": eps_fin, "planned_score_sigma": planned_sigma,
             "default_margin": margin}
        if method == "random-stopping":
            gamma = self._gamma(len(cands))
            p.update(epsilon_random_stopping=eps_rs, eta=self.eta, gamma=gamma,
                     expected_trials=tnb_mean(self.eta, gamma), candidate_weights=weights)
        if p["epsilon"] > self.epsilon * (1 + 1e-6):
            from .diagnostics import PrivacyWarning
            warnings.warn("PrivateSearchCV: the search spent epsilon = %.4g, above the target %.4g (the trials' noise "
                          "was planned as Gaussian; their subsampled releases compose less well); privacy_ reports "
                          "what ran" % (p["epsilon"], self.epsilon), PrivacyWarning, stacklevel=2)
        # the saved ledger text of every run of every trial, in order, then the final fit's (when refit)
        return self._install(trials, cands[best[1]], best[0], best[2], p, delta,
                             texts + ([final_texts] if final_texts else []))

    def _install(self, trials, params, score, est, p, delta, ledgers):
        """The fitted attributes; the shipped model reports the whole search's privacy p."""
        self.cv_results_ = trials
        self.best_params_ = params
        self.best_score_ = score
        self.best_estimator_ = est
        self.privacy_ = p
        est.privacy_ = dict(est.privacy_, epsilon=p["epsilon"], delta=delta, one_fit_epsilon=est.privacy_["epsilon"],
                            search=p)
        self.classes_ = est.classes_
        self.ledgers_ = ledgers
        return self

    def _fit_first(self, X, y, cands, delta, rs, planned_sigma):
        """No search: the first candidate on all rows with the whole budget (see fit); an int
        random_state is passed on as it is (the same fit as the estimator's own)."""
        global _PRIVATE_SEARCH
        import numbers
        seed = None
        if isinstance(self.random_state, numbers.Integral):
            seed = int(self.random_state)
        elif self.random_state is not None:
            seed = int(rs.randint(2 ** 31 - 1))
        est = self._make(cands[0], self.epsilon, delta, seed)
        _PRIVATE_SEARCH = True
        try:
            est.fit(X, y)
        finally:
            _PRIVATE_SEARCH = False
        texts = [r.alg.accountant.ledger.save() for r in est._runs]
        nodes = est._runs[0].alg.accountant.ledger.nodes
        total, how = compose_ledgers([_ledger_from(nodes, t) for t in texts], nodes, (), delta)
        p = {"method": "none", "target_epsilon": self.epsilon, "delta": delta, "trials": 0, "epsilon": total,
             "epsilon_composition": total, "composition_by": how, "refit": True, "refit_epsilon": self.epsilon,
             "planned_score_sigma": planned_sigma,
             "reason": "no search: the validation scores' noise would be %.3g (> max_score_sigma = %g) with %d "
                       "candidates at this budget and these rows; the first candidate got the whole budget"
                       % (planned_sigma, self.max_score_sigma, len(cands))}
        if self.param_grid != "auto":
            from .diagnostics import PrivacyWarning
            warnings.warn("PrivateSearchCV: " + p["reason"], PrivacyWarning, stacklevel=3)
        return self._install([], cands[0], math.nan, est, p, delta, [texts])

    def predict(self, X):
        """best_estimator_.predict"""
        return self.best_estimator_.predict(X)

    def decision_function(self, X):
        """best_estimator_.decision_function"""
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """best_estimator_.score"""
        return self.best_estimator_.score(X, y)


def _same_gaussian(alternatives):
    """True when every alternative (a list of ledgers) charged only unsampled Gaussian releases (or
    "sampled" ones that take every row) with the same sum of count * (sensitivity/sigma)^2 on
    every node (the same mu-GDP mechanism)."""
    ref = None
    for alt in alternatives:
        mu2 = None
        for led in alt:
            for mech, samp, rate, n, m, sens, sigma, counts in _ledger_charges(led):
                # a Gaussian release, unsampled or "sampled" at rate 1 (all n of n rows)
                if mech != 1 or not (samp == 0 or (samp == 1 and rate >= 1) or (samp == 2 and m >= n)):
                    return False
                m = [c * (sens / sigma) ** 2 for c in counts]
                mu2 = m if mu2 is None else [u + v for u, v in zip(mu2, m)]
        if mu2 is None:
            return False
        if ref is None:
            ref = mu2
        elif len(ref) != len(mu2) or any(abs(u - v) > 1e-9 * max(abs(u), abs(v), 1e-300) for u, v in zip(ref, mu2)):
            return False
    return True


def _ledger_from(nodes, text):
    from . import _core
    led = _core.Ledger(nodes)
    led.load(text)
    return led


def _clone(est):
    try:
        from sklearn.base import clone
        return clone(est)
    except ImportError:  # pragma: no cover
        return type(est)(**est.get_params())


def _secure_normal(sigma):
    """A normal draw from the operating system's randomness (secure mode: the search's noise is
    not replayable)."""
    import secrets
    u1 = (secrets.randbits(53) + 1) / float(1 << 53)
    u2 = secrets.randbits(53) / float(1 << 53)
    return sigma * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
