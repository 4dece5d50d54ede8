"""The privacy mechanisms every dpclust algorithm draws its noise from.

All randomness comes from the `numpy.random.Generator` passed in; nothing here touches global state.
When an `Accountant` is given, the mechanism charges it *before* drawing, so an overspending call
raises and releases nothing. The noise scale of each family is computed by one function
(`laplace_scale`, `gaussian_sigma`, `exponential_logit_scale`), which is also what the privacy audit
in the test suite perturbs to show that a halved noise scale is caught.

References: Laplace mechanism (Dwork et al. 2006; Dwork & Roth 2014, Def. 3.3), Gaussian mechanism
(Dwork & Roth 2014, Thm A.1; analytic calibration: Balle & Wang 2018, Thm 8 / Alg. 1), exponential
mechanism (McSherry & Talwar 2007; Dwork & Roth 2014, Def. 3.4), two-sided geometric mechanism
(Ghosh, Roughgarden & Sundararajan 2009).

Every mechanism validates all of its inputs, then charges the accountant, then draws; the scale
functions are looked up through this module's globals at call time (never cache a scale at import
time), so `dpclust.audit.statistics.halved_noise()` reaches every draw. Floating-point sampling is the usual
idealisation (cf. Mironov 2012 on the Laplace mechanism): the guarantees are those of the
real-valued mechanisms.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from dpclust.accountant import Accountant


def _check_eps(epsilon: float) -> None:
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")


def _check_delta(delta: float, *, positive: bool) -> None:
    lo_ok = delta > 0 if positive else delta >= 0
    if not (math.isfinite(delta) and lo_ok and delta < 1):
        raise ValueError(f"delta must be in {'(0, 1)' if positive else '[0, 1)'}, got {delta!r}")


def _check_sensitivity(sensitivity: float) -> None:
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")


def _charge(accountant: Accountant | None, epsilon: float, delta: float, label: str) -> None:
    if accountant is not None:
        accountant.spend(epsilon, delta, label=label)


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------
def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale b = Δ₁/ε of the Laplace mechanism (ε-DP for L1 sensitivity Δ₁)."""
    _check_sensitivity(sensitivity)
    _check_eps(epsilon)
    return sensitivity / epsilon


def laplace_mechanism(
    value,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant | None = None,
    label: str = "laplace",
):
    """Release `value + Lap(Δ₁/ε)` elementwise; `sensitivity` is the L1 sensitivity of the whole
    vector `value`. Charges ε to `accountant` first."""
    scale = laplace_scale(sensitivity, epsilon)
    value = np.asarray(value, dtype=float)
    _charge(accountant, epsilon, 0.0, label)
    return value + rng.laplace(0.0, scale, size=value.shape)


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------
def gaussian_sigma_classic(sensitivity: float, epsilon: float, delta: float) -> float:
    """σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; proved for ε < 1)."""
    _check_sensitivity(sensitivity)
    _check_eps(epsilon)
    _check_delta(delta, positive=True)
    if epsilon >= 1:
        raise ValueError("the classic Gaussian calibration holds only for epsilon < 1; use 'analytic'")
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def _analytic_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """δ(σ) of the Gaussian mechanism (Balle & Wang 2018, Thm 8), computed stably in log space."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    from scipy import special  # lazy: keeps `python -m dpclust.pipeline run` start-up lean

    first = special.ndtr(a - b)
    second = math.exp(epsilon + special.log_ndtr(-a - b))
    return first - second


def gaussian_sigma_analytic(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ for which the Gaussian mechanism is (ε, δ)-DP (Balle & Wang 2018, Thm 8).

    Solves δ(σ) = δ for the exact criterion of Thm 8 by bracketing and Brent's method in log σ
    (equivalent to their Alg. 1), then nudges σ up until δ(σ) ≤ δ holds in floating point.
    """
    _check_sensitivity(sensitivity)
    _check_eps(epsilon)
    _check_delta(delta, positive=True)
    f = lambda log_sigma: _analytic_delta(math.exp(log_sigma), sensitivity, epsilon) - delta  # noqa: E731
    lo, hi = math.log(sensitivity) - 10.0, math.log(sensitivity) + 10.0
    while f(lo) < 0:
        lo -= 10.0
    while f(hi) > 0:
        hi += 10.0
    from scipy import optimize

    log_sigma = optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-12, maxiter=500)
    sigma = math.exp(log_sigma)
    # brentq's root may sit a hair on the wrong side; step up until δ(σ) ≤ δ holds exactly.
    while _analytic_delta(sigma, sensitivity, epsilon) > delta:
        sigma *= 1.0 + 1e-12
    return sigma


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """σ of the Gaussian mechanism for L2 sensitivity Δ₂ with the named calibration."""
    if calibration == "analytic":
        return gaussian_sigma_analytic(sensitivity, epsilon, delta)
    if calibration == "classic":
        return gaussian_sigma_classic(sensitivity, epsilon, delta)
    raise ValueError(f"unknown Gaussian calibration {calibration!r} (use 'analytic' or 'classic')")


def gaussian_mechanism(
    value,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant | None = None,
    label: str = "gaussian",
    calibration: str = "analytic",
):
    """Release `value + N(0, σ²)` elementwise, σ calibrated to L2 sensitivity Δ₂ and (ε, δ)."""
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration)
    value = np.asarray(value, dtype=float)
    _charge(accountant, epsilon, delta, label)
    return value + rng.normal(0.0, sigma, size=value.shape)


# ---------------------------------------------------------------------------------------------
# Exponential mechanism
# ---------------------------------------------------------------------------------------------
def exponential_logit_scale(sensitivity: float, epsilon: float, monotonic: bool = False) -> float:
    """Factor c in Pr[r] ∝ exp(c·u(r)): ε/(2Δu), or ε/Δu for monotone utilities."""
    _check_sensitivity(sensitivity)
    _check_eps(epsilon)
    return epsilon / (sensitivity if monotonic else 2.0 * sensitivity)


def _check_log_weights(log_weights) -> np.ndarray:
    logw = np.asarray(log_weights, dtype=float).ravel()
    if logw.size == 0:
        raise ValueError("cannot sample from an empty candidate set")
    if np.isnan(logw).any() or np.isposinf(logw).any():
        raise ValueError("log weights must not contain NaN or +inf")
    if not np.isfinite(logw).any():
        raise ValueError("every candidate has weight zero")
    return logw


def sample_from_log_weights(log_weights, rng: np.random.Generator, method: str = "gumbel") -> int:
    """Draw index i with probability ∝ exp(log_weights[i]), exactly, without overflow.

    `gumbel`: argmax(log w + Gumbel noise) (the Gumbel-max trick), O(n) and one pass; `inverse_cdf`:
    normalise by log-sum-exp and invert the CDF with one uniform. `-inf` weights are never drawn.
    """
    if method not in ("gumbel", "inverse_cdf"):
        raise ValueError(f"unknown sampling method {method!r} (use 'gumbel' or 'inverse_cdf')")
    logw = _check_log_weights(log_weights)
    if method == "gumbel":
        return int(np.argmax(logw + rng.gumbel(size=logw.shape)))
    p = np.exp(logw - logw.max())  # unnormalised, max weight 1: no overflow
    cdf = np.cumsum(p)
    u = rng.random() * cdf[-1]
    i = int(np.searchsorted(cdf, u, side="right"))
    # u may round up to cdf[-1]: fall back to the last candidate of positive weight (never a -inf).
    return min(i, int(np.flatnonzero(p > 0)[-1]))


def exponential_mechanism(
    scores,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant | None = None,
    label: str = "exponential",
    monotonic: bool = False,
    method: str = "gumbel",
) -> int:
    """Index r drawn with Pr[r] ∝ exp(ε·u(r)/(2Δu)) (McSherry & Talwar 2007; Dwork & Roth 2014,
    Def. 3.4 / Thm 3.10); higher u is better. With `monotonic=True` (every score moves in the same
    direction between neighbours) the factor is ε/Δu. Scores of `-inf` are never drawn."""
    c = exponential_logit_scale(sensitivity, epsilon, monotonic)
    if method not in ("gumbel", "inverse_cdf"):
        raise ValueError(f"unknown sampling method {method!r} (use 'gumbel' or 'inverse_cdf')")
    u = _check_log_weights(scores)
    # Shift by the best score before scaling (softmax is shift invariant): no overflow for huge u.
    with np.errstate(over="ignore"):  # u − max may be −inf: that candidate has weight 0 anyway
        logw = c * (u - u[np.isfinite(u)].max())
    _charge(accountant, epsilon, 0.0, label)
    return sample_from_log_weights(logw, rng, method)


# ---------------------------------------------------------------------------------------------
# Discrete (two-sided geometric) noise
# ---------------------------------------------------------------------------------------------
def geometric_alpha(sensitivity: float, epsilon: float) -> float:
    """α = exp(−ε/Δ) of the two-sided geometric law Pr[Z = z] = (1−α)/(1+α)·α^|z|
    (Ghosh, Roughgarden & Sundararajan 2009), ε-DP for integer queries of L1 sensitivity Δ."""
    return math.exp(-1.0 / laplace_scale(sensitivity, epsilon))


def _check_integer_sensitivity(sensitivity) -> None:
    if isinstance(sensitivity, (bool, np.bool_)) or not isinstance(sensitivity, numbers.Real):
        raise ValueError(f"the geometric mechanism needs an integer sensitivity >= 1, got {sensitivity!r}")
    try:
        s = float(sensitivity)
    except (TypeError, ValueError):
        raise ValueError(f"the geometric mechanism needs an integer sensitivity >= 1, got {sensitivity!r}") from None
    if not (math.isfinite(s) and s >= 1 and s == int(s)):
        raise ValueError(f"the geometric mechanism needs an integer sensitivity >= 1, got {sensitivity!r}")


def geometric_mechanism(
    value,
    sensitivity: int,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant | None = None,
    label: str = "geometric",
):
    """Release integer `value + Z`, Z two-sided geometric (discrete Laplace) with α = exp(−ε/Δ).

    Z is the difference of two i.i.d. Geometric(1−α) variables on {1, 2, ...}, whose law is
    (1−α)/(1+α)·α^|z|. `sensitivity` is the L1 sensitivity of the whole integer vector `value`.
    """
    _check_integer_sensitivity(sensitivity)
    scale = laplace_scale(float(sensitivity), epsilon)  # α = exp(−1/scale), as in geometric_alpha
    value = np.asarray(value)
    if not np.issubdtype(value.dtype, np.integer):
        raise ValueError("the geometric mechanism needs integer values")
    p = -math.expm1(-1.0 / scale)  # 1 − α, accurate also for tiny ε/Δ
    if not p > 0:
        raise ValueError(f"epsilon/sensitivity = {1.0 / scale!r} is too small for the geometric mechanism")
    _charge(accountant, epsilon, 0.0, label)
    noise = rng.geometric(p, size=value.shape) - rng.geometric(p, size=value.shape)
    return value.astype(np.int64) + noise
