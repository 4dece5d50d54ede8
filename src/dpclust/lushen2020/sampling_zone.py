"""Sampling zones of Lu & Shen (arXiv 2002.01043), §5 and Algorithm 2, and the ExpDP draw in them (§6.1).

Everything here is vectorised over the k clusters of one iteration: arrays of shape (k, d).

Notation (Table 1 / §4–§6): ``S_prev`` = Ŝ^(t−1) (the previous *private* centroids, §4.1 step 1),
``S`` = S^(t) (the means of the clusters C^(t) assigned with Ŝ^(t−1)), ``a = ‖S_prev − S‖`` (radius
of the convergent zone, Definition 5), ``X`` = the orientation controller X^(t) (Definition 6).

Algorithm 2 (both strategies)
* Posterior (past knowledge, §5.2, Alg. 2 lines 4–6): Y = S + (S − S_prev), the point where the
  line S_prev→S leaves the convergent zone (the ball of radius a around S); X = Y turned about S
  on the zone's border by an angle γ with Pr[γ = r] ∝ exp(1 − 2|r|/π), r ∈ [0, π/2] (§5.2).
  Interpretation (d ≥ 2): the turn is in the plane spanned by u = (S − S_prev)/a and a direction v
  drawn uniformly among the unit vectors orthogonal to u (in 2-D: a random sign), so X is uniform on
  the cone's circle of half-angle γ.
* Prior (past + future knowledge, §5.3, Alg. 2 line 2): X = S^(t+1), the mean of cluster i after one
  more Lloyd re-assignment with the means S^(t) (all k clusters). Interpretation (Definition 5 says a
  sampling zone is a subset of the convergent zone, and the proof of Thm 3 assumes
  ‖S^(t+1) − S^(t)‖ < a, which Lloyd does not guarantee): when ‖X − S‖ > a we move X onto the
  border along the same ray (setting ``prior_clip``); when cluster i would be empty or X = S we fall
  back to the Posterior controller for that cluster (setting ``prior_fallback``).
* Zone (Alg. 2 lines 8–10, §6.1): centre P = S + λ(X − S) with Pr[λ = r] ∝ exp(2 − 2r), r ∈ (1/2, 1)
  (line 8's "midpoint of M X" is read as the midpoint M of S X), radius ρ = ‖X − P‖ = (1 − λ)‖X − S‖.
  Because λ > 1/2, S lies outside the zone and the zone lies inside the convergent zone.

ExpDP in the zone (§6.1): Ŝ has density ∝ exp(ε·q/(2Δq)) over the points of the zone (Lebesgue
measure on the d-ball; interpretation: the paper samples "a pair (δ, α)" as coordinates of a point
of the zone), with q(δ, α) = (1 − δ) + (1 − 2|α|/π), δ = ‖Ŝ − S‖/a, α = ∠Ŝ S X (the unsigned angle in
d > 2, so given (δ, α) the direction is uniform on the cone's (d−2)-sphere), Δq = 2 (STATED). The
draw is exact: uniform proposals in the ball accepted with probability exp(c·(q − q_max)), c =
`exponential_logit_scale(Δq, ε)`, q_max = 2 − dist(S, zone)/a ≥ q on the whole zone (`zone_score_bound`;
an envelope of 2 made the acceptance decay like exp(−c·dist(S, zone)/a), which failed for large ε). The
data-independent draws γ and λ are not
charged: the paper does not charge them (they are not calibrated to ε).

Privacy note (stated in the report): Theorem 5 charges only the ExpDP draws and the final counts.
The zone itself (P, ρ) is a deterministic function of S^(t) and public randomness and is published
(Alg. 1 line 9); the ExpDP is ε-DP *given a fixed zone* (scores lie in [0, 2] for every dataset
whose convergent zone contains it), which is what the audit tests check. We implement the paper as
written and do not claim more. Two further limits of that "given a fixed zone" statement: the density
is taken with respect to volume on the ball (§6.1 reads "sampling a pair (δ, α)"; a density on (δ, α)
would weight points by a data-dependent Jacobian ∝ 1/(a^d δ^(d−1) sin^(d−2) α), which no exponential
mechanism argument covers, so the volume is the sound reading), and Ŝ is the raw double P + r·g, not
released on a grid (`mechanisms.FLOATING_POINT_GUARANTEE` does not cover it): Algorithm 1 is not DP
as published in any case (`algorithm.GUARANTEE`).
"""

from __future__ import annotations

import math

import numpy as np

from dpclust import mechanisms

#: Sensitivity of the score q (STATED §6.1: "Δq = 2").
SCORE_SENSITIVITY = 2.0


def truncated_exponential(rng: np.random.Generator, rate: float, lo: float, hi: float, size) -> np.ndarray:
    """Exact draws with density ∝ exp(−rate·(r − lo)) on [lo, hi] by inverting the CDF."""
    u = rng.random(size)
    span = hi - lo
    return lo - np.log1p(-u * (-math.expm1(-rate * span))) / rate


def sample_lambda(rng: np.random.Generator, size) -> np.ndarray:
    """λ with Pr[λ = r] ∝ exp(2 − 2r), r ∈ (1/2, 1) (§6.1): rate 2 on (1/2, 1)."""
    return truncated_exponential(rng, 2.0, 0.5, 1.0, size)


def sample_gamma(rng: np.random.Generator, size) -> np.ndarray:
    """γ with Pr[γ = r] ∝ exp(1 − 2|r|/π), r ∈ [0, π/2] (§5.2): rate 2/π on [0, π/2]."""
    return truncated_exponential(rng, 2.0 / math.pi, 0.0, math.pi / 2.0, size)


def random_orthogonal_unit(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows v uniform on the unit vectors orthogonal to the unit rows of u (d ≥ 2)."""
    g = rng.standard_normal(u.shape)
    g -= np.einsum("ij,ij->i", g, u)[:, None] * u
    norm = np.linalg.norm(g, axis=1, keepdims=True)
    bad = norm[:, 0] < 1e-12
    if bad.any():  # measure-zero event: redraw those rows
        g[bad] = random_orthogonal_unit(u[bad], rng)
        norm[bad] = 1.0
    return g / norm


def posterior_controller(S: np.ndarray, S_prev: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Alg. 2 lines 4–6: Y on the convergent zone's border, turned by γ (rows with a > 0)."""
    diff = S - S_prev
    a = np.linalg.norm(diff, axis=1, keepdims=True)
    u = diff / a
    gamma = sample_gamma(rng, S.shape[0])[:, None]
    if S.shape[1] == 1:
        return S + a * u  # 1-D: the only direction on the border ahead of S (γ has no plane to turn in)
    v = random_orthogonal_unit(u, rng)
    return S + a * (np.cos(gamma) * u + np.sin(gamma) * v)


def make_zone(S: np.ndarray, X: np.ndarray, rng: np.random.Generator):
    """Alg. 2 lines 8–10: centre P = S + λ(X − S), radius ρ = (1 − λ)‖X − S‖; returns (P, ρ, λ)."""
    lam = sample_lambda(rng, S.shape[0])
    P = S + lam[:, None] * (X - S)
    rho = (1.0 - lam) * np.linalg.norm(X - S, axis=1)
    return P, rho, lam


def score(points: np.ndarray, S: np.ndarray, a: np.ndarray, X: np.ndarray) -> np.ndarray:
    """q(δ, α) = (1 − δ) + (1 − 2|α|/π) for points (k, m, d) of cluster zones (§6.1)."""
    w = points - S[:, None, :]
    dist = np.linalg.norm(w, axis=2)
    delta = dist / a[:, None]
    o = X - S
    o_norm = np.linalg.norm(o, axis=1)
    cos = np.einsum("kmd,kd->km", w, o) / np.maximum(dist * o_norm[:, None], 1e-300)
    alpha = np.arccos(np.clip(cos, -1.0, 1.0))
    return (1.0 - delta) + (1.0 - 2.0 * alpha / math.pi)


def uniform_in_balls(P: np.ndarray, rho: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """m uniform points in each d-ball B(P_i, ρ_i): shape (k, m, d)."""
    k, d = P.shape
    g = rng.standard_normal((k, m, d))
    g /= np.maximum(np.linalg.norm(g, axis=2, keepdims=True), 1e-300)
    radius = rho[:, None] * rng.random((k, m)) ** (1.0 / d)
    return P[:, None, :] + radius[..., None] * g


def zone_score_bound(P, rho, S, a) -> np.ndarray:
    """An upper bound of q over each zone B(P_i, ρ_i): q ≤ 2 − δ_min with δ_min = dist(S_i, zone)/a_i
    (α ≥ 0 everywhere). It is the zone's supremum of q when P_i lies on the ray from S_i towards the
    controller (Alg. 2 always builds it so); a relative slack of 1e-9 on δ_min keeps it a bound in
    floating point."""
    gap = np.maximum(np.linalg.norm(P - S, axis=1) - rho, 0.0)
    return 2.0 - (gap / a) * (1.0 - 1e-9)


def expdp_in_zones(P, rho, S, a, X, epsilon: float, rng: np.random.Generator, batch: int = 64,
                   max_rounds: int = 100_000) -> np.ndarray:
    """Exact draw of Ŝ_i with density ∝ exp(ε q / (2Δq)) on each zone B(P_i, ρ_i) (rejection).

    The caller charges ε (parallel composition over clusters) *before* calling this.
    """
    c = mechanisms.exponential_logit_scale(SCORE_SENSITIVITY, epsilon)
    k, d = P.shape
    q_max = zone_score_bound(P, rho, S, a)
    out = np.empty((k, d))
    todo = np.arange(k)
    for _ in range(max_rounds):
        if todo.size == 0:
            return out
        pts = uniform_in_balls(P[todo], rho[todo], batch, rng)
        q = score(pts, S[todo], a[todo], X[todo])
        qm = q_max[todo, None]
        accept = rng.random(q.shape) < np.exp(c * (np.minimum(q, qm) - qm))
        hit = accept.any(axis=1)
        first = np.argmax(accept, axis=1)
        idx = np.nonzero(hit)[0]
        out[todo[idx]] = pts[idx, first[idx]]
        todo = todo[~hit]
    raise RuntimeError("rejection sampling in the sampling zone did not finish (acceptance too low)")
