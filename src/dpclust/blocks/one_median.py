"""Private 1-median by objective perturbation (Cohen-Addad et al. 2022, §6 "private 1-median").

The paper computes each private centre with the objective-perturbation method of Iyengar et al.
(2019, "Towards practical differentially private convex optimization", Alg. 1 AMP) applied to the
λ-smooth k-median objective of one cluster. We implement a *pure ε-DP* member of that family and
prove its noise scales below, because the extraction of the paper lost every constant and the
released code's Gaussian variant differs from the paper's pure-ε HST.

Loss (EXT-code `smooth_norm`): ℓ(θ; x) = sqrt(‖θ − x‖² + λ²). For every x:
  * L-Lipschitz with L = 1 (‖∇ℓ‖ = ‖v‖/sqrt(‖v‖²+λ²) < 1, v = θ − x), independent of the box;
  * β-smooth with β = 1/λ (Hessian (I − vvᵀ/s²)/s, s = sqrt(‖v‖²+λ²), eigenvalues in (0, 1/λ]);
  * Hessian rank r = d.

Mechanism (settings in brackets; declared with defaults and provenance in `ONE_MEDIAN_SETTINGS`):
  1. ε is split into ε_J = ``one_median_jacobian_fraction``·ε (regulariser), ε_out =
     ``one_median_output_fraction``·ε (output perturbation of the solver error) and ε_b = the rest.
  2. Λ = β / (exp(ε_J / r) − 1), so that r·log(1 + β/Λ) = ε_J.
  3. b ∈ R^d with density ∝ exp(−‖b‖/s_b), s_b = laplace_scale(Δ_b, ε_b), Δ_b = L (add/remove
     neighbours) or 2L (replace-one neighbours) [``one_median_neighbouring``]. Drawn as a uniform
     direction times a Gamma(d, s_b) radius.
  4. θ_a ≈ argmin_θ F(θ) = Σ_i ℓ(θ; x_i) + (Λ/2)‖θ − c‖² + bᵀθ (c = centre of the public box),
     by damped Newton until ‖∇F(θ_a)‖ ≤ γ [``one_median_gradient_tol``]; F is Λ-strongly convex so
     ‖θ_a − θ*‖ ≤ γ/Λ =: ρ.
  5. Release clip(θ_a + b₂, box) with b₂ of density ∝ exp(−‖b₂‖/s₂), s₂ = laplace_scale(2ρ, ε_out).

Privacy (the result we follow: the pure-ε objective-perturbation theorem of Chaudhuri, Monteleoni &
Sarwate 2011, JMLR, Alg. 2, in the general-rank form of Kifer, Smith & Thakurta 2012 (COLT, §3:
density ∝ exp(−ε‖b‖/(2ζ)), regulariser Δ ≥ 2rλ/ε), with the approximate-minimiser output step of
Iyengar et al. 2019 (AMP, Alg. 1); the constants below are re-derived for our split of ε):
  * exact minimiser θ*: for neighbours the change of variables b ↔ θ* gives a density ratio
    ν(b_D(θ))/ν(b_D'(θ)) ≤ exp(‖∇ℓ(θ;x)−…‖/s_b) ≤ e^{ε_b} times a Jacobian ratio
    det(J_D)/det(J_D') ≤ (1 + β/Λ)^r = e^{ε_J}; so θ* is (ε_J + ε_b)-DP;
  * θ_out = θ* + e(θ*) + b₂ with ‖e‖ ≤ ρ and e a deterministic function of (D, θ*): the density of
    b₂ moves by at most a factor exp(ρ/s₂) = e^{ε_out/2} when e is dropped, once for each dataset,
    and θ* + b₂ is post-processing; total ε_J + ε_b + ε_out = ε, δ = 0.
  * If Newton does not reach γ, nothing is released and `DPClustError` is raised. That event depends
    on the data, so strictly it is outside the guarantee; F is Λ-strongly convex and smooth, damped
    Newton converges on it, and no failure was seen for λ ∈ [0.001, 0.1], ε ∈ [0.01, 100], d ≤ 28,
    m = 20,000 (an idealisation like floating-point sampling). An ε so large that Λ underflows is
    refused before anything is charged.

High dimension: Λ = β/(e^{ε_J/d} − 1) ≈ d/(λ·ε_J) grows with d, and once it exceeds the data's
curvature (about m/‖x − θ‖ for m points) the release is the box centre c whatever P is. Measured on
MNIST (d = 784, λ = 0.1, ε = 0.2: Λ = 7.8·10^4 against ≈ 700 for a 7,000-point cluster): every
release within 0.35 of c, the clusters' own centres 11.4–12.7 away (`git show 51a7532:docs/FULL_PROTOCOL.md`,
"MNIST at full scale"; `benchmarks/one_median_high_dim.py`).

Interpretations (ours): pure ε instead of the Gaussian (ε, δ) AMP (the HST part of the paper is pure
ε; δ passed in is not spent); the regulariser is centred at the box centre (data independent); the
unconstrained minimiser is clipped to the box afterwards (post-processing). Accounting: one charge of
ε_J + ε_b right before b is drawn and one of ε_out right before b₂.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import DPClustError
from dpclust.blocks.domain import require_inside
from dpclust.mechanisms import laplace_scale, norm_laplace_noise, norm_laplace_on_grid
from dpclust.settings import Guarantee, Interval, Options, Setting, Settings

#: The private 1-median's declared settings (defaults, constraints, provenance). Algorithms that call
#: `private_one_median` with their own settings extend this declaration (their defaults may differ:
#: Cohen-Addad et al.'s HST uses λ = 0.1 and replace-one neighbours); `private_one_median` reads only
#: these keys of the settings it is given and fills the missing ones from here.
ONE_MEDIAN_SETTINGS = Settings(
    one_median_smooth_lambda=Setting(
        0.01, "EXT Google hst_clustering code: smooth_norm λ = 0.01 (absolute units, on data in [0, 2])",
        Interval(float, 0.0, open_lo=True), "λ of the smoothed norm sqrt(‖θ − x‖² + λ²); β = 1/λ"),
    one_median_jacobian_fraction=Setting(
        0.5, "REC Kifer, Smith & Thakurta 2012 split: ε/2 bounds the Jacobian ratio (regulariser), ε/2 the noise",
        Interval(float, 0.0, 1.0, open_lo=True), "share ε_J of ε for the regulariser Λ (with output < 1)"),
    one_median_output_fraction=Setting(
        0.01, "REC the solver error γ/Λ is tiny, 1 % of ε suffices for its output perturbation",
        Interval(float, 0.0, 1.0, open_lo=True), "share ε_out of ε for the output perturbation (with Jacobian < 1)"),
    one_median_gradient_tol=Setting(
        1e-7, "REC γ of the approximate minimiser (AMP, Iyengar et al. 2019): far above float64 round-off "
        "for n ≤ 1e6", Interval(float, 0.0, open_lo=True), "stop Newton when ‖∇F‖ ≤ γ"),
    one_median_max_newton_iter=Setting(
        200, "REC damped Newton converges in < 50 steps; nothing is released if it does not converge",
        Interval(int, 1), "cap on the Newton iterations"),
    one_median_neighbouring=Setting(
        "add_remove", "REC add/remove neighbours, as the HST counts (Lemma 3); 'replace' for samples of a "
        "fixed size (Δ_b = 2L)", Options("add_remove", "replace"), "neighbouring relation of the noise scale"),
)


def one_median_guarantee(settings: Mapping[str, Any] | None = None) -> Guarantee:
    """What `private_one_median` guarantees under `settings`: pure ε-DP (δ = 0) for the points P it
    is given, with the neighbouring relation its noise is calibrated to (``one_median_neighbouring``):

    * ``add_remove`` (Δ_b = L): P and P ∪ {x};
    * ``replace`` (Δ_b = 2L): P and P with one point replaced, and also P and P ∪ {x} (the gradient of
      one added point moves b by at most L ≤ 2L, and the Jacobian bound is the same), so a caller whose
      P is a capped sample of a cluster (an added record either enters the sample by replacing one of
      its points, or is added, or is not drawn) gets ε-DP for add/remove of a record.

    Outside the guarantee (stated in the module docstring): a Newton run that misses the gradient
    tolerance raises instead of releasing (a data-dependent event never seen in practice)."""
    s = one_median_settings(settings)
    if s["one_median_neighbouring"] == "replace":
        return Guarantee("ε-DP", "objective perturbation (Kifer et al. 2012) with Δ_b = 2L and output perturbation "
                         "of the solver error", relation="replace one point of P (and add/remove one point)")
    return Guarantee("ε-DP", "objective perturbation (Kifer et al. 2012) with Δ_b = L and output perturbation of "
                     "the solver error", relation="add/remove one point of P")


def one_median_settings(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """The 1-median's own settings from a caller's (possibly partial) settings: its keys of
    `settings`, the declared defaults for the others, checked; other keys are ignored."""
    own = {key: value for key, value in (settings or {}).items() if key in ONE_MEDIAN_SETTINGS}
    return ONE_MEDIAN_SETTINGS.complete(own, where="private_one_median")


def _objective(P, theta, lam, Lam, c, b):
    V = theta[None, :] - P
    s = np.sqrt(np.einsum("ij,ij->i", V, V) + lam * lam)
    return float(s.sum() + 0.5 * Lam * np.dot(theta - c, theta - c) + np.dot(b, theta))


def _gradient(P, theta, lam, Lam, c, b):
    """∇F(θ), with what the Hessian reuses (V = θ − P and 1/s per point)."""
    V = theta[None, :] - P
    s = np.sqrt(np.einsum("ij,ij->i", V, V) + lam * lam)
    inv = 1.0 / s
    return V.T @ inv + Lam * (theta - c) + b, V, inv


def _hessian(V, inv, Lam):
    """∇²F(θ) = (Σ 1/s + Λ)·I − Σ vvᵀ/s³, formed as −Σ vvᵀ/s³ plus the diagonal term (no d × d
    identity; −h + a is a − h exactly, so the bytes are those of the direct formula)."""
    d = V.shape[1]
    H = (V * (inv ** 3)[:, None]).T @ V
    np.negative(H, out=H)
    H.flat[::d + 1] += inv.sum() + Lam
    return H


def minimise_perturbed(P, lam, Lam, c, b, gamma, max_iter) -> tuple[np.ndarray, float, int]:
    """Damped Newton (Armijo backtracking) on the Λ-strongly convex perturbed objective F.

    Returns (θ_a, ‖∇F(θ_a)‖, iterations). Deterministic given its inputs. The Hessian (a d × d
    product over the points, the dear part at large d) is formed only when a step is taken."""
    theta = c.copy()
    f = _objective(P, theta, lam, Lam, c, b)
    for it in range(1, max_iter + 1):
        g, V, inv = _gradient(P, theta, lam, Lam, c, b)
        gn = float(np.linalg.norm(g))
        if gn <= gamma:
            return theta, gn, it - 1
        step = np.linalg.solve(_hessian(V, inv, Lam), g)
        del V
        t = 1.0
        slope = float(np.dot(g, step))
        # Armijo backtracking; the 1e-12·|f| slack stops round-off from blocking the last steps
        while True:
            cand = theta - t * step
            fc = _objective(P, cand, lam, Lam, c, b)
            if fc <= f - 1e-4 * t * slope + 1e-12 * max(1.0, abs(f)) or t < 1e-12:
                break
            t *= 0.5
        theta, f = cand, fc
    g = _gradient(P, theta, lam, Lam, c, b)[0]
    return theta, float(np.linalg.norm(g)), max_iter


def private_one_median(P, epsilon: float, delta: float, bounds, rng: np.random.Generator,
                       accountant: Accountant | None, settings: Mapping[str, Any] | None = None) -> np.ndarray:
    """ε-DP approximate 1-median (geometric median) of the rows of P inside the box [lo, hi]^d.

    `P` (m, d) may be empty (m = 0). Spends exactly `epsilon` (δ = 0) through `accountant`
    (a fresh `Accountant(epsilon)` when None). `settings`: any mapping; its keys of
    `ONE_MEDIAN_SETTINGS` are used (the others are ignored), missing ones take the declared defaults.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] == 0:
        raise DPClustError(f"private_one_median needs a 2-D array (m, d) with d >= 1, got shape {P.shape}")
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise DPClustError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not hi > lo:
        raise DPClustError(f"bounds must satisfy lo < hi, got {bounds!r}")
    require_inside(P, lo, hi, who="private_one_median: P")
    d = P.shape[1]
    s = one_median_settings(settings)
    lam = float(s["one_median_smooth_lambda"])
    fj = float(s["one_median_jacobian_fraction"])
    fo = float(s["one_median_output_fraction"])
    gamma = float(s["one_median_gradient_tol"])
    max_iter = int(s["one_median_max_newton_iter"])
    neighbouring = s["one_median_neighbouring"]
    if not fj + fo < 1:
        raise DPClustError("private_one_median: one_median_jacobian_fraction + one_median_output_fraction must "
                           f"be below 1 (the rest of ε draws the objective noise), got {fj!r} + {fo!r}")
    acc = accountant if accountant is not None else Accountant(epsilon)

    lipschitz, beta, rank = 1.0, 1.0 / lam, d
    eps_j, eps_out = fj * epsilon, fo * epsilon
    eps_b = epsilon - eps_j - eps_out
    try:
        Lam = beta / math.expm1(eps_j / rank)
    except OverflowError:
        Lam = 0.0
    if not (math.isfinite(Lam) and Lam > 0):  # data independent: checked before any charge or draw
        raise DPClustError(
            f"private_one_median: epsilon = {epsilon!r} is too large for d = {d} (the regulariser "
            "Lambda = beta / (exp(eps_J / d) - 1) underflows to 0)")
    sens_b = lipschitz * (1.0 if neighbouring == "add_remove" else 2.0)
    scale_b = laplace_scale(sens_b, eps_b)
    c = np.full(d, 0.5 * (lo + hi))

    acc.spend(eps_j + eps_b, 0.0, label="one-median objective perturbation")
    b = norm_laplace_noise(d, scale_b, rng)
    theta, gnorm, _ = minimise_perturbed(P, lam, Lam, c, b, gamma, max_iter)
    if not gnorm <= gamma:
        raise DPClustError(
            f"private_one_median: Newton did not reach the gradient tolerance {gamma:g} in {max_iter} "
            "iterations; raise one_median_max_newton_iter or one_median_gradient_tol")
    rho = gamma / Lam
    scale_out = laplace_scale(2.0 * rho, eps_out)
    acc.spend(eps_out, 0.0, label="one-median output perturbation")
    # released on the grid of s₂ (coarsened for a public bound 2^8·max(|lo|, |hi|) on |θ|): the release's
    # low-order bits do not carry θ_a's (mechanisms.FLOATING_POINT_GUARANTEE)
    theta = norm_laplace_on_grid(theta, scale_out, rng, bound=256.0 * max(abs(lo), abs(hi)), who="private_one_median")
    return np.clip(theta, lo, hi)
