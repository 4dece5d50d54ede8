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
time), so `dpclust.audit.statistics.halved_noise()` reaches every draw.

Floating point (Mironov, "On significance of the least significant bits for differential privacy",
CCS 2012). A released double ``fl(x + fl(b·log(2U)))`` gives the data away: the set of doubles
numpy's sampler can reach from x differs from the set it can reach from a neighbour x', so one
release can tell x from x' with certainty. Every real-valued release of this module is therefore a
multiple of a data-independent power-of-two grid γ = 2^(⌊log2 scale⌋ − `GRID_BITS`) (scale = the
Laplace b or the Gaussian σ): the exact real number x + N, N the noise double drawn by numpy's own
sampler (``rng.laplace`` / ``rng.normal``: the same Generator calls as before, so runs stay paired
with the old code by seed), is rounded to the nearest multiple of γ (`release_on_grid`, exact: an
exact power-of-two scaling, ties decided by an error-free sum). The output is a post-processing of
x + N, so the noise is calibrated for the query's own sensitivity, with no inflation. The
floating-point samplers are not the ideal laws: what each mechanism really guarantees (an ε-DP
Laplace release is (ε, δ_fp)-DP with δ_fp ≈ (1 + e^ε)·4·10⁻⁹ per coordinate a record can change)
is stated in one place, `FLOATING_POINT_GUARANTEE`, `mechanism_guarantee(name)` and
`floating_point_delta(...)`, and each call's δ_fp is noted on the accountant
(`Accountant.note_floating_point`, reported as `Accountant.floating_point_delta`, never charged).
"""

from __future__ import annotations

import functools
import math
import numbers
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from dpclust.api import DPClustError

if TYPE_CHECKING:  # pragma: no cover
    from dpclust.accountant import Accountant

# ---------------------------------------------------------------------------------------------
# The floating-point guarantee (one place)
# ---------------------------------------------------------------------------------------------
#: The grid of every real-valued release: γ = 2^(⌊log2 scale⌋ − GRID_BITS), scale = the Laplace b or
#: the Gaussian σ (so scale/γ ∈ [2^16, 2^17)). Data independent: it depends on the noise scale only.
#: The rounding moves a release by at most γ/2 ≤ scale·2^-17; the floating-point δ below grows
#: with 2^GRID_BITS (the number of grid cells over the sampler's support).
GRID_BITS = 16

#: |value|/γ must stay below this (checked before any charge or draw): then value + noise, noise
#: within numpy's finite support, is below 2^52 grid units and its rounding to the grid is exact.
MAX_GRID_UNITS = 2.0 ** 51

#: numpy's Laplace sampler: |noise| ≤ b·53·ln 2 (U ≥ ½ branch: fl(fl(2 − U) − U) ≥ 2^-53; the U < ½
#: branch reaches −b·52·ln 2).
LAPLACE_SUPPORT = 53.0 * math.log(2.0)
#: numpy's standard normal (ziggurat, r = 3.6541528853610088): |z| ≤ r + sqrt(2·53·ln 2) < 12.23.
GAUSSIAN_SUPPORT = 12.23
#: Gumbel (numpy: −log(−log U'), U' on the 53-bit lattice): G ∈ [−log(53 ln 2), 53 ln 2] = [−3.61, 36.74].
GUMBEL_SUPPORT = (-math.log(53.0 * math.log(2.0)), 53.0 * math.log(2.0))

#: Per grid cell, how far the number of 53-bit uniforms numpy's Laplace sampler maps into the cell
#: can be from 2^53 × the ideal Laplace mass of the cell: 1 (lattice) + 2 (the U ≥ ½ branch computes
#: fl(fl(2 − U) − U), which moves odd lattice points by half a step) + 1 (margin for log's last ulp).
#: tests/test_mechanisms.py re-measures the first two terms by exhaustive enumeration of 2^20
#: uniforms at both tails and in the bulk (measured maximum: 2 over the lattice count).
LAPLACE_CELL_ERROR = 4

FLOATING_POINT_GUARANTEE = f"""\
Floating-point guarantee of dpclust.mechanisms (numpy's samplers, IEEE double; GRID_BITS = {GRID_BITS}).

Laplace and Gaussian releases (laplace_mechanism, gaussian_mechanism, release_on_grid and its
callers). The noise double N is drawn by numpy's Generator.laplace / Generator.normal themselves
(the calls of the code before the grid, same order, same doubles); the release is the exact real
x + N rounded half-to-even to the nearest multiple of the data-independent grid
gamma = 2^(floor(log2 scale) - {GRID_BITS}) (an exact power-of-two scaling, ties decided by an
error-free sum). The output is a post-processing of x + N: no sensitivity inflation, epsilon is
exactly the one charged. Its floating-point deviation: the law of N is not the ideal law, it is a
finite distribution (53-bit uniforms for the Laplace, the 256-layer ziggurat for the normal), so
the mass of each grid cell differs from the ideal mass by a few lattice points. Summed over the
cells of the sampler's support this is a total-variation distance E per coordinate, the same for
every shift x (hence data independent):
  Laplace:  E_L <= 2^-53 * ({LAPLACE_CELL_ERROR}*(2*ceil(53 ln2 * b/gamma) + 3) + 3)  ~ 4.3e-9
            (b/gamma < 2^17; numpy's N lies in [-52 ln2 * b, 53 ln2 * b] = [-36.04 b, 36.74 b]; the
            ideal Laplace's mass outside, 1.5 * 2^-53, is included). Cell error measured by
            enumeration (tests/test_mechanisms.py).
  Gaussian: E_G <= 2^-60 * (1293*(2*ceil(3.66 sigma/gamma) + 3) + 5*(2*ceil(8.58 sigma/gamma) + 3))
            ~ 1.1e-9 (ziggurat: 2^-61 per lattice point, <= 256 layers x 5 points per cell in the
            core, the tail by 53-bit uniforms; |z| <= 12.23, ideal mass beyond 2e-34). Derived, not
            machine-checked.
For a call whose neighbouring inputs differ in m coordinates (m <= the vector's size) the release
is (eps, delta + delta_fp)-DP with delta_fp = (1 + e^eps) * m * E (hockey-stick divergence of the
product law, triangle inequality against the ideal grid-rounded mechanism, which is a
post-processing of the ideal one). For a "pure eps" Laplace algorithm delta_fp is its only delta.
Not covered: the sensitivity of the floating-point query itself (a computed sum may differ between
neighbours by slightly more than Delta through rounding, Casacuberta et al. 2022); a value so large
that |x|/gamma > 2^51 is refused (DPClustError) before anything is charged or drawn.

Exponential mechanism (exponential_mechanism, sample_from_log_weights): the release is an index.
  gumbel (default): argmax(log w + G), G numpy's Gumbel on the 53-bit lattice, support [-3.61, 36.74]
  (ideal mass outside 2^-52 per candidate). Selection probabilities deviate from the ideal softmax
  by sum_i |dP_i| <= n * (M + 2) * 2^-52 (n candidates: one lattice point at each decision boundary
  plus the rounding of log w + G, M = the largest |log w + G| of a candidate that can win); with
  exponential_mechanism's logits c*(u - max u) (max 0, so M < 128) this is <= n * 2^-45, and their
  floating-point rounding moves probability ratios by a factor <= exp(2^-44): (eps + 2^-44,
  (1 + e^eps) * n * 2^-45)-DP. Direct callers of sample_from_log_weights with large |log w| get the
  general bound. inverse_cdf: sum_i |dP_i| <= (n^2 + 3n + 2) * 2^-53 (lattice and the sequential
  cumsum), (eps + 2^-50, (1 + e^eps) * (n^2 + 3n + 2) * 2^-53). Derived, not machine-checked;
  unchanged (sound up to this delta).

Geometric mechanism (geometric_mechanism): integer release, no low-order-bit channel. numpy's
geometric uses one 53-bit uniform per draw (inversion ceil(-log(1 - U)/log1p(-p)) for p < 1/3, else
sequential search with q = fl(1 - p)); the pmf deviates by <= 5 lattice points per value (inversion)
or <= 4X + 1 at value X (search), K = ceil(53 ln2 / lambda) + 1 values, lambda = eps/Delta:
E_geo <= 2 * 2^-53 * (5(K + 2) + 2) (inversion) or 2 * 2^-53 * (2(K + 1)^2 + K + 3) (search) for the
difference of the two draws; the rounded rate moves eps by a factor <= 1 + 2^-50:
(eps * (1 + 2^-50), (1 + e^eps) * m * E_geo)-DP. numpy saturates a draw at INT64_MAX, and two
saturated draws cancel (an exact release): eps/Delta < 2^-50 (p < 2^-50, where a draw could exceed
2^62) and |value| > 2^62 are refused before anything is charged.

Other draws: the norm-Laplace output perturbation of the private 1-median (norm_laplace_on_grid) is
released on the same grid (Mironov's attack closed) but its delta_fp is not quantified (a
d-dimensional law; the objective perturbation b is treated as a continuous density); the continuous
exponential mechanism over intervals (uniform_in_interval_on_grid, GUPT's private quantiles) is
released on a grid of the public range with delta_fp <= (1 + e^eps) * (n * 2^-45 + 2^-53 * 4 *
(range/gamma + 3)). Bernoulli trials "U < p" (e.g. Balcan et al.'s partition) deviate by <= 2^-52.
"""


def _laplace_cell_tv(ratio: float) -> float:
    """E_L: total variation (×2) between the grid-rounded Laplace of numpy's sampler and the ideal one,
    for b/γ = `ratio` (see `FLOATING_POINT_GUARANTEE`)."""
    cells = 2.0 * math.ceil(LAPLACE_SUPPORT * ratio) + 3.0
    return 2.0 ** -53 * (LAPLACE_CELL_ERROR * cells + 3.0)


def _gaussian_cell_tv(ratio: float) -> float:
    """E_G for σ/γ = `ratio` (ziggurat core and tail, see `FLOATING_POINT_GUARANTEE`)."""
    core = 2.0 * math.ceil(3.66 * ratio) + 3.0
    tail = 2.0 * math.ceil(8.58 * ratio) + 3.0
    return 2.0 ** -60 * (1293.0 * core + 5.0 * tail) + 2.0 ** -100


def _geometric_tv(p: float) -> float:
    """E_geo of Z1 − Z2 for numpy's geometric with success probability p."""
    lam = -math.log1p(-p)
    K = math.ceil(LAPLACE_SUPPORT / lam) + 1
    one = 5.0 * (K + 2) + 2.0 if p < 1.0 / 3.0 else 2.0 * (K + 1) ** 2 + K + 3.0
    return 2.0 * 2.0 ** -53 * one


def floating_point_delta(mechanism: str, epsilon: float, *, size: int = 1, ratio: float | None = None,
                         candidates: int = 1, method: str = "gumbel", p: float | None = None,
                         public_ratio: float | None = None) -> float:
    """δ_fp of one call (`FLOATING_POINT_GUARANTEE`): what the floating-point mechanism adds to the δ
    of the ideal one, for neighbouring inputs that differ in `size` coordinates.

    mechanism: ``laplace`` / ``gaussian`` (`ratio` = scale/γ; default the worst, 2^(GRID_BITS + 1)),
    ``exponential`` (`candidates`, `method`), ``geometric`` (`p` = 1 − α), ``interval`` (continuous
    exponential mechanism over `candidates` intervals, `public_ratio` = range/γ).
    """
    worst = 2.0 ** (GRID_BITS + 1)
    factor = 1.0 + math.exp(min(float(epsilon), 700.0))
    if mechanism == "laplace":
        return factor * size * _laplace_cell_tv(worst if ratio is None else ratio)
    if mechanism == "gaussian":
        return factor * size * _gaussian_cell_tv(worst if ratio is None else ratio)
    if mechanism == "exponential":
        n = float(candidates)
        tv = n * 2.0 ** -45 if method == "gumbel" else (n * n + 3.0 * n + 2.0) * 2.0 ** -53
        return factor * tv
    if mechanism == "geometric":
        if p is None:
            raise ValueError("floating_point_delta('geometric') needs p")
        return factor * size * _geometric_tv(p)
    if mechanism == "interval":
        r = worst if public_ratio is None else public_ratio
        return factor * (candidates * 2.0 ** -45 + 2.0 ** -53 * 4.0 * (r + 3.0))
    raise ValueError(f"no floating-point delta for mechanism {mechanism!r}")


def mechanism_guarantee(name: str) -> dict[str, Any]:
    """What mechanism `name` really guarantees in floating point (JSON-ready; the text is
    `FLOATING_POINT_GUARANTEE`). Keys: mechanism, release, grid, epsilon_inflation,
    delta_finite_support (the ideal law's mass outside numpy's support, per draw),
    delta_per_coordinate (δ_fp per coordinate that differs between neighbours, at ε = 1 and the worst
    scale/γ), delta_formula, checked (how the bound was obtained)."""
    grid = f"gamma = 2^(floor(log2 scale) - {GRID_BITS}), scale/gamma in [2^{GRID_BITS}, 2^{GRID_BITS + 1})"
    if name in ("laplace", "laplace_mechanism"):
        return {"mechanism": "laplace", "release": "multiple of gamma (exact rounding of x + N)", "grid": grid,
                "epsilon_inflation": 0.0, "delta_finite_support": 1.5 * 2.0 ** -53,
                "delta_per_coordinate": floating_point_delta("laplace", 1.0),
                "delta_formula": "(1 + e^eps) * m * E_L, E_L = 2^-53*(4*(2*ceil(53 ln2 * b/gamma) + 3) + 3)",
                "checked": "cell error measured by exhaustive enumeration (tests/test_mechanisms.py)"}
    if name in ("gaussian", "gaussian_mechanism"):
        return {"mechanism": "gaussian", "release": "multiple of gamma (exact rounding of x + N)", "grid": grid,
                "epsilon_inflation": 0.0, "delta_finite_support": 2.3e-34,
                "delta_per_coordinate": floating_point_delta("gaussian", 1.0),
                "delta_formula": "(1 + e^eps) * m * E_G, "
                                 "E_G = 2^-60*(1293*(2*ceil(3.66 s/g)+3) + 5*(2*ceil(8.58 s/g)+3))",
                "checked": "derived from numpy's ziggurat (not machine-checked)"}
    if name in ("exponential", "exponential_mechanism", "sample_from_log_weights"):
        return {"mechanism": "exponential", "release": "an index (no low-order bits)", "grid": None,
                "epsilon_inflation": 2.0 ** -44, "delta_finite_support": 2.0 ** -52,
                "delta_per_coordinate": floating_point_delta("exponential", 1.0),
                "delta_formula": "gumbel: (1 + e^eps) * n * 2^-45; inverse_cdf: (1 + e^eps) * (n^2 + 3n + 2) * 2^-53",
                "checked": "derived (not machine-checked)"}
    if name in ("geometric", "geometric_mechanism"):
        return {"mechanism": "geometric", "release": "an integer (no low-order bits)", "grid": None,
                "epsilon_inflation": "eps * 2^-50 (relative)", "delta_finite_support": 2.0 ** -52,
                "delta_per_coordinate": floating_point_delta("geometric", 1.0, p=-math.expm1(-1.0)),
                "delta_formula": "(1 + e^eps) * m * E_geo (FLOATING_POINT_GUARANTEE)",
                "checked": "derived (not machine-checked)"}
    if name in ("norm_laplace", "norm_laplace_on_grid"):
        return {"mechanism": "norm_laplace", "release": "multiple of gamma (exact rounding of x + N)", "grid": grid,
                "epsilon_inflation": 0.0, "delta_finite_support": None, "delta_per_coordinate": None,
                "delta_formula": "not quantified (d-dimensional law)", "checked": "none"}
    if name in ("interval", "uniform_in_interval_on_grid"):
        return {"mechanism": "interval", "release": "multiple of gamma of the public range", "grid": grid,
                "epsilon_inflation": 2.0 ** -44, "delta_finite_support": 2.0 ** -52,
                "delta_per_coordinate": floating_point_delta("interval", 1.0),
                "delta_formula": "(1 + e^eps) * (n * 2^-45 + 2^-53 * 4 * (range/gamma + 3))",
                "checked": "derived (not machine-checked)"}
    raise ValueError(f"unknown mechanism {name!r}")


# ---------------------------------------------------------------------------------------------
# Validation and charging
# ---------------------------------------------------------------------------------------------
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


def _note(accountant: Accountant | None, delta_fp: float, label: str) -> None:
    if accountant is not None:
        accountant.note_floating_point(delta_fp, label=label)


# ---------------------------------------------------------------------------------------------
# The grid
# ---------------------------------------------------------------------------------------------
def grid_spacing(scale):
    """γ = 2^(⌊log2 scale⌋ − GRID_BITS) for a noise scale (float, or an array: elementwise), exactly
    (from the binary exponent, no rounded logarithm)."""
    if isinstance(scale, (float, int, np.floating, np.integer)) and not isinstance(scale, (bool, np.bool_)):
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"a noise scale must be finite and > 0, got {scale!r}")
        gamma = math.ldexp(1.0, math.frexp(scale)[1] - 1 - GRID_BITS)   # scale = m·2^e, m ∈ [½, 1)
        if gamma < sys.float_info.min:
            raise DPClustError(f"noise scale {scale!r} is too small for an exact grid (gamma would be subnormal)")
        return gamma
    s = np.asarray(scale, dtype=float)
    if not (np.isfinite(s).all() and (s > 0).all()):
        raise ValueError(f"a noise scale must be finite and > 0, got {scale!r}")
    _, e = np.frexp(s)                      # s = m·2^e, m ∈ [½, 1): ⌊log2 s⌋ = e − 1
    gammas = np.ldexp(1.0, e - 1 - GRID_BITS)
    if (gammas < sys.float_info.min).any():
        raise DPClustError(f"noise scale {scale!r} is too small for an exact grid (gamma would be subnormal)")
    return float(gammas) if gammas.ndim == 0 else gammas


def _check_on_grid_input(value: np.ndarray, gamma, who: str) -> None:
    """Refuse (before any charge or draw) values the exact rounding cannot handle: NaN/inf, or
    |value| > 2^51·γ (then value + noise could reach 2^52 grid steps, where doubles are coarser than γ)."""
    if not value.size:
        return
    if isinstance(gamma, float):
        ok = np.abs(value).max() <= MAX_GRID_UNITS * gamma
    else:
        ok = (np.abs(value) / gamma).max() <= MAX_GRID_UNITS
    if not ok:                              # also catches NaN
        if not np.isfinite(value).all():
            raise DPClustError(f"{who}: the value to release must be finite (got NaN or inf)")
        raise DPClustError(f"{who}: a value of magnitude {float(np.abs(value).max()):.6g} is above 2^51 grid steps of "
                           "its noise scale; the release on the grid would not be exact")


_GRID_LIMIT = 2.0 ** 52


def release_on_grid(value, noise, gamma, who: str = "release_on_grid"):
    """The exact real number value + noise rounded half-to-even to the nearest multiple of γ
    (elementwise; γ a power of two, scalar or broadcastable). Exact: s = fl(value + noise) scaled by
    the power of two γ is exact, and where fl(s/γ) is a tie (frac ±½) Knuth's error-free TwoSum
    (value + noise = s + e exactly) decides by the sign of e. Raises `DPClustError` naming `who` if
    |value + noise|/γ ≥ 2^52 (or is not finite)."""
    x = np.asarray(value, dtype=float)
    n = np.asarray(noise, dtype=float)
    shape = x.shape if x.shape == n.shape else np.broadcast(x, n).shape
    q = np.add(x, n).reshape(-1)
    q /= gamma if isinstance(gamma, float) else np.broadcast_to(gamma, shape).reshape(-1)  # exact: γ = 2^j
    r = np.rint(q)
    if not np.abs(r).max(initial=0.0) < _GRID_LIMIT:   # NaN fails too
        raise DPClustError(f"{who}: value + noise is not finite or above 2^52 grid steps; refusing an inexact release")
    q -= r                                     # the fraction, exact (|q| < 2^52)
    ties = np.flatnonzero(np.abs(q) == 0.5)
    if ties.size:                              # fl(x + n)/γ sits on a tie: the exact sum decides
        xb, nb = np.broadcast_arrays(x, n)
        xs, ns = xb.reshape(-1)[ties], nb.reshape(-1)[ties]
        s = xs + ns
        bp = s - xs
        err = (xs - (s - bp)) + (ns - bp)      # TwoSum: x + n == s + err exactly
        frac = q[ties]
        r[ties] += ((frac == 0.5) & (err > 0)).astype(float) - ((frac == -0.5) & (err < 0)).astype(float)
    r += 0.0                                   # −0 → +0: no sign bit from the data
    r *= gamma if isinstance(gamma, float) else np.broadcast_to(gamma, shape).reshape(-1)  # exact
    return r.reshape(shape)


def laplace_noise(shape, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Laplace(0, `scale`) noise doubles: numpy's own sampler, ``rng.laplace(0.0, scale, size=shape)``
    (`random_laplace`: U = next_double on the 53-bit lattice, U ≥ ½ → −b·log(fl(2 − U) − U), else
    b·log(2U), U = 0 redrawn), so the draws are bit for bit those of the code before the grid. Raw
    noise: release it only through `release_on_grid` (or use `laplace_mechanism`)."""
    return rng.laplace(0.0, scale, size=shape)


def _as_release(out: np.ndarray, ndim: int):
    return out[()] if ndim == 0 else out


def laplace_on_grid(value, scale: float, rng: np.random.Generator, *, accountant: Accountant | None = None,
                    epsilon: float | None = None, changed: int | None = None, who: str = "laplace"):
    """Release `value` + Laplace(`scale`) elementwise on the grid γ = `grid_spacing(scale)`, for a
    caller that has charged the budget itself (the scale must come from `laplace_scale`). With
    `accountant` and `epsilon`, notes δ_fp for `changed` coordinates (default: all) on it."""
    value = np.asarray(value, dtype=float)
    gamma = grid_spacing(scale)
    _check_on_grid_input(value, gamma, who)
    out = release_on_grid(value, laplace_noise(value.shape, scale, rng), gamma, who)
    if accountant is not None and epsilon is not None:
        m = value.size if changed is None else int(changed)
        _note(accountant, floating_point_delta("laplace", epsilon, size=m, ratio=scale / gamma), who)
    return _as_release(out, value.ndim)


def gaussian_on_grid(value, sigma, rng: np.random.Generator, *, accountant: Accountant | None = None,
                     epsilon: float | None = None, changed: int | None = None, who: str = "gaussian"):
    """Release `value` + N(0, σ²) elementwise on the grid γ = `grid_spacing(σ)`; `sigma` is a scalar
    or an array broadcastable to `value` (e.g. one σ per row, each row on its own grid). The draws
    are ``rng.normal(0, σ, size=value.shape)``: one standard normal per element in C order, times its
    σ (the same doubles as σ·``rng.standard_normal(value.shape)``)."""
    value = np.asarray(value, dtype=float)
    sig = np.asarray(sigma, dtype=float)
    gamma = grid_spacing(sig)
    _check_on_grid_input(value, np.broadcast_to(gamma, value.shape), who)
    noise = rng.normal(0.0, sig, size=value.shape)  # one standard normal per element, in C order
    out = release_on_grid(value, noise, gamma, who)
    if accountant is not None and epsilon is not None:
        m = value.size if changed is None else int(changed)
        ratio = float(np.max(sig / np.asarray(gamma)))
        _note(accountant, floating_point_delta("gaussian", epsilon, size=m, ratio=ratio), who)
    return _as_release(out, value.ndim)


def norm_laplace_noise(d: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """A vector with density ∝ exp(−‖b‖₂/scale) on R^d: uniform direction, Gamma(d, scale) norm.
    Raw noise (e.g. the objective perturbation of the private 1-median, which is not released)."""
    direction = rng.standard_normal(d)
    nrm = np.linalg.norm(direction)
    while nrm == 0.0:  # probability zero; keeps the draw well defined
        direction = rng.standard_normal(d)
        nrm = np.linalg.norm(direction)
    return direction / nrm * rng.gamma(d, scale)


def norm_laplace_on_grid(value, scale: float, rng: np.random.Generator, bound: float | None = None,
                         who: str = "norm-Laplace") -> np.ndarray:
    """Release the vector `value` + b, b with density ∝ exp(−‖b‖₂/scale) (`norm_laplace_noise`, the
    same draws), on the grid γ = `grid_spacing(scale)`, coarsened to 2^(⌈log2 bound⌉ − 51) when a
    public `bound` on |value| asks for it (a scale far below |value|·2^-35, e.g. the 1-median's
    output perturbation of a solver error); a value above `bound` is refused (`DPClustError`)."""
    value = np.asarray(value, dtype=float)
    gamma = grid_spacing(scale)
    if bound is not None:
        if not (math.isfinite(bound) and bound > 0):
            raise ValueError(f"{who}: bound must be a finite number > 0, got {bound!r}")
        gamma = max(gamma, math.ldexp(1.0, math.frexp(float(bound))[1] - 51))  # bound < 2^e
        if not (np.abs(value) <= bound).all():
            raise DPClustError(f"{who}: a value above the public bound {bound!r}; refusing an inexact release")
    _check_on_grid_input(value, gamma, who)
    return release_on_grid(value, norm_laplace_noise(value.shape[-1], scale, rng), gamma, who)


def uniform_in_interval_on_grid(start: float, length: float, public_range: float, rng: np.random.Generator, *,
                                accountant: Accountant | None = None, epsilon: float | None = None,
                                candidates: int = 1, who: str = "interval") -> float:
    """A uniform point of [start, start + length] (one ``rng.random()``, as ``start + rng.random()·length``
    draws it) released on the grid γ = `grid_spacing(public_range)` of the data-independent range
    (the continuous exponential mechanism over intervals, e.g. a private quantile: the interval's
    edges are data, the released double must not carry their low-order bits)."""
    gamma = grid_spacing(public_range)
    start_a = np.asarray(float(start))
    _check_on_grid_input(start_a, gamma, who)
    out = float(release_on_grid(start_a, rng.random() * float(length), gamma, who))
    if accountant is not None and epsilon is not None:
        _note(accountant, floating_point_delta("interval", epsilon, candidates=candidates,
                                               public_ratio=public_range / gamma), who)
    return out


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
    changed: int | None = None,
):
    """Release `value + Lap(Δ₁/ε)` elementwise on the grid of b (`FLOATING_POINT_GUARANTEE`);
    `sensitivity` is the L1 sensitivity of the whole vector `value`. Charges ε to `accountant` first
    and notes the call's δ_fp on it (`changed`: how many coordinates one record can change; default
    all). The draws are those of ``rng.laplace(0, b, size=value.shape)``."""
    scale = laplace_scale(sensitivity, epsilon)
    value = np.asarray(value, dtype=float)
    gamma = grid_spacing(scale)
    _check_on_grid_input(value, gamma, f"laplace_mechanism ({label})")
    _charge(accountant, epsilon, 0.0, label)
    out = release_on_grid(value, laplace_noise(value.shape, scale, rng), gamma, f"laplace_mechanism ({label})")
    m = value.size if changed is None else int(changed)
    _note(accountant, floating_point_delta("laplace", epsilon, size=m, ratio=scale / gamma), label)
    return _as_release(out, value.ndim)


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


@functools.lru_cache(maxsize=4096)   # a pure function; audits call it for every draw
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
    changed: int | None = None,
):
    """Release `value + N(0, σ²)` elementwise on the grid of σ (`FLOATING_POINT_GUARANTEE`), σ
    calibrated to L2 sensitivity Δ₂ and (ε, δ). Charges (ε, δ) first and notes δ_fp. The draws are
    those of ``rng.normal(0, σ, size=value.shape)``."""
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration)
    value = np.asarray(value, dtype=float)
    gamma = grid_spacing(sigma)
    _check_on_grid_input(value, gamma, f"gaussian_mechanism ({label})")
    _charge(accountant, epsilon, delta, label)
    noise = rng.normal(0.0, sigma, size=value.shape)
    out = release_on_grid(value, noise, gamma, f"gaussian_mechanism ({label})")
    m = value.size if changed is None else int(changed)
    _note(accountant, floating_point_delta("gaussian", epsilon, size=m, ratio=sigma / gamma), label)
    return _as_release(out, value.ndim)


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
    The release is an index; its floating-point deviation from the ideal law is in
    `FLOATING_POINT_GUARANTEE` (`mechanism_guarantee("exponential")`).
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
    direction between neighbours) the factor is ε/Δu. Scores of `-inf` are never drawn. Notes the
    call's δ_fp (`floating_point_delta("exponential", ...)`) on `accountant`."""
    c = exponential_logit_scale(sensitivity, epsilon, monotonic)
    if method not in ("gumbel", "inverse_cdf"):
        raise ValueError(f"unknown sampling method {method!r} (use 'gumbel' or 'inverse_cdf')")
    u = _check_log_weights(scores)
    # Shift by the best score before scaling (softmax is shift invariant): no overflow for huge u.
    with np.errstate(over="ignore"):  # u − max may be −inf: that candidate has weight 0 anyway
        logw = c * (u - u[np.isfinite(u)].max())
    _charge(accountant, epsilon, 0.0, label)
    _note(accountant, floating_point_delta("exponential", epsilon, candidates=u.size, method=method), label)
    return sample_from_log_weights(logw, rng, method)


# ---------------------------------------------------------------------------------------------
# Discrete (two-sided geometric) noise
# ---------------------------------------------------------------------------------------------
#: Smallest 1 − α the geometric mechanism accepts: a numpy geometric draw is then below
#: 53·ln 2/p < 2^56, never saturated at INT64_MAX, and value + noise fits in int64 for |value| ≤ 2^62.
GEOMETRIC_MIN_P = 2.0 ** -50
GEOMETRIC_MAX_VALUE = 2 ** 62


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
    Integer-valued: no low-order-bit channel; the floating-point deviation of numpy's geometric
    sampler is in `FLOATING_POINT_GUARANTEE` (noted on `accountant`). ε/Δ below 2^-50 and |value| >
    2^62 are refused (numpy saturates its geometric draws at INT64_MAX; two saturated draws cancel).
    """
    _check_integer_sensitivity(sensitivity)
    scale = laplace_scale(float(sensitivity), epsilon)  # α = exp(−1/scale), as in geometric_alpha
    value = np.asarray(value)
    if not np.issubdtype(value.dtype, np.integer):
        raise ValueError("the geometric mechanism needs integer values")
    p = -math.expm1(-1.0 / scale)  # 1 − α, accurate also for tiny ε/Δ
    if not p >= GEOMETRIC_MIN_P:  # numpy saturates draws at INT64_MAX, and two saturated draws cancel
        raise ValueError(f"epsilon/sensitivity = {1.0 / scale!r} is too small for the geometric mechanism "
                         f"(1 - alpha below 2^-50: numpy's geometric draws could saturate)")
    if value.size and not (-GEOMETRIC_MAX_VALUE <= int(value.min()) and int(value.max()) <= GEOMETRIC_MAX_VALUE):
        raise ValueError("the geometric mechanism needs |value| <= 2^62 (value + noise must fit in int64)")
    _charge(accountant, epsilon, 0.0, label)
    _note(accountant, floating_point_delta("geometric", epsilon, size=value.size, p=p), label)
    noise = rng.geometric(p, size=value.shape) - rng.geometric(p, size=value.shape)
    return value.astype(np.int64) + noise
