"""Algorithm 2 of Balcan et al. (ICML 2017): private candidate set of centres, and the JL step of
Algorithm 4.

Algorithm 2: repeat T times — draw a shift v ~ U([−Λ, Λ]^p), run Algorithm 1 (`private_partition`)
on the cube Q_v with budget ε/T and failure probability δ/T, and take the union of the outputs.
Sequential composition over the T repetitions gives ε-DP (Thm 4).

Interpretations (named settings):
* `candidate_repetitions`: the theory uses T = 27·k·ln(n/δ) (STATED Alg. 2); the experiments
  "repeat the candidate set construction routine only k times" (STATED §7) → rule `k` (default).
* `initial_cube_half_side`: Alg. 2 writes Q_v = [−Λ, Λ]^d + v, which need not contain B(0, Λ) once
  shifted, while Alg. 1 requires X ⊆ Q. We use Q_v = [−hΛ, hΛ]^p + v with h = 2 (REC), the smallest
  cube that contains B(0, Λ) for every shift v ∈ [−Λ, Λ]^p. (Points outside Q are never counted,
  so h only affects utility, never privacy.)
* Candidates are projected onto the ball B(0, Λ) that contains every (clipped) projected point. This
  is post-processing of a private output and never increases any point's distance to a candidate
  (projection onto a convex set containing the point is non-expansive), and it makes the local-swap
  sensitivity bound 4Λ² of Thm 6 valid (cube centres of a shifted cube can lie outside B(0, Λ)).

JL projection (Alg. 4): y = G x / √p with G ~ N(0, 1)^{p×d} (the authors' MATLAB scaling, which
preserves squared distances in expectation; Alg. 4 prints 1/√d, which only rescales the projected
space); p = ⌊ln(n)/2⌋ in the experiments (STATED §7 "p = log(n)/2"; floor and natural log EXT), and
no projection when d ≤ 5 (EXT). Projected points are clipped to the ball B(0, ρΛ) (ρ =
`projected_radius_factor`, REC 1): a per-point map, so it preserves DP, and it enforces the
assumption "X ⊆ B(0, Λ)" of Algs. 1–3 that a Gaussian projection only satisfies approximately.
"""

from __future__ import annotations

import math

import numpy as np

from dpclust.balcan2017.partition import private_partition
from dpclust.blocks.public_size import public_size


def projection_dimension(n: int, d: int, rule: str, no_projection_max_d: int) -> int:
    """p of the JL step: `half_log_n` → ⌊ln(n)/2⌋ (experiments), `eight_log_n` → ⌈8 ln n⌉ (Alg. 4);
    0 means "no projection" (d ≤ no_projection_max_d, or p ≥ d)."""
    if d <= no_projection_max_d:
        return 0
    if rule == "half_log_n":
        p = math.floor(0.5 * math.log(n))
    elif rule == "eight_log_n":
        p = math.ceil(8.0 * math.log(n))
    else:
        raise ValueError(f"unknown projection rule {rule!r} (use 'half_log_n' or 'eight_log_n')")
    p = max(p, 1)
    return 0 if p >= d else p


def clip_rows(Y: np.ndarray, radius: float) -> np.ndarray:
    """Scale every row with norm > radius back onto the sphere of that radius (in place)."""
    norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    over = norms > radius
    if over.any():
        Y[over] *= (radius / norms[over])[:, None]
    return Y


def jl_project(Xc: np.ndarray, p: int, radius: float, factor: float, rng: np.random.Generator):
    """Project centred data (n, d) to p dimensions (p = 0: identity) and clip to B(0, factor·radius).

    Returns (Y, G, projected radius); G is None without projection.
    """
    if p == 0:
        Y = Xc.copy()
        return clip_rows(Y, radius), None, radius
    G = rng.standard_normal((p, Xc.shape[1]))
    Y = Xc @ G.T
    Y /= math.sqrt(p)
    R = factor * radius
    return clip_rows(Y, R), G, R


def repetitions(rule, k: int, n: int, delta: float) -> int:
    """T of Alg. 2: `k` (experiments, STATED §7), `theory` (27 k ln(n/δ), STATED Alg. 2), or an int."""
    if rule == "k":
        return int(k)
    if rule == "theory":
        return int(math.ceil(27 * k * math.log(n / delta)))
    if isinstance(rule, int) and rule >= 1:
        return rule
    raise ValueError(f"unknown candidate_repetitions {rule!r} (use 'k', 'theory' or a positive int)")


def candidate_set(Y: np.ndarray, k: int, epsilon: float, delta: float, radius: float,
                  rng: np.random.Generator, accountant, settings) -> dict:
    """Algorithm 2 on projected points `Y` ⊆ B(0, radius). Spends ε through `accountant`.

    Returns `centers` (m, p) (deduplicated, projected onto B(0, radius)) and per-repetition
    diagnostics (`sizes`, `levels`, `gamma`, `eps_level`).
    """
    n, p = public_size(settings, Y), Y.shape[1]   # n: the public N (T, and Alg. 1's ε', γ, depth)
    T = repetitions(settings["candidate_repetitions"], k, n, delta)
    h = float(settings["initial_cube_half_side"])
    eps_t, delta_t = epsilon / T, delta / T
    out, sizes, levels, shifts = [], [], [], []
    gamma = eps_level = None
    for _ in range(T):
        v = rng.uniform(-radius, radius, size=p)
        part = private_partition(Y, eps_t, delta_t, v - h * radius, 2.0 * h * radius, rng, accountant,
                                 gamma_factor=float(settings["gamma_factor"]), level_rule=settings["level_rule"],
                                 n_param=n)
        out.append(part["centers"])
        sizes.append(int(part["centers"].shape[0]))
        levels.append(int(len(part["active_per_level"])))
        shifts.append(v)
        gamma, eps_level = part["gamma"], part["eps_level"]
    C = np.unique(np.concatenate(out, axis=0), axis=0)
    clip_rows(C, radius)
    return {"centers": C, "repetitions": T, "sizes": sizes, "levels": levels,
            "gamma": gamma, "eps_level": eps_level}
