"""EUGkM (Su et al. 2016 §4.2 and §4.2.1, Eq. 4): k-means on an extended-uniform-grid synopsis.

Synopsis (§4.2): the public box [lo, hi]^d is cut into a uniform grid of m^d cells and every cell
releases its count plus Lap(1/ε) (a count histogram has L1 sensitivity 1 under add/remove, §4.2.1).
The number of cells follows Eq. (4): M = (Nε/θ)^{2d/(2+d)} with θ = `theta` (STATED "θ = 10 works
well"); m cells per dimension with `cells_rounding` (MISSING→REC ``round_log``: the m whose total
m^d is nearest to M on a log scale; the inventory's ``ceil`` is available but inflates the total by
up to (1 + M^{-1/d})^d — 27× at d = 10, ε = 0.1, N = 10^4 — far from Eq. 4's M). N is
treated as public, as in the paper. Noisy counts are kept unrounded — negative values allowed — and
used as weights of the cell centres in Lloyd's update (§4.2: "its contribution to the centroid is
c × ñ"); a cluster whose total weight is ≤ 0 keeps its centre and centres are clipped to the box
(REC; the paper does not say). Lloyd runs from each of `n_init_sets` (STATED 30) sphere-packing
initialisations — the same sets as DPLloyd's when the runner passes its shared pool (§5.1) — until no centre moves more than `lloyd_tol` or `lloyd_max_iter` iterations (REC; the
paper says "until converge"), and the result with the lowest NICV *measured on the synopsis* is
returned (§5.1) — a post-processing of the synopsis.

Large grids without materialising them (how empty cells are handled, and why it is private)
------------------------------------------------------------------------------------------------
A DP synopsis must add noise to EVERY cell, including the empty ones. Let b = laplace_scale(1, ε)
and the full synopsis S = {ñ_t = c_t + ν_t : all M_tot = m^d cells}, ν_t i.i.d. Lap(b) — ε-DP by the
Laplace mechanism. We release T_τ(S) = {(t, ñ_t) : |ñ_t| > τ}, the cells whose noisy count exceeds
τ in magnitude (others get weight 0), with the data-independent threshold
τ = b·ln(M_tot / max_synopsis_cells) if M_tot > `max_synopsis_cells`, else τ = 0 (then every cell is
kept, which is exactly the paper's estimator). T_τ is a post-processing of S, hence ε-DP. We
sample T_τ(S) EXACTLY without drawing M_tot variables:
  * non-empty cells (at most N): draw ν_t ~ Lap(b) individually and keep |c_t + ν_t| > τ;
  * empty cells: each is kept independently with probability p = Pr[|ν| > τ] = exp(−τ/b), so the
    number kept is K ~ Binomial(M_empty, p); by exchangeability the kept set is a uniformly random
    K-subset of the empty cells (drawn by rejection of uniform cell indices that are non-empty or
    repeated, or — when K exceeds half the empty cells — by listing them and drawing K without
    replacement); given |ν| > τ, the Laplace law is symmetric with |ν| − τ ~ Exp(b) (memorylessness),
    so each kept empty cell gets value ±(τ + Exp(b)) with a fair sign.
This is the same joint law as thresholding S, so the output has the privacy of S; the expected
number of pure-noise cells kept is ≤ max_synopsis_cells. When τ > 0 (grids above the cap; at the
default cap of 5,000 and the ε grid of the config: Adult-num and Lifesci at ε ≥ 0.1, Image at
ε ≥ 0.4, Gowalla at ε ≥ 0.5, synthetic d ≥ 4 at ε = 1; never S1 or TIGER) cells with |ñ| ≤ τ
are dropped: a documented deviation from the paper's all-cells estimator, needed to keep d = 10
tractable (the run record stores `tau` and the number of kept cells — both functions of the
released synopsis; the true number of occupied cells is never recorded, it is private). The kept
cells are released in grid-index order (never "non-empty cells first"), so the order of the
synopsis carries nothing.

Neighbouring relation: add/remove one tuple (§3.1), under which the cell-count histogram has L1
sensitivity 1 (§4.2.1). The grid size m follows N through Eq. 4, i.e. N is treated as public (the
paper's choice): the guarantee is for neighbours that get the same grid, m(N) = m(N ± 1), which
fails only at the jump points of the rounding. (Fixing N and replacing one tuple instead would give
the histogram L1 sensitivity 2, so Lap(1/ε) would be 2ε-DP under replace-one; the paper's ε is the
add/remove one.)
"""

from __future__ import annotations

import math

import numpy as np

from .. import mechanisms as mech
from ..accountant import Accountant
from ..api import ClusteringResult, DPClustError, data_bounds, estimator_for, validate_inputs
from ..blocks.domain import public_box
from ..settings import Interval, Options, Setting, Settings, declared
from .common import INIT_SETTINGS, batched_weighted_lloyd, init_set_seeds, initial_centers

SETTINGS = Settings(
    theta=Setting(10.0, "STATED §4.2.1/§5.1 'Setting θ = 10 ... works well' (θ of Eq. 4)",
                  Interval(float, 0, open_lo=True)),
    cells_rounding=Setting("round_log", "MISSING→REC cells per dimension m with m^d nearest to Eq. 4's M on a "
                           "log scale; the inventory's 'ceil' inflates M up to 27x at d = 10",
                           Options("round_log", "ceil", "round", "floor")),
    max_synopsis_cells=Setting(5000, "REC (speed; EUGkM <= 1 s at d = 10): above this many grid cells keep only "
                               "cells with |noisy count| > τ = b ln(cells/5000), an exact post-processing of "
                               "the all-cells synopsis (module docstring)", Interval(int, 1)),
    n_init_sets=Setting(30, "STATED §5.1 Lloyd on the synopsis from 30 initial sets, best NICV on the synopsis",
                        Interval(int, 1)),
    lloyd_max_iter=Setting(30, "MISSING→REC §6.4 'runs k-means clustering until converge': iteration cap",
                           Interval(int, 1)),
    lloyd_tol=Setting(1.0e-4, "MISSING→REC convergence: no centre moves more than this (domain width 2)",
                      Interval(float, 0)),
    **INIT_SETTINGS.extend(init=Setting(
        "sphere_packing", "STATED §5.1 'the same 30 sets of initial centroids as those generated for the DPLloyd "
        "method' (sphere packing); must be data independent", Options("sphere_packing"))),
)


def grid_cells(n: int, epsilon: float, d: int, theta: float, rounding: str = "ceil") -> tuple[float, int]:
    """(M of Eq. 4, cells per dimension m)."""
    if theta <= 0:
        raise DPClustError("theta must be > 0")
    M = (n * epsilon / theta) ** (2.0 * d / (2.0 + d))
    root = M ** (1.0 / d)
    if rounding == "round_log":   # the m whose m^d is nearest to M on a log scale
        lo_m = max(1, math.floor(root))
        m = lo_m if root <= math.sqrt(lo_m * (lo_m + 1)) else lo_m + 1
        return M, max(1, m)
    fn = {"ceil": math.ceil, "round": round, "floor": math.floor}.get(rounding)
    if fn is None:
        raise DPClustError(f"unknown cells_rounding {rounding!r}: round_log, ceil, round or floor")
    return M, max(1, int(fn(root - 1e-12 if rounding == "ceil" else root)))


def _sample_empty_cells(K: int, total: int, occupied: np.ndarray, rng) -> np.ndarray:
    """K distinct cell indices uniform among [0, total) minus `occupied` (sorted int64).

    Sparse case (K ≤ half the empty cells, the usual one: K ≈ max_synopsis_cells ≪ total): rejection
    of uniform indices. Dense case (K > half the empty cells, i.e. the grid is only a little above
    max_synopsis_cells): the empty cells are listed (fewer than 2K + N of them) and K drawn without
    replacement — the same law, without the coupon-collector tail of rejection sampling.
    """
    n_empty = total - occupied.size
    if K > n_empty // 2:
        empty = np.setdiff1d(np.arange(total, dtype=np.int64), occupied, assume_unique=True)
        return rng.choice(empty, size=K, replace=False)
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < K:
        need = K - chosen.size
        cand = rng.integers(0, total, size=2 * need + 16, dtype=np.int64)
        _, first = np.unique(cand, return_index=True)
        cand = cand[np.sort(first)]                      # distinct, in draw order
        if occupied.size:
            pos = np.minimum(np.searchsorted(occupied, cand), occupied.size - 1)
            cand = cand[occupied[pos] != cand]           # reject non-empty cells
        cand = cand[~np.isin(cand, chosen)]
        chosen = np.concatenate([chosen, cand[:need]])
    return chosen


def synopsis(X, epsilon, rng, settings, acc: Accountant):
    """The thresholded EUG synopsis: (cell centres (m', d), noisy weights (m',), info)."""
    n, d = X.shape
    lo, hi = data_bounds(settings)
    M, m = grid_cells(n, epsilon, d, float(settings["theta"]), settings["cells_rounding"])
    total = m ** d
    if total >= 2 ** 62:
        raise DPClustError(f"EUGkM grid of {m}^{d} cells is too large to index")
    width = (hi - lo) / m
    idx = np.floor((X - lo) / width).astype(np.int64)
    np.clip(idx, 0, m - 1, out=idx)
    radix = m ** np.arange(d - 1, -1, -1, dtype=np.int64)
    lin = idx @ radix
    occupied, counts = np.unique(lin, return_counts=True)
    cap = int(settings["max_synopsis_cells"])
    b = mech.laplace_scale(1.0, epsilon)
    tau = b * math.log(total / cap) if total > cap else 0.0
    # Laplace on every non-empty cell's count (charged once: the whole histogram has L1 sensitivity 1)
    noisy = mech.laplace_mechanism(counts.astype(float), 1.0, epsilon, rng, accountant=acc,
                                   label="EUG synopsis: Laplace on every cell count")
    n_empty = total - occupied.size
    if tau == 0.0:
        empty = np.setdiff1d(np.arange(total, dtype=np.int64), occupied, assume_unique=True)
        empty_vals = rng.laplace(0.0, b, size=empty.size)          # same Lap(b) as every cell
    else:
        K = int(rng.binomial(n_empty, math.exp(-tau / b))) if n_empty > 0 else 0
        empty = _sample_empty_cells(K, total, occupied, rng)
        empty_vals = rng.choice([-1.0, 1.0], size=K) * (tau + rng.exponential(b, size=K))
    keep = np.abs(noisy) > tau
    cells = np.concatenate([occupied[keep], empty])
    weights = np.concatenate([noisy[keep], empty_vals])
    # Release the cells in grid order: the order of concatenation (non-empty cells first) would tell
    # which cells hold data, and Lloyd's floating-point sums would depend on it.
    order = np.argsort(cells, kind="stable")
    cells, weights = cells[order], weights[order]
    multi = (cells[:, None] // radix[None, :]) % m
    centres = lo + (multi + 0.5) * width
    info = {"M": M, "cells_per_dim": m, "cells_total": total,
            "cells_kept": int(cells.size), "tau": tau}
    return centres, weights, info


def initial_set_seeds(settings) -> list[int]:
    """The seeds of EUGkM's n_init_sets sphere-packing sets: "the same 30 sets of initial centroids
    as those generated for the DPLloyd method" (§5.1), i.e. the first n_init_sets of the runner's
    shared pool (`init_pool_seeds`, the experiment's `init_sets`) when there is one, else sets
    derived from `init_seed` alone (library use)."""
    S = int(settings["n_init_sets"])
    pool = settings.get("init_pool_seeds")
    if pool:
        if len(pool) < S:
            raise DPClustError(f"EUGkM needs n_init_sets = {S} shared initial sets but the experiment's "
                               f"pool has {len(pool)} (init_sets)")
        return [int(s) for s in pool[:S]]
    return init_set_seeds(int(settings["init_seed"]), S)


def lloyd_on_synopsis(P, w, k, settings, bounds, d):
    """Lloyd from the n_init_sets initial sets; pick the lowest NICV on the synopsis (§5.1)."""
    seeds = initial_set_seeds(settings)
    dummy = np.zeros((k, d))  # sphere packing ignores the data
    inits = np.stack([initial_centers(dummy, k, settings, seed=s) for s in seeds])
    if P.shape[0] == 0:
        return inits[0], {"chosen_init": 0, "synopsis_nicv": None, "lloyd_iterations": 0}
    C, cost, iters = batched_weighted_lloyd(P, w, inits, int(settings["lloyd_max_iter"]),
                                            float(settings["lloyd_tol"]), bounds)
    best = int(np.argmin(cost))
    total_w = float(w.sum())
    return C[best], {"chosen_init": best,
                     "synopsis_nicv": float(cost[best] / total_w) if total_w > 0 else None,
                     "lloyd_iterations": int(iters[best])}


def eugkm_centers(X, k, epsilon, rng, settings, acc: Accountant):
    """Synopsis with budget ε, then Lloyd on it (`settings` complete: EUGkM's or the hybrid's)."""
    if settings["init"] != "sphere_packing":
        # also guards the hybrid: any other init would be data dependent (or degenerate)
        raise DPClustError("EUGkM's initial sets must be data independent: init must be sphere_packing")
    bounds = data_bounds(settings)
    P, w, info = synopsis(X, epsilon, rng, settings, acc)
    C, linfo = lloyd_on_synopsis(P, w, k, settings, bounds, X.shape[1])
    info.update(linfo)
    return C, info


@declared(SETTINGS)
def eugkm(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """EUGkM (§4.2.1): ε-DP grid synopsis + weighted Lloyd from 30 inits, best on the synopsis."""
    X = validate_inputs(X, k, epsilon, delta)
    public_box(settings, X)
    acc = Accountant(float(epsilon))
    C, info = eugkm_centers(X, k, float(epsilon), rng, settings, acc)
    return ClusteringResult.from_accountant(C, acc, iterations=info["lloyd_iterations"], **info)


EUGkM = estimator_for(eugkm, eugkm.settings.defaults(), "EUGkM")
