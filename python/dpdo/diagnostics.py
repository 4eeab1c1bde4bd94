# SPDX-License-Identifier: BSD-3-Clause
"""What a user should know about a private fit besides its epsilon (docs/python.md,
"Diagnostics"; docs/privacy.md, "Choosing delta").

* resolve_delta(delta, n): delta "auto" = min(1e-5, 1/(10 n)) for n training rows; a delta >= 1/n
  warns (PrivacyWarning): releasing every row in the clear with probability delta meets such a
  guarantee.
* diagnose(estimator, X, y): the figures the fitted estimators keep in diagnostics_ (clipping at
  x = 0 and at the model, noise-to-signal of one release, the model against the untrained one on
  the training rows), and the UtilityWarning when clipping or noise dominates, naming the remedy.

Since 0.3.
"""
import math
import warnings

from ._lib import require_numpy

#: delta="auto" never exceeds this, and is at most 1/(10 n) for n training rows.
AUTO_DELTA_CAP = 1e-5
#: a fit whose per-sample gradients are clipped more often than this (at x = 0 or at the fitted
#: model) is flagged.
CLIP_WARN_FRACTION = 0.5
# "Clipping dominates" when more than CLIP_WARN_FRACTION of the per-sample gradients exceed
# CLIP_WARN_FACTOR times the clip norm (they lose most of their length): the sign of unscaled
# features. A clip near the typical gradient norm, or below it as the library plan chooses it
# when the noise is large, is not flagged (the same rule as the C note, lib/engine/eng_life.c).
CLIP_WARN_FACTOR = 4.0


class PrivacyWarning(UserWarning):
    """The privacy guarantee is weaker than it looks (delta >= 1/n, an epsilon that is per fit)."""


class UtilityWarning(UserWarning):
    """The private model is dominated by clipping or noise (no better than not training)."""


def resolve_delta(delta, n_samples):
    """The delta a fit on n_samples rows uses: "auto" -> min(AUTO_DELTA_CAP, 1/(10 n)); a number is
    checked: delta >= 1/n warns with PrivacyWarning (the fit still runs: papers that use such a
    delta can be reproduced). Returns (delta, note or "")."""
    n = max(int(n_samples), 1)
    if isinstance(delta, str):
        if delta != "auto":
            raise ValueError("delta must be 'auto' or a number in (0, 1), got %r" % (delta,))
        return min(AUTO_DELTA_CAP, 0.1 / n), ""
    if delta * n >= 1.0:
        msg = ("delta = %g >= 1/n = %.3g for n = %d training rows: releasing every row in the clear with "
               "probability delta meets such a guarantee, so it protects no row; use delta < 1/(10 n) = %.3g "
               "(delta='auto' does)" % (delta, 1.0 / n, n, 0.1 / n))
        warnings.warn(msg, PrivacyWarning, stacklevel=4)
        return float(delta), msg
    return float(delta), ""


def _phi_prime(loss, m, y):
    """|d phi / d margin| per row for the built-in losses (margin m, labels y = +-1)."""
    np = require_numpy("dpdo.diagnostics")
    if loss == "logistic":
        return 1.0 / (1.0 + np.exp(np.clip(y * m, -500, 500)))
    if loss == "hinge":
        return (y * m < 1).astype(float)
    return np.abs(m - y)  # squared: (m - y)^2 / 2


def _row_norms(Xa):
    np = require_numpy("dpdo.diagnostics")
    if hasattr(Xa, "multiply"):
        return np.sqrt(np.asarray(Xa.multiply(Xa).sum(axis=1)).ravel())
    return np.sqrt(np.einsum("ij,ij->i", Xa, Xa))


def _ledger_events(ledger):
    """(sensitivity, noise std) of each Gaussian event in a ledger's saved text."""
    out = []
    for line in ledger.save().splitlines():
        f = line.split()
        if f and f[0] == "event" and len(f) >= 8 and f[1] == "1":  # mechanism 1 = Gaussian
            out.append((float.fromhex(f[6]) if f[6].startswith(("0x", "-0x")) else float(f[6]),
                        float.fromhex(f[7]) if f[7].startswith(("0x", "-0x")) else float(f[7])))
    return out


def gradient_noise_std(est, run, rows, clip):
    """Noise std per coordinate of one release, in units of the mean clipped gradient that the
    release carries (docs/python.md, "Diagnostics"): DP-DDA and DO-ADP release that mean over a
    batch (std as charged); Fed-PLT releases a step gamma * mean over a node's rows (std / gamma,
    gamma = sensitivity * q / (2 C)); DP-WOR-SGD a model after a pass, whose signal is the pass's
    q / b steps (noise multiplier * 2 C / q). nan when the run is not private."""
    ev = _ledger_events(run.alg.accountant.ledger)
    if not ev:
        return math.nan
    qmin = min(len(r) for r in rows)
    kind = est._kind
    if kind == "fed-plt":
        sens = max(s for s, _ in ev)
        gamma = sens * qmin / (2.0 * clip)
        return max(sd for _, sd in ev) / gamma
    if kind == "dp-wor-sgd":
        return max(sd / s for s, sd in ev) * 2.0 * clip / qmin
    return max(sd for _, sd in ev)


def diagnose(est, X, y, Xa, rows):
    """The diagnostics_ dict of a fitted estimator (X its training rows, Xa with the intercept
    column, rows the node split), and the UtilityWarning when clipping or noise dominates."""
    np = require_numpy("dpdo.diagnostics")
    n = X.shape[0]
    clip = est._clip()
    norms = _row_norms(Xa)
    # the weight of Xa's intercept column (intercept_ is that weight times the column's value)
    W = np.column_stack([est.coef_, est.intercept_[:, None] / est._icpt()]) if est.fit_intercept else est.coef_
    targets = est._targets(np.asarray(y))
    start, final, nsr, heavy0, heavyk = [], [], [], [], []
    d = Xa.shape[1]
    for k, yk in enumerate(targets):
        m0 = np.zeros(n)
        mk = np.asarray(Xa @ W[k]).ravel()
        g0 = _phi_prime(est.loss, m0, yk) * norms
        gk = _phi_prime(est.loss, mk, yk) * norms
        start.append(float(np.mean(g0 > clip * (1 + 1e-12))))
        final.append(float(np.mean(gk > clip * (1 + 1e-12))))
        heavy0.append(float(np.mean(g0 > CLIP_WARN_FACTOR * clip * (1 + 1e-12))))
        heavyk.append(float(np.mean(gk > CLIP_WARN_FACTOR * clip * (1 + 1e-12))))
        # the mean clipped per-sample gradient at x = 0: -mean(phi'(0) y a) scaled by the clip
        scale = np.minimum(1.0, clip / np.maximum(g0, 1e-300)) * _phi_prime(est.loss, m0, yk)
        gbar = np.asarray(Xa.T @ (scale * yk)).ravel() / n
        gnorm = float(np.linalg.norm(gbar))
        if est._runs and not math.isinf(est.epsilon):
            sd = gradient_noise_std(est, est._runs[k], rows, clip)
            nsr.append(sd * math.sqrt(d) / gnorm if gnorm > 0 else math.inf)
    counts = np.unique(np.asarray(y), return_counts=True)[1]
    base = float(counts.max() / n)
    train = float(np.mean(est.predict(X) == np.asarray(y)))
    margin = 2.0 * math.sqrt(base * (1 - base) / n)  # two standard errors of the majority share
    diag = {
        "clipped_fraction_start": max(start), "clipped_fraction_final": max(final),
        "heavily_clipped_fraction_start": max(heavy0), "heavily_clipped_fraction_final": max(heavyk),
        "noise_to_signal": max(nsr) if nsr else 0.0,
        "train_score": train, "baseline_score": base, "better_than_baseline": bool(train > base + margin),
        "warnings": [],
    }
    remedies = []
    if max(heavy0) > CLIP_WARN_FRACTION or max(heavyk) > CLIP_WARN_FRACTION:
        remedies.append("clipping dominates: %.0f%% of the per-sample gradients at x = 0 and %.0f%% at the fitted "
                        "model exceed %g times the clip norm %g; scale the features (e.g. StandardScaler + "
                        "Normalizer in front) or raise lipschitz"
                        % (100 * max(heavy0), 100 * max(heavyk), CLIP_WARN_FACTOR, clip))
    if not diag["better_than_baseline"]:
        remedies.append("the model is no better than not training: training accuracy %.4f vs %.4f for always "
                        "predicting the majority class; noise-to-signal per release %.3g; scale the features, "
                        "raise epsilon, or give it more rounds/data" % (train, base, diag["noise_to_signal"]))
    for r in remedies:
        msg = "%s: %s (diagnostics_, docs/python.md \"Diagnostics\")" % (type(est).__name__, r)
        diag["warnings"].append(msg)
        warnings.warn(msg, UtilityWarning, stacklevel=3)
    return diag
