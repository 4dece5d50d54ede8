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
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize, special

if TYPE_CHECKING:  # pragma: no cover
    from .accountant import Accountant


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


def _charge(accountant: "Accountant | None", epsilon: float, delta: float, label: str) -> None:
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
    accountant: "Accountant | None" = None,
    label: str = "laplace",
):
    """Release `value + Lap(Δ₁/ε)` elementwise; `sensitivity` is the L1 sensitivity of the whole
    vector `value`. Charges ε to `accountant` first."""
    scale = laplace_scale(sensitivity, epsilon)
    _charge(accountant, epsilon, 0.0, label)
    value = np.asarray(value, dtype=float)
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
    first = special.ndtr(a - b)
    second = math.exp(epsilon + special.log_ndtr(-a - b))
    return first - second


def gaussian_sigma_analytic(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ for which the Gaussian mechanism is (ε, δ)-DP (Balle & Wang 2018, Alg. 1)."""
    _check_sensitivity(sensitivity)
    _check_eps(epsilon)
    _check_delta(delta, positive=True)
    f = lambda log_sigma: _analytic_delta(math.exp(log_sigma), sensitivity, epsilon) - delta  # noqa: E731
    lo, hi = math.log(sensitivity) - 10.0, math.log(sensitivity) + 10.0
    while f(lo) < 0:
        lo -= 10.0
    while f(hi) > 0:
        hi += 10.0
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
    accountant: "Accountant | None" = None,
    label: str = "gaussian",
    calibration: str = "analytic",
):
    """Release `value + N(0, σ²)` elementwise, σ calibrated to L2 sensitivity Δ₂ and (ε, δ)."""
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration)
    _charge(accountant, epsilon, delta, label)
    value = np.asarray(value, dtype=float)
    return value + rng.normal(0.0, sigma, size=value.shape)


# ---------------------------------------------------------------------------------------------
# Exponential mechanism
# ---------------------------------------------------------------------------------------------
def exponential_logit_scale(sensitivity: float, epsilon: float, monotonic: bool = False) -> float:
    """Factor c in Pr[r] ∝ exp(c·u(r)): ε/(2Δu), or ε/Δu for monotone utilities."""
    _check_sensitivity(sensitivity)
    _check_eps(epsilon)
    return epsilon / (sensitivity if monotonic else 2.0 * sensitivity)


def sample_from_log_weights(log_weights, rng: np.random.Generator, method: str = "gumbel") -> int:
    """Draw index i with probability ∝ exp(log_weights[i]), exactly, without overflow.

    `gumbel`: argmax(log w + Gumbel noise) (the Gumbel-max trick), O(n) and one pass; `inverse_cdf`:
    normalise by log-sum-exp and invert the CDF with one uniform. `-inf` weights are never drawn.
    """
    logw = np.asarray(log_weights, dtype=float).ravel()
    if logw.size == 0:
        raise ValueError("cannot sample from an empty candidate set")
    if np.isnan(logw).any() or np.isposinf(logw).any():
        raise ValueError("log weights must not contain NaN or +inf")
    if not np.isfinite(logw).any():
        raise ValueError("every candidate has weight zero")
    if method == "gumbel":
        return int(np.argmax(logw + rng.gumbel(size=logw.shape)))
    if method == "inverse_cdf":
        p = np.exp(logw - special.logsumexp(logw))
        cdf = np.cumsum(p)
        u = rng.random() * cdf[-1]
        return int(min(np.searchsorted(cdf, u, side="right"), logw.size - 1))
    raise ValueError(f"unknown sampling method {method!r} (use 'gumbel' or 'inverse_cdf')")


def exponential_mechanism(
    scores,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    accountant: "Accountant | None" = None,
    label: str = "exponential",
    monotonic: bool = False,
    method: str = "gumbel",
) -> int:
    """Index r drawn with Pr[r] ∝ exp(ε·u(r)/(2Δu)) (McSherry & Talwar 2007); higher u is better."""
    c = exponential_logit_scale(sensitivity, epsilon, monotonic)
    _charge(accountant, epsilon, 0.0, label)
    return sample_from_log_weights(c * np.asarray(scores, dtype=float), rng, method)


# ---------------------------------------------------------------------------------------------
# Discrete (two-sided geometric) noise
# ---------------------------------------------------------------------------------------------
def geometric_alpha(sensitivity: float, epsilon: float) -> float:
    """α = exp(−ε/Δ) of the two-sided geometric law Pr[Z = z] ∝ α^|z|."""
    return math.exp(-laplace_scale(sensitivity, epsilon) ** -1)


def geometric_mechanism(
    value,
    sensitivity: int,
    epsilon: float,
    rng: np.random.Generator,
    accountant: "Accountant | None" = None,
    label: str = "geometric",
):
    """Release integer `value + Z`, Z two-sided geometric (discrete Laplace) with α = exp(−ε/Δ)."""
    if int(sensitivity) != sensitivity:
        raise ValueError("the geometric mechanism needs an integer sensitivity")
    alpha = geometric_alpha(float(sensitivity), epsilon)
    _charge(accountant, epsilon, 0.0, label)
    value = np.asarray(value)
    if not np.issubdtype(value.dtype, np.integer):
        raise ValueError("the geometric mechanism needs integer values")
    p = 1.0 - alpha
    noise = rng.geometric(p, size=value.shape) - rng.geometric(p, size=value.shape)
    return value.astype(np.int64) + noise
