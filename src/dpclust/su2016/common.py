"""Pieces shared by the Su et al. (2016) algorithms.

* `sphere_packing_init` — the data-independent initialisation of §4.1.1: "Given a radius a, we
  randomly generate k centroids one by one such that each new centroid is of distance at least a
  away from each border of the domain and each new centroid is of distance at least 2a away from
  any existing centroid. When a randomly chosen point does not satisfy this condition, we generate
  another point. When we have failed repeatedly, we conclude that the radius a is too large, and
  try a smaller radius. We use a binary search to find the maximal value for a."
  Interpretations (settings): `init_max_tries` (MISSING→REC 100) candidate points per centroid
  before a radius counts as failed; `init_search_steps` (MISSING→REC 20) bisection steps on
  a ∈ [0, (hi−lo)/2]; the centres returned are those of the largest radius that succeeded. The
  candidate points of one attempt are drawn as one batch (first admissible one is taken), which is
  the same law as drawing them one by one.
* `initial_centers` — by name: `sphere_packing` (above) or `random_points` (k distinct data points,
  Lu & Shen's shared initial centres; NOT private unless the points are public — that is their
  protocol, used only when a config asks for it).
* `sum_sensitivity_radius` — r of the paper's [−r, r]^d for a general public box [lo, hi]^d: a
  tuple changes a coordinate sum by at most max(|lo|, |hi|) under add/remove neighbours (§3.1).
* `cluster_stats` / `batched_weighted_lloyd` — one-pass (bincount) cluster sums, counts; Lloyd with
  (possibly negative) weights run for many initialisations at once (used by EUGkM, Lloyd).

Every initialisation set is a function of `settings["init_seed"]` only, so runs with the same
init_seed (the runner's `init_sets`) share their initial centres (§5.1's 30 sets).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

import numpy as np
from scipy import sparse

from ..api import DPClustError, data_bounds
from ..metrics import squared_distances


def check_in_box(X: np.ndarray, settings: Mapping) -> tuple[float, float]:
    """The public box [lo, hi] from settings; raise if a point lies outside it (the sensitivity
    analyses of every algorithm here assume X ⊂ [lo, hi]^d — never clip silently)."""
    lo, hi = data_bounds(settings)
    if X.size and (X.min() < lo - 1e-12 or X.max() > hi + 1e-12):
        raise DPClustError(f"X has values outside the public box [{lo}, {hi}] given in settings['bounds']; "
                           "transform the data into the box first (e.g. transform minmax_pm1)")
    return lo, hi


def sum_sensitivity_radius(bounds) -> float:
    lo, hi = bounds
    return float(max(abs(lo), abs(hi)))


def _try_place(k: int, d: int, lo: float, hi: float, a: float, tries: int, rng) -> np.ndarray | None:
    centers = np.empty((k, d))
    for j in range(k):  # k sequential placements (k ≤ a few dozen); each tries a batch at once
        cand = rng.uniform(lo + a, hi - a, size=(tries, d))
        if j == 0:
            centers[0] = cand[0]
            continue
        d2 = squared_distances(cand, centers[:j])
        ok = np.flatnonzero((d2 >= (2.0 * a) ** 2).all(axis=1))
        if ok.size == 0:
            return None
        centers[j] = cand[ok[0]]
    return centers


@lru_cache(maxsize=4096)
def _sphere_packing_cached(k: int, d: int, lo: float, hi: float, seed: int, tries: int, steps: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a_lo, a_hi = 0.0, (hi - lo) / 2.0
    best = _try_place(k, d, lo, hi, 0.0, tries, rng)
    for _ in range(steps):
        mid = 0.5 * (a_lo + a_hi)
        placed = _try_place(k, d, lo, hi, mid, tries, rng)
        if placed is None:
            a_hi = mid
        else:
            a_lo, best = mid, placed
    best.setflags(write=False)
    return best


def sphere_packing_init(k: int, d: int, bounds, seed: int, tries: int = 100, steps: int = 20) -> np.ndarray:
    """k data-independent centres in [lo, hi]^d (§4.1.1), cached per (k, d, bounds, seed)."""
    lo, hi = float(bounds[0]), float(bounds[1])
    if tries < 1 or steps < 0:
        raise DPClustError("init_max_tries must be >= 1 and init_search_steps >= 0")
    return _sphere_packing_cached(int(k), int(d), lo, hi, int(seed), int(tries), int(steps)).copy()


def initial_centers(X: np.ndarray, k: int, settings: Mapping, seed: int | None = None) -> np.ndarray:
    """Initial centres named by `settings["init"]`, drawn from `default_rng(seed or init_seed)`."""
    seed = int(settings["init_seed"] if seed is None else seed)
    how = settings.get("init", "sphere_packing")
    if how == "sphere_packing":
        return sphere_packing_init(k, X.shape[1], data_bounds(settings), seed,
                                   int(settings.get("init_max_tries", 100)),
                                   int(settings.get("init_search_steps", 20)))
    if how == "random_points":
        rng = np.random.default_rng(seed)
        return X[rng.choice(X.shape[0], size=k, replace=False)].copy()
    raise DPClustError(f"unknown init {how!r}: use 'sphere_packing' or 'random_points'")


def init_set_seeds(init_seed: int, count: int) -> list[int]:
    """`count` data-independent seeds for the initial sets of one synopsis (EUGkM, §5.1)."""
    ss = np.random.SeedSequence(int(init_seed))
    return [int(s.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1)) for s in ss.spawn(count)]


def cluster_stats(X: np.ndarray, labels: np.ndarray, k: int, weights: np.ndarray | None = None):
    """Per-cluster sums (k, d) and counts (k,) with np.bincount (no Python loop over points)."""
    d = X.shape[1]
    w = None if weights is None else np.asarray(weights, dtype=float)
    counts = np.bincount(labels, weights=w, minlength=k).astype(float)
    sums = np.empty((k, d))
    for i in range(d):  # loop over dimensions only
        col = X[:, i] if w is None else X[:, i] * w
        sums[:, i] = np.bincount(labels, weights=col, minlength=k)
    return sums, counts


def batched_weighted_lloyd(P: np.ndarray, w: np.ndarray, inits: np.ndarray, max_iter: int, tol: float,
                           bounds, chunk_entries: int = 4_000_000):
    """Weighted Lloyd from S initialisations at once.

    P (m, d) points (cell centres), w (m,) weights (may be negative: EUGkM keeps noisy counts
    unrounded, §4.2), inits (S, k, d). A cluster whose total weight is ≤ 0 keeps its centre (a
    centroid is undefined there); centres are clipped to the public box (post-processing).
    Returns (centres (S, k, d), weighted cost per set (S,), iterations per set (S,)).
    """
    lo, hi = bounds
    C = np.array(inits, dtype=float, copy=True)
    S, k, d = C.shape
    m = P.shape[0]
    P_sq = np.einsum("ij,ij->i", P, P)
    active = np.ones(S, dtype=bool)
    iters = np.zeros(S, dtype=int)
    offs = (np.arange(S) * k)[None, :]
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        labels = _batched_labels(P, P_sq, C[idx], chunk_entries)  # (m, s)
        flat = (labels + offs[:, :idx.size]).ravel()                       # (m·s,) row-major
        cols = np.repeat(np.arange(m), idx.size)
        onehot = sparse.csr_matrix((np.repeat(w, idx.size), (flat, cols)), shape=(idx.size * k, m))
        counts = np.asarray(onehot.sum(axis=1)).reshape(idx.size, k)
        sums = np.asarray(onehot @ P).reshape(idx.size, k, d)
        old = C[idx]
        new = old.copy()
        pos = counts > 0
        new[pos] = sums[pos] / counts[pos][:, None]
        np.clip(new, lo, hi, out=new)
        shift = np.sqrt(((new - old) ** 2).sum(axis=2)).max(axis=1)
        C[idx] = new
        iters[idx] += 1
        active[idx[shift <= tol]] = False
    cost = np.empty(S)
    labels = _batched_labels(P, P_sq, C, chunk_entries)
    for s in range(S):
        d2 = squared_distances(P, C[s], P_sq)[np.arange(m), labels[:, s]]
        cost[s] = float(np.dot(w, d2))
    return C, cost, iters


def _batched_labels(P, P_sq, C, chunk_entries):
    """Nearest centre of every point for each of the S sets: argmin_j ‖c_j‖² − 2 p·c_j (the ‖p‖²
    term does not change the argmin), in float32 (labels only; costs are computed in float64)."""
    s, k, d = C.shape
    flatC = C.reshape(s * k, d).astype(np.float32)
    c_sq = np.einsum("ij,ij->i", flatC, flatC)
    P32 = P.astype(np.float32)
    m = P.shape[0]
    out = np.empty((m, s), dtype=np.int64)
    step = max(1, chunk_entries // max(s * k, 1))
    for start in range(0, m, step):
        D = P32[start:start + step] @ flatC.T
        D *= -2.0
        D += c_sq
        out[start:start + step] = D.reshape(-1, s, k).argmin(axis=2)
    return out
