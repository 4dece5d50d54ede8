"""Algorithm 1 of Nguyen, Chaturvedi & Xu (AAAI 2021), "Private k-means", plus the one round of
private Lloyd the experiments add (§Experiments, "Implementation details").

Steps (Alg. 1):
1. Centre X on the public box centre c (so D ⊂ B(c, Δ/2), Δ = (hi − lo)·√d the public diameter),
   project with a random JL map T to d' = ⌊ln(n)/2⌋ dimensions (§Experiments: "log(n)/2"), divide by
   Δ(1 + α)/2 and project onto the unit ball (Alg. 1, Step 1).
2. Radii r_1 = 1/n, r_{i+1} = (1 + α) r_i for i = 1..m = ⌈log_{1+α}(2n)⌉, grid sides t_i = α r_i/√d';
   Algorithm 2 (`grid_cover`) picks k' grid points per scale with the exponential mechanism,
   removing covered points from D' across scales.
3. Assign every point of D' to its nearest candidate, n'_c = n_c + Lap(1/ε_L) (the count vector has
   L1 sensitivity 1, proof of Thm 16); D'' = candidates weighted by max(n'_c, 0).
4. Weighted Lloyd on D'' (non-private, post-processing), clusters D'_i = Voronoi cells of its centres
   in D'-space, centres by Algorithm 3 (NoisyAVG) in the original space with (ε_G, δ_G).
5. (§Experiments) `lloyd_rounds` rounds of private Lloyd: Voronoi cells of the current centres in the
   original space, new centres by NoisyAVG with (ε_Lloyd, δ_Lloyd)/rounds each.

Privacy (Thm 16, Lemma 17): all m·k' exponential-mechanism calls together are
(e·ε_E·ln(1/δ_E)/2, δ_E)-DP, so the per-call ε_E = 2·ε_em/(e·ln(1/δ_E)) for the EM share ε_em;
counts cost ε_L; NoisyAVG (ε_G, δ_G) by parallel composition over the clusters; the Lloyd rounds
add their own (ε, δ) by basic composition. The shares are the named settings `budget_split`
(fractions of ε) and `delta_split` (fractions of δ); the accountant records each stage and the run
record's (ε, δ) spent equals the budget.

Public quantities (the paper's choice, kept): n is treated as public although Definition 4's
neighbours add or remove a record; it sets d' = ⌊ln(n)/2⌋, the radii r_1 = 1/n, the number of scales m
and the experiments' δ = n^-1.5. `info` holds, besides public/private quantities, exact non-private
diagnostics that the paper does not release and that are not part of the (ε, δ)-DP output:
`scale_trace` (per scale: points covered, largest cover, sampler trials and leaves), `points_covered`
and `projected_to_sphere`.

Interpretations (every one is a named setting in config/papers/nguyen2021.yaml):
* `alpha` is the ε of Alg. 1 (radius growth 1 + α, grid side α r/√d', JL scaling Δ(1 + α)/2).
  The authors' code doubles radii (α = 1, EXT); the theory wants α < 0.618.
* The JL map is Rademacher ±1/√d' (REC; norm-preserving in expectation). The authors' code uses
  ±1/(1.5√d') and then divides by the *maximum projected norm* (data-dependent, not private); we
  scale by the public bound Δ(1 + α)/2 as Alg. 1 says and project points outside onto the sphere.
  No projection when d ≤ d' (the map would not reduce the dimension; the authors skip it for d ≤ 5).
* k' = ⌈rounds_factor·k⌉ picks per scale (the paper's k·log⌈1/α⌉ is 0 at α = 1; the authors' code
  uses k/ε = k picks, EXT).
* D'' uses the noisy counts as weights, clamped at 0 (the authors' code drops counts ≤ 0).
* Weighted Lloyd on D'' starts from k distinct candidates drawn ∝ weight ("k random points of D''",
  as in the authors' code) and runs to convergence or `proxy_lloyd_max_iter`.
* The private Lloyd round uses NoisyAVG (the paper's "best method we know for privately computing
  the average"); the authors' code spends 0.4ε on one such round.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from .. import mechanisms
from ..accountant import Accountant
from ..api import ClusteringResult, DPClustError, estimator_for, validate_inputs
from ..baselines import lloyd
from ..metrics import nearest
from .grid_cover import private_grid_cover
from ..blocks.domain import public_box
from ..blocks.noisy_average import noisy_avg_centers

DEFAULTS: dict[str, Any] = {
    "alpha": 1.0,
    "jl_dim": "auto",                 # "auto" = floor(ln(n)/2), or an int
    "jl_matrix": "rademacher",
    "rounds_factor": 1.0,
    "budget_split": {"em": 0.1, "counts": 0.1, "recovery": 0.4, "lloyd": 0.4},
    "delta_split": {"em": 1 / 3, "recovery": 1 / 3, "lloyd": 1 / 3},
    "lloyd_rounds": 1,
    "proxy_lloyd_max_iter": 300,
    "proxy_lloyd_tol": 0.0,
    "em_max_trials": 200_000,
}

_SPLIT_KEYS = ("em", "counts", "recovery", "lloyd")
_DELTA_KEYS = ("em", "recovery", "lloyd")


def _setting(settings: Mapping[str, Any], key: str):
    if key in settings:
        return settings[key]
    if key in DEFAULTS:
        return DEFAULTS[key]
    raise DPClustError(f"setting {key!r} is missing")


def _fractions(split, keys, what) -> dict[str, float]:
    if not isinstance(split, Mapping) or set(split) != set(keys):
        raise DPClustError(f"{what} must map exactly {list(keys)} to fractions, got {split!r}")
    fr = {k: float(split[k]) for k in keys}
    if any(not (math.isfinite(v) and v >= 0) for v in fr.values()) or abs(sum(fr.values()) - 1.0) > 1e-9:
        raise DPClustError(f"{what} fractions must be >= 0 and sum to 1, got {split!r}")
    return fr


def jl_dimension(n: int, d: int, jl_dim) -> int:
    """d' = ⌊ln(n)/2⌋ (at least 1) for "auto", never above d."""
    if jl_dim == "auto":
        dp = max(1, int(math.floor(math.log(n) / 2.0)))
    elif isinstance(jl_dim, (int, np.integer)) and not isinstance(jl_dim, bool) and jl_dim >= 1:
        dp = int(jl_dim)
    else:
        raise DPClustError(f"jl_dim must be 'auto' or a positive integer, got {jl_dim!r}")
    return min(dp, d)


def embed(X: np.ndarray, bounds, alpha: float, dprime: int, rng: np.random.Generator,
          matrix: str = "rademacher") -> tuple[np.ndarray, dict]:
    """Step 1: T'(X) ⊂ unit ball of R^{d'} using only public quantities (bounds, n, d)."""
    lo, hi = bounds
    n, d = X.shape
    diameter = (hi - lo) * math.sqrt(d)
    Xc = X - 0.5 * (lo + hi)
    if dprime < d:
        if matrix != "rademacher":
            raise DPClustError(f"unknown jl_matrix {matrix!r} (use 'rademacher')")
        T = (rng.integers(0, 2, size=(d, dprime)) * 2 - 1) / math.sqrt(dprime)
        Y = Xc @ T
    else:
        Y = Xc.copy()
    Y /= diameter * (1.0 + alpha) / 2.0
    norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    outside = norms > 1.0
    Y[outside] /= norms[outside, None]
    return Y, {"jl_dim": int(Y.shape[1]), "projected_to_sphere": int(outside.sum()),
               "diameter": diameter}


def nguyen(X, k, epsilon, delta, rng: np.random.Generator, settings: Mapping[str, Any]) -> ClusteringResult:
    """Algorithm 1 (+ private Lloyd rounds): (ε, δ)-DP k-means centres in the original space."""
    X = validate_inputs(X, k, epsilon, delta)
    if not delta or delta <= 0:
        raise DPClustError("Nguyen et al.'s Algorithm 1 is (ε, δ)-DP: delta must be > 0 (the paper uses n^-1.5)")
    lo, hi = public_box(settings, X)
    n, d = X.shape
    alpha = float(_setting(settings, "alpha"))
    if not (math.isfinite(alpha) and alpha > 0):
        raise DPClustError(f"alpha must be > 0, got {alpha!r}")
    split = _fractions(_setting(settings, "budget_split"), _SPLIT_KEYS, "budget_split")
    dsplit = _fractions(_setting(settings, "delta_split"), _DELTA_KEYS, "delta_split")
    lloyd_rounds = int(_setting(settings, "lloyd_rounds"))
    if lloyd_rounds < 0 or (lloyd_rounds == 0 and split["lloyd"] > 0):
        raise DPClustError("lloyd_rounds must be >= 0, and > 0 when budget_split.lloyd > 0")
    for key in ("em", "counts", "recovery"):
        if split[key] <= 0:
            raise DPClustError(f"budget_split.{key} must be > 0 (every stage of Alg. 1 is private)")
    for key in ("em", "recovery"):
        if dsplit[key] <= 0:
            raise DPClustError(f"delta_split.{key} must be > 0")
    if lloyd_rounds > 0 and (split["lloyd"] <= 0 or dsplit["lloyd"] <= 0):
        raise DPClustError("the private Lloyd rounds need budget_split.lloyd > 0 and delta_split.lloyd > 0")
    rounds_factor = float(_setting(settings, "rounds_factor"))
    k_prime = int(math.ceil(rounds_factor * k))
    if k_prime < 1:
        raise DPClustError(f"rounds_factor·k must be >= 1, got {rounds_factor}·{k}")
    m = int(math.ceil(math.log(2.0 * n) / math.log1p(alpha)))  # scales (public: n, α)
    if m * k_prime < k:  # checked before any charge: Step 4 needs k candidates to start Lloyd
        raise DPClustError(f"only m·k' = {m}·{k_prime} grid candidates for k = {k} centres: raise rounds_factor")

    acc = Accountant(epsilon, delta)
    eps_em, delta_em = epsilon * split["em"], delta * dsplit["em"]
    eps_L = epsilon * split["counts"]
    eps_G, delta_G = epsilon * split["recovery"], delta * dsplit["recovery"]
    eps_ll, delta_ll = epsilon * split["lloyd"], delta * dsplit["lloyd"]

    # Step 1 ------------------------------------------------------------------------------------
    dprime = jl_dimension(n, d, _setting(settings, "jl_dim"))
    Y, emb = embed(X, (lo, hi), alpha, dprime, rng, str(_setting(settings, "jl_matrix")))
    diameter = emb["diameter"]

    # Step 2: m calls of Algorithm 2; Lemma 17 prices all of them together ----------------------
    eps_E = 2.0 * eps_em / (math.e * math.log(1.0 / delta_em))  # per call (Lemma 17 / Thm 16)
    logit = mechanisms.exponential_logit_scale(1.0, eps_E)     # exp(ε_E·|cover|/2)
    acc.spend(eps_em, delta_em, label=f"Alg.2 exponential mechanism, {m}x{k_prime} calls at "
                                      f"eps_E={eps_E:.6g} (Lemma 17)")
    alive = np.ones(n, dtype=bool)
    cands, scale_info = [], []
    r = 1.0 / n
    max_trials = int(_setting(settings, "em_max_trials"))
    for i in range(m):
        t = alpha * r / math.sqrt(Y.shape[1])
        C_i, counts, trials, leaves = private_grid_cover(Y, alive, t, r, k_prime, logit, rng, max_trials)
        cands.append(C_i)
        scale_info.append({"r": r, "covered": int(counts.sum()), "max_cover": int(counts.max()),
                           "trials": int(trials), "leaves": int(leaves)})
        r *= 1.0 + alpha
    cand = np.concatenate(cands)

    # Step 3: noisy counts -> proxy dataset D'' --------------------------------------------------
    lab = nearest(Y, cand)
    n_c = np.bincount(lab, minlength=cand.shape[0]).astype(float)
    noisy = mechanisms.laplace_mechanism(n_c, 1.0, eps_L, rng, accountant=acc, label="proxy counts (Alg.1 Step 3)")
    w = np.maximum(noisy, 0.0)

    # Step 4: Lloyd on D'' (post-processing), NoisyAVG per cluster -------------------------------
    pos = np.flatnonzero(w > 0)
    if pos.size >= k:
        init_idx = rng.choice(cand.shape[0], size=k, replace=False, p=w / w.sum())
    else:
        rest = np.setdiff1d(np.arange(cand.shape[0]), pos)
        init_idx = np.concatenate([pos, rng.choice(rest, size=k - pos.size, replace=False)])
    proxy_w = np.where(w > 0, w, 0.0)
    if proxy_w.sum() > 0:
        res = lloyd(cand, cand[init_idx], max_iter=int(_setting(settings, "proxy_lloyd_max_iter")),
                    tol=float(_setting(settings, "proxy_lloyd_tol")), weights=proxy_w)
        S2 = res.centers
    else:
        S2 = cand[init_idx]
    labels = nearest(Y, S2)
    centers = noisy_avg_centers(X, labels, k, eps_G, delta_G, diameter, (lo, hi), rng, acc,
                                label="NoisyAVG recovery (Alg.3)")

    # Experiments: private Lloyd rounds ----------------------------------------------------------
    for j in range(lloyd_rounds):
        labels = nearest(X, centers)
        centers = noisy_avg_centers(X, labels, k, eps_ll / lloyd_rounds, delta_ll / lloyd_rounds,
                                    diameter, (lo, hi), rng, acc, label=f"private Lloyd round {j + 1} (NoisyAVG)")

    return ClusteringResult.from_accountant(
        centers, acc, iterations=lloyd_rounds,
        jl_dim=emb["jl_dim"], projected_to_sphere=emb["projected_to_sphere"], scales=m,
        rounds_per_scale=k_prime, eps_E_per_call=eps_E, candidates=int(cand.shape[0]),
        positive_counts=int(pos.size), points_covered=int((~alive).sum()), scale_trace=scale_info)


Nguyen = estimator_for(nguyen, DEFAULTS, "Nguyen")
