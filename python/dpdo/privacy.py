# SPDX-License-Identifier: BSD-3-Clause
"""Privacy calculators in the shape users know from Opacus and TF Privacy.

    from dpdo import privacy
    privacy.noise_multiplier(target_epsilon=3.0, target_delta=1e-5, sample_rate=256 / 60000, epochs=60)
    privacy.epsilon(noise_multiplier=1.1, sample_rate=256 / 60000, epochs=60, delta=1e-5)
    privacy.compute_dp_sgd_privacy(n=60000, batch_size=256, noise_multiplier=1.1, epochs=60, delta=1e-5)

Each call builds its own private one-node ledger and accountant (libdpdo's C accountant) and
frees them: no user ledger is read or charged. The mechanism is the subsampled Gaussian of
DP-SGD: `steps` releases, each with Poisson sampling at `sample_rate` (sampling="poisson", the
Opacus/TF Privacy analysis) or without replacement (sampling="wor", needs n), noise standard
deviation noise_multiplier x sensitivity.

accountant: a libdpdo accountant name ("rdp", "exact", "zcdp", ...; "pld"/"auto" where the
library has them). Default: "auto" when the loaded library knows it, else "rdp".
"""
import math
from typing import Optional, Sequence, Tuple

from . import _lib
from ._core import Accountant, Event, Ledger, Sampling, accountant_types
from ._lib import InvalidArgument, NumericError, Unsupported, lib

#: The RDP orders of TF Privacy's compute_dp_sgd_privacy and its MNIST tutorial.
TF_PRIVACY_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def default_accountant() -> str:
    """"auto" if the loaded libdpdo has that accountant, else "rdp"."""
    return "auto" if lib.dpdo_accountant_type_find(b"auto") else "rdp"


def _steps(steps, epochs, sample_rate):
    if (steps is None) == (epochs is None):
        raise InvalidArgument(_lib.E_INVAL, "give exactly one of steps and epochs")
    if steps is not None:
        if steps < 0 or steps != int(steps):
            raise InvalidArgument(_lib.E_INVAL, "steps must be a non-negative integer, not %r" % (steps,))
        return int(steps)
    if not (epochs >= 0) or not math.isfinite(epochs):
        raise InvalidArgument(_lib.E_INVAL, "epochs must be a finite number >= 0, not %r" % (epochs,))
    return int(math.ceil(epochs / sample_rate))  # Opacus: steps = epochs / sample_rate


def _check_rate(sample_rate):
    if not (0.0 < sample_rate <= 1.0):
        raise InvalidArgument(_lib.E_INVAL, "sample_rate must be in (0, 1], not %r" % (sample_rate,))


def _sampling(sample_rate, sampling, n):
    if sampling == "poisson":
        return Sampling.poisson(sample_rate) if sample_rate < 1.0 else Sampling()
    if sampling == "wor":
        if n is None:
            raise InvalidArgument(_lib.E_INVAL, "sampling='wor' needs n (the dataset size)")
        return Sampling.wor(int(n), int(round(sample_rate * n)))
    raise InvalidArgument(_lib.E_INVAL, "sampling must be 'poisson' or 'wor', not %r" % (sampling,))


def _accountant(accountant, orders, conversion):
    kind = accountant or default_accountant()
    if not lib.dpdo_accountant_type_find(kind.encode()):
        raise InvalidArgument(_lib.E_INVAL, "unknown accountant %r (this libdpdo has: %s)"
                              % (kind, ", ".join(accountant_types())))
    return Accountant(Ledger(1), kind, orders=orders, conversion=conversion)


def epsilon(noise_multiplier: float, sample_rate: float, delta: float, steps: Optional[int] = None,
            epochs: Optional[float] = None, accountant: Optional[str] = None, sampling: str = "poisson",
            n: Optional[int] = None, orders: Optional[Sequence[float]] = None,
            conversion: str = "improved") -> float:
    """Epsilon at `delta` of `steps` (or epochs / sample_rate) subsampled Gaussian releases with
    this noise multiplier (sigma / sensitivity): the figure Opacus' accountant.get_epsilon gives."""
    _check_rate(sample_rate)
    T = _steps(steps, epochs, sample_rate)
    if noise_multiplier == 0:
        return math.inf
    acc = _accountant(accountant, orders, conversion)
    try:
        ev = Event.gaussian(1.0, noise_multiplier, _sampling(sample_rate, sampling, n))
        if T > 0:
            acc.ledger.charge(ev, T)
        return acc.epsilon(delta)
    finally:
        acc.close()


def noise_multiplier(target_epsilon: float, target_delta: float, sample_rate: float, steps: Optional[int] = None,
                     epochs: Optional[float] = None, accountant: Optional[str] = None, sampling: str = "poisson",
                     n: Optional[int] = None, orders: Optional[Sequence[float]] = None,
                     conversion: str = "improved") -> float:
    """The smallest noise multiplier (sigma / sensitivity) for which `steps` (or
    epochs / sample_rate) subsampled Gaussian releases stay within (target_epsilon, target_delta):
    Opacus' get_noise_multiplier, computed by the C accountant's calibration (to 1e-10 relative,
    where Opacus stops within epsilon_tolerance). Raises NumericError if the target cannot be
    reached (the message gives the smallest epsilon reachable)."""
    _check_rate(sample_rate)
    T = _steps(steps, epochs, sample_rate)
    if T < 1:
        raise InvalidArgument(_lib.E_INVAL, "at least one step is needed to calibrate noise")
    acc = _accountant(accountant, orders, conversion)
    try:
        return acc.calibrate_sigma(target_epsilon, target_delta, T, 1.0, _sampling(sample_rate, sampling, n))
    except Unsupported:
        pass  # this accountant answers epsilon queries but does not calibrate: bisect on them below
    finally:
        acc.close()
    return _bisect_sigma(target_epsilon, target_delta, sample_rate, T, accountant, sampling, n, orders, conversion)


def _bisect_sigma(eps, delta, q, T, accountant, sampling, n, orders, conversion):
    """Smallest sigma with epsilon(sigma) <= eps, to 1e-10 relative, by bisection in log sigma on
    the accountant's epsilon (monotone decreasing in sigma)."""
    def f(s):
        return epsilon(s, q, delta, steps=T, accountant=accountant, sampling=sampling, n=n, orders=orders,
                       conversion=conversion)
    lo, hi = 1e-3, 1.0
    while f(hi) > eps:
        lo, hi = hi, hi * 2.0
        if hi > 1e8:
            raise NumericError(_lib.E_NUMERIC, "noise_multiplier: epsilon %g at delta %g is not reachable with "
                               "sigma <= 1e8 over %d steps" % (eps, delta, T))
    if f(lo) <= eps:
        return lo
    while hi / lo > 1 + 1e-10:
        mid = math.sqrt(lo * hi)
        if f(mid) > eps:
            lo = mid
        else:
            hi = mid
    return hi


def compute_dp_sgd_privacy(n: int, batch_size: int, noise_multiplier: float, epochs: float, delta: float,
                           accountant: Optional[str] = None, orders: Optional[Sequence[float]] = None,
                           conversion: str = "improved") -> Tuple[float, float]:
    """(epsilon, optimal RDP order) of DP-SGD on n examples with this batch size, noise multiplier and
    number of epochs, at delta: TF Privacy's compute_dp_sgd_privacy (q = batch_size / n, Poisson
    sampling, steps = ceil(epochs * n / batch_size)).

    orders=TF_PRIVACY_ORDERS and conversion="classic" reproduce the figures TF Privacy published
    (its tutorial table: noise 1.12, 60 epochs, batch 256 of 60000 at delta 1e-5 -> 2.92); the
    defaults (libdpdo's 156-order grid and the improved RDP-to-DP conversion) give a smaller,
    equally valid epsilon. The order is NaN for accountants without orders."""
    if n < 1 or batch_size < 1 or batch_size > n:
        raise InvalidArgument(_lib.E_INVAL, "need 1 <= batch_size <= n, got n=%r, batch_size=%r" % (n, batch_size))
    q = batch_size / n
    T = int(math.ceil(epochs * n / batch_size))
    if noise_multiplier == 0:
        return math.inf, math.nan
    acc = _accountant(accountant, orders, conversion)
    try:
        ev = Event.gaussian(1.0, noise_multiplier, Sampling.poisson(q) if q < 1 else Sampling())
        if T > 0:
            acc.ledger.charge(ev, T)
        return acc.epsilon(delta, with_order=True)
    finally:
        acc.close()


__all__ = ["epsilon", "noise_multiplier", "compute_dp_sgd_privacy", "default_accountant", "TF_PRIVACY_ORDERS"]
