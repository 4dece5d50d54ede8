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
record's ε spent equals the budget (its δ spent too, except with `lloyd_rounds: 0`, where the Lloyd
stage's share of δ is not spent: an under-spend). A run whose exact sampler exhausts `em_max_trials`
fails after charging, and whether it fails depends on the data: that event is outside the guarantee
(as the 1-median solver's failure, `dpclust.blocks.one_median`). The sampler releases a grid index
(no low-order-bit channel), but its proposals (Gumbel-max over unshifted log masses) and acceptance
tests are floating-point: their deviation from the ideal law is not bounded here and is not in the
run's `floating_point_delta`, which covers the Laplace counts and NoisyAVG only. Declared guarantee
(`guarantee`): (ε, δ)-DP for the relation `RELATION` below with `em_sampler: paper`; `not_dp(...)`
with `em_sampler: authors`.

Choices that bear on the guarantee, stated once:
* **n is public** (the paper's choice, kept): Definition 4's neighbours add or remove a record, but
  n sets d' = ⌊ln(n)/2⌋, the radii r_1 = 1/n, the number of scales m and the experiments'
  δ = n^-1.5. The guarantee therefore holds for add/remove neighbours that are run with the same
  public n (`RELATION`), not for an n read off each neighbour.
* **α = 1** (EXT, the authors' code doubles every radius): the text is silent for its experiments
  and its analysis wants α < 0.618 (Thm 15's multiplicative factor (1 + α)(8 + 12α/(1 − α − α²))
  is finite only for 1 − α − α² > 0). α does not enter the privacy analysis; it changes only the
  grids and the utility.
* **The δ split is ours** (MISSING→REC, equal thirds for the exponential mechanism, NoisyAVG and
  the private Lloyd round, summing to δ): the authors' code uses δ_E = (2n)^-1.5 and n^-1.5/2 for
  each NoisyAVG call, ≈ 1.35·n^-1.5 > δ in total, an overspend we do not copy.

The exponential mechanism as stated, and why Figure 1 does not reproduce: at ε = 1, δ = n^-1.5 the
per-call ε_E is ≈ 0.004, so a grid point covering c points has weight e^{0.002·c} against the uniform
mass |G_i| ≈ 10^10–10^26 of the whole grid; unless one grid point covers ≈ 10^4 points the draw is
a uniform grid point that covers nothing. Runs end with few non-empty clusters (`info`:
`nonempty_clusters`, `empty_picks`). The authors' released code draws differently (see
`authors_sampler`): `em_sampler: authors` reproduces that sampler, which is greedier and NOT
differentially private; it exists only as the labelled diagnostic variant of Figure 1.

Other differences of the authors' code (EXT, facts from `ours.h`; not reproduced, the paper is
followed):
* **Scale ladder**: grid side ε·1000/(n·√d') and radius 1000/n, both doubled while the side is
  ≤ 1 (≈ 7 scales for n = 50k), instead of r_1 = 1/n and m = ⌈log_{1+α}(2n)⌉ = 17 scales; a scale
  also ends early once D' is empty (a data-dependent number of candidates); k/ε picks per scale.
* **Fallback centre**: their code forms clusters only for candidates that received points (fewer
  than k centres when a Voronoi cell is empty) and NoisyAVG falls back to a uniform point of
  [0, max_side]^d when m̂ ≤ 0; Algorithm 3 says a uniform point of the domain B_{Δ/2} when m̂ < 0.
  We output k centres, each empty or small cluster's from the fallback, a uniform point of the
  public box (`blocks.noisy_average`, m̂ ≤ 0).
* **JL normalisation** by the largest projected norm (data-dependent, not private): we use the
  public bound Δ(1 + α)/2; their Laplace proxy counts are rounded towards 0 to integers.

`info` holds, besides public/private quantities, exact non-private diagnostics that the paper does
not release and that are not part of the (ε, δ)-DP output: `scale_trace` (per scale: points
covered, largest cover, picks that covered nothing, sampler trials, and the partition's leaves or
the authors' sampler's branch probabilities), `points_covered`, `empty_picks`, `nonempty_clusters`
(Voronoi cells of the released centres that hold data points) and `projected_to_sphere`.

Interpretations (every one is a declared setting in `SETTINGS` below, with its provenance; the
config config/papers/nguyen2021.yaml holds only named variants' overrides):
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
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpclust import mechanisms
from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, Refused, validate_inputs
from dpclust.baselines import lloyd
from dpclust.blocks.domain import public_box
from dpclust.blocks.noisy_average import noisy_avg_centers
from dpclust.blocks.public_size import PUBLIC_N, public_size
from dpclust.metrics import nearest
from dpclust.nguyen2021.authors_sampler import authors_grid_cover
from dpclust.nguyen2021.grid_cover import AliveTree, private_grid_cover
from dpclust.settings import AnyOf, Constraint, Guarantee, Interval, Options, Setting, Settings, declared, not_dp

#: The neighbouring relation of Thm 16 as we run it (the paper's treatment of n, kept).
RELATION = ("add/remove one record, n public (d' = ⌊ln(n)/2⌋, the radii r_1 = 1/n, the number of scales m "
            "and δ = n^-1.5 are computed from the same public n on both neighbours)")

_SPLIT_KEYS = ("em", "counts", "recovery", "lloyd")
_DELTA_KEYS = ("em", "recovery", "lloyd")


class Fractions(Constraint):
    """A mapping of exactly `keys` to finite fractions >= 0 that sum to 1 (a budget split)."""

    def __init__(self, *keys: str):
        self.keys = keys

    def error(self, value):
        if not isinstance(value, Mapping) or set(value) != set(self.keys):
            return f"must map exactly {list(self.keys)} to fractions, got {value!r}"
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value.values()):
            return f"fractions must be numbers, got {value!r}"
        fr = [float(value[k]) for k in self.keys]
        if any(not (math.isfinite(v) and v >= 0) for v in fr) or abs(sum(fr) - 1.0) > 1e-9:
            return f"fractions must be >= 0 and sum to 1, got {value!r}"
        return None

    def __str__(self):
        return f"fractions of {', '.join(self.keys)} summing to 1"


SETTINGS = Settings(
    public_n=PUBLIC_N,
    alpha=Setting(
        1.0, "EXT authors' code doubles the radius and the grid side at every scale (α = 1); the text is "
        "silent for the experiments (the theory wants α < 0.618)", Interval(float, 0.0, open_lo=True),
        "Alg. 1's ε: radius growth 1 + α, grid side α·r/√d', JL scaling Δ(1 + α)/2"),
    jl_dim=Setting(
        "auto", "STATED §Experiments 'project to ... log(n)/2'; EXT logs: NEW_DIM 5 = ⌊ln n / 2⌋",
        AnyOf(Options("auto"), Interval(int, 1)),
        "JL target dimension d': 'auto' = ⌊ln(n)/2⌋ (at least 1), or an integer; never above d"),
    jl_matrix=Setting(
        "rademacher", "MISSING→REC ±1/√d' entries (norm-preserving in expectation). EXT code uses "
        "±1/(1.5√d') and then divides by the data's maximum norm (not private): we scale by the public "
        "Δ(1 + α)/2 as Alg. 1 says", Options("rademacher"), "entries of the random JL map T"),
    rounds_factor=Setting(
        1.0, "EXT authors' code: k/ε = k picks per scale (the STATED k·log⌈1/α⌉ is 0 at α = 1)",
        Interval(float, 0.0, open_lo=True), "k' = ⌈rounds_factor·k⌉ exponential-mechanism picks per scale"),
    budget_split=Setting(
        {"em": 0.1, "counts": 0.1, "recovery": 0.4, "lloyd": 0.4},
        "EXT authors' code: 0.1 exponential mechanism (all calls, Lemma 17), 0.1 Laplace proxy counts "
        "(ε_L), 0.4 NoisyAVG recovery (ε_G), 0.4 the private Lloyd round; the text is silent (Thm 16 "
        "gives only the sum). We keep the authors' split: it produced Fig. 1",
        Fractions(*_SPLIT_KEYS), "fractions of ε per stage"),
    delta_split=Setting(
        {"em": 0.3333333333333333, "recovery": 0.3333333333333333, "lloyd": 0.3333333333333334},
        "MISSING→REC equal thirds. (EXT code: δ_E = (2n)^-1.5 and δ = n^-1.5/2 for each NoisyAVG call, "
        "which sums to ≈ 1.35·n^-1.5 > δ: an overspend we do not copy)",
        Fractions(*_DELTA_KEYS), "fractions of δ per stage"),
    lloyd_rounds=Setting(
        1, "STATED §Experiments 'one round of differentially private Lloyd's algorithm'", Interval(int, 0),
        "private Lloyd rounds (NoisyAVG) after Alg. 1; they share budget_split.lloyd equally"),
    proxy_lloyd_max_iter=Setting(
        300, "MISSING→REC Step 4 'any non-private k-means algorithm': Lloyd to convergence, capped at "
        "300 iterations (scikit-learn's cap); EXT code runs to convergence", Interval(int, 1),
        "iteration cap of the weighted Lloyd on the proxy dataset D''"),
    proxy_lloyd_tol=Setting(
        0.0, "MISSING→REC stop when no centre moves (tol 0), i.e. Lloyd to convergence as the authors' "
        "code", Interval(float), "movement tolerance of the weighted Lloyd on D'' (negative: never stop early)"),
    em_max_trials=Setting(
        200_000, "REC safety cap on rejection-sampler trials per exponential-mechanism call (a run that "
        "hits it fails with a clear error; never a silent fallback)", Interval(int, 1),
        "trials per call of Algorithm 2's exact sampler before the run fails"),
    em_sampler=Setting(
        "paper", "STATED Alg. 2 / Lemma 8: g drawn with probability ∝ exp(ε_E·|cover[g]|/2) over the whole "
        "grid G_i ('paper', exact). 'authors' = EXT the released code's sampler (ours.h, "
        "get_candidate_centers): covered branch with probability 1 − |G|/(|G|·Σw̃ − K) from weights "
        "normalised by the largest cover, which is almost always taken: NOT differentially private, a "
        "diagnostic variant only (dpclust/nguyen2021/authors_sampler.py)",
        Options("paper", "authors"), "Algorithm 2's sampler: the paper's exponential mechanism or the authors' code's"),
    authors_estimate_draws=Setting(
        64, "REC proposals per pick that estimate the sums T and K of the authors' branch probability "
        "(em_sampler: authors only; the authors enumerate the covered grid points, infeasible at the "
        "paper's first radius 1/n)", Interval(int, 2),
        "estimation proposals per pick of the authors' sampler (unused by the paper's sampler)"),
    authors_max_n=Setting(
        150_000, "REC effort guard of the authors' sampler (em_sampler: authors only): its exact rejection "
        "sampler refines a k-d partition of each scale's grid lazily, and that work grows with n; runs on "
        "more than this many records (the public N) are refused (api.Refused) before any budget is spent. "
        "Measured: about 40 s a run at n = 70,000 (MNIST) and 100,000 (Balcan et al.'s synthetic set); at "
        "n = 245,057 (Skin, k = 10, ε = 3) the second of its 19 scales exhausts em_max_trials, and with "
        "3,000,000 trials one run takes 5.5 min (the leaderboard's 80 runs there: about 7 CPU-hours)",
        Interval(int, 1),
        "largest public N the authors' sampler runs on (unused by the paper's sampler)"),
)


def guarantee(settings: Mapping[str, Any]) -> Guarantee:
    """Thm 16: (ε, δ)-DP for add/remove neighbours with n public (the paper's own treatment: n sets
    d', the radii, m and δ = n^-1.5); with the authors' sampler the exponential-mechanism calls are
    not Lemma 8's mechanism and Lemma 17 no longer applies."""
    if settings.get("em_sampler", "paper") == "authors":
        return not_dp("Algorithm 2 uses the authors' code's sampler: its covered-branch probability "
                      "1 − |G|/(|G|·Σw̃ − K) comes from weights normalised by the largest cover, so the "
                      "uniform mass of the grid almost never wins and one record changes the candidate "
                      "set's law by far more than e^ε (Lemma 8/17 do not apply)", relation=RELATION)
    return Guarantee("(ε, δ)-DP", "Thm 16 with Lemma 17 for the m·k' exponential-mechanism calls; "
                     "NoisyAVG by parallel composition; the private Lloyd round by basic composition",
                     relation=RELATION)


def _fractions(split: Mapping[str, Any], keys) -> dict[str, float]:
    """A split already checked by its `Fractions` constraint, as floats."""
    return {k: float(split[k]) for k in keys}


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


def candidate_set(Y: np.ndarray, n: int, alpha: float, k_prime: int, eps_E: float, rng: np.random.Generator,
                  settings: Mapping[str, Any]):
    """Step 2: the m = ⌈log_{1+α}(2n)⌉ calls of Algorithm 2 on T'(X) = Y (radii r_1 = 1/n, r_{i+1} =
    (1 + α)r_i, grid sides α·r_i/√d', k' picks each, covered points leaving D' across the scales)
    with per-call ε_E, drawn by `settings["em_sampler"]`. The caller charges (ε_em, δ_em) for all
    calls (Lemma 17). Returns (candidates C (m·k', d'), the final `alive` mask of D', per-scale
    trace: exact non-private diagnostics)."""
    m = int(math.ceil(math.log(2.0 * n) / math.log1p(alpha)))
    logit = mechanisms.exponential_logit_scale(1.0, eps_E)     # exp(ε_E·|cover|/2)
    authors = settings["em_sampler"] == "authors"
    alive = np.ones(Y.shape[0], dtype=bool)
    index = AliveTree(Y, alive)  # exact covers of the remaining points, shared across the scales
    cands, scale_info = [], []
    r = 1.0 / n
    max_trials = int(settings["em_max_trials"])
    for _ in range(m):
        t = alpha * r / math.sqrt(Y.shape[1])
        if authors:
            C_i, counts, trials, extra = authors_grid_cover(Y, alive, t, r, k_prime, logit, rng, index, max_trials,
                                                            int(settings["authors_estimate_draws"]))
        else:
            C_i, counts, trials, leaves = private_grid_cover(Y, alive, t, r, k_prime, logit, rng, max_trials, index)
            extra = {"leaves": int(leaves)}
        cands.append(C_i)
        scale_info.append({"r": r, "covered": int(counts.sum()), "max_cover": int(counts.max()),
                           "empty_picks": int((counts == 0).sum()), "trials": int(trials), **extra})
        r *= 1.0 + alpha
    return np.concatenate(cands), alive, scale_info


def refuse_above_authors_max_n(n: int, settings: Mapping[str, Any]) -> None:
    """The authors' sampler's effort guard on the public N (`authors_max_n`): `api.Refused` above it,
    before any budget is spent; the paper's sampler is never refused."""
    if settings["em_sampler"] == "authors" and n > int(settings["authors_max_n"]):
        raise Refused(f"the authors' sampler on N = {n:,} records exceeds authors_max_n = "
                      f"{int(settings['authors_max_n']):,} (an effort guard: its exact rejection sampler's work "
                      "grows with N; raise the setting where time allows)")


@declared(SETTINGS, guarantee=guarantee)
def nguyen(X, k, epsilon, delta, rng: np.random.Generator, settings: Mapping[str, Any]) -> ClusteringResult:
    """Algorithm 1 (+ private Lloyd rounds): (ε, δ)-DP k-means centres in the original space.
    `settings` are the declared `SETTINGS` (defaults filled and checked by `@declared`) plus the
    runner's `bounds`."""
    X = validate_inputs(X, k, epsilon, delta)
    if not delta or delta <= 0:
        raise DPClustError("Nguyen et al.'s Algorithm 1 is (ε, δ)-DP: delta must be > 0 (the paper uses n^-1.5)")
    lo, hi = public_box(settings, X)
    n, d = public_size(settings, X), X.shape[1]   # n: the public N (d', r_1 = 1/n, the m scales)
    refuse_above_authors_max_n(n, settings)
    alpha = float(settings["alpha"])
    split = _fractions(settings["budget_split"], _SPLIT_KEYS)
    dsplit = _fractions(settings["delta_split"], _DELTA_KEYS)
    lloyd_rounds = int(settings["lloyd_rounds"])
    if lloyd_rounds == 0 and split["lloyd"] > 0:
        raise DPClustError("lloyd_rounds must be > 0 when budget_split.lloyd > 0")
    for key in ("em", "counts", "recovery"):
        if split[key] <= 0:
            raise DPClustError(f"budget_split.{key} must be > 0 (every stage of Alg. 1 is private)")
    for key in ("em", "recovery"):
        if dsplit[key] <= 0:
            raise DPClustError(f"delta_split.{key} must be > 0")
    if lloyd_rounds > 0 and (split["lloyd"] <= 0 or dsplit["lloyd"] <= 0):
        raise DPClustError("the private Lloyd rounds need budget_split.lloyd > 0 and delta_split.lloyd > 0")
    rounds_factor = float(settings["rounds_factor"])
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
    dprime = jl_dimension(n, d, settings["jl_dim"])
    Y, emb = embed(X, (lo, hi), alpha, dprime, rng, str(settings["jl_matrix"]))
    diameter = emb["diameter"]

    # Step 2: m calls of Algorithm 2; Lemma 17 prices all of them together ----------------------
    eps_E = 2.0 * eps_em / (math.e * math.log(1.0 / delta_em))  # per call (Lemma 17 / Thm 16)
    acc.spend(eps_em, delta_em, label=f"Alg.2 exponential mechanism, {m}x{k_prime} calls at "
                                      f"eps_E={eps_E:.6g} (Lemma 17)")
    cand, alive, scale_info = candidate_set(Y, n, alpha, k_prime, eps_E, rng, settings)

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
        res = lloyd(cand, cand[init_idx], max_iter=int(settings["proxy_lloyd_max_iter"]),
                    tol=float(settings["proxy_lloyd_tol"]), weights=proxy_w)
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

    info = dict(jl_dim=emb["jl_dim"], projected_to_sphere=emb["projected_to_sphere"], scales=m,
                rounds_per_scale=k_prime, eps_E_per_call=eps_E, candidates=int(cand.shape[0]),
                positive_counts=int(pos.size), points_covered=int((~alive).sum()),
                empty_picks=int(sum(s["empty_picks"] for s in scale_info)),
                nonempty_clusters=int(np.unique(nearest(X, centers)).size), scale_trace=scale_info)
    if settings["em_sampler"] == "authors":
        # NOT DP: the accountant's charges are nominal (the sampler is not Lemma 8's mechanism). The run
        # reports the nominal (ε, δ) it was given (the pipeline's convention for every configured variant
        # that takes a budget, tests/test_conformance.py) with no guarantee: the record's guarantee is
        # "not DP as published" and the items never report it as an ε.
        return ClusteringResult(
            centers=np.asarray(centers, dtype=float), epsilon_spent=acc.spent_epsilon, delta_spent=acc.spent_delta,
            iterations=lloyd_rounds, ledger=[[c.label, c.epsilon, c.delta] for c in acc.ledger],
            info=info | {"nominal_epsilon": acc.spent_epsilon, "nominal_delta": acc.spent_delta,
                         "privacy_note": "NOT DP: " + guarantee(settings).note})
    return ClusteringResult.from_accountant(centers, acc, iterations=lloyd_rounds, **info)
