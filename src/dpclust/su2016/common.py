"""Pieces shared by the Su et al. (2016) algorithms.

* `INIT_SETTINGS` — the declared settings of the initialisation (`init`, `init_max_tries`,
  `init_search_steps`), shared by the declarations of every algorithm that calls `initial_centers`
  (DPLloyd, Lloyd, EUGkM, Hybrid);
* `initial_centers` — the initialisation named by ``settings["init"]`` (``sphere_packing``, §4.1.1,
  ``random_points``, Lu & Shen's shared data points, or ``kmeans++``, which only the non-private
  baseline declares), from `dpclust.blocks.initialisation`, with
  the sphere-packing interpretations `init_max_tries` and `init_search_steps` from settings;
* `OpenUnitInterval` — the constraint "a number in (0, 1)" of budget fractions.
* `sum_sensitivity_radius` — r of the paper's [−r, r]^d for a general public box [lo, hi]^d: a
  tuple changes a coordinate sum by at most max(|lo|, |hi|) under add/remove neighbours (§3.1).
* `batched_weighted_lloyd` — Lloyd with (possibly negative) weights run for many initialisations
  at once (used by EUGkM, Lloyd). (DPLloyd's cluster sums: `metrics.assign_with_sums`.)

Every initialisation set is a function of `settings["init_seed"]` only, so runs with the same
init_seed (the runner's `init_sets`) share their initial centres (§5.1's 30 sets).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import sparse

from dpclust.api import DPClustError, data_bounds
from dpclust.blocks import initialisation
from dpclust.blocks.initialisation import init_set_seeds, sphere_packing_init  # noqa: F401 (used by eugkm, gupt)
from dpclust.metrics import squared_distances
from dpclust.settings import Constraint, Interval, Options, Setting, Settings

#: The settings `initial_centers` reads; every algorithm that calls it declares them (spread into
#: its own `Settings`, possibly with `init` narrowed, as EUGkM does).
INIT_SETTINGS = Settings(
    init=Setting("sphere_packing", "STATED §4.1.1 sphere packing, data independent ('random_points': "
                 "Lu & Shen's k shared data points, NOT private, used only where their config asks for it)",
                 Options("sphere_packing", "random_points"),
                 "initialisation, drawn from default_rng(init_seed) so runs with equal init_seed share it"),
    init_max_tries=Setting(100, "MISSING→REC §4.1.1 'when we have failed repeatedly': candidate points per "
                           "centroid before a radius counts as failed", Interval(int, 1)),
    init_search_steps=Setting(20, "MISSING→REC §4.1.1 'a binary search to find the maximal value for a': "
                              "bisection steps on the radius a in [0, (hi-lo)/2]", Interval(int, 0)),
)


class OpenUnitInterval(Constraint):
    """A number strictly between 0 and 1 (a fraction of the budget that leaves both parts > 0)."""

    def error(self, value):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not 0 < value < 1:
            return f"expected a number in (0, 1), got {value!r}"
        return None

    def __str__(self):
        return "float in (0, 1)"


def initial_centers(X: np.ndarray, k: int, settings: Mapping, seed: int | None = None) -> np.ndarray:
    """Initial centres named by `settings["init"]`, drawn from `default_rng(seed or init_seed)`;
    `settings` holds the `INIT_SETTINGS` (complete: the caller's declaration filled them)."""
    how = settings["init"]
    if how not in ("sphere_packing", "random_points", "kmeans++"):
        raise DPClustError(f"unknown init {how!r}: use 'sphere_packing' or 'random_points' ('kmeans++': "
                           "the non-private baseline only)")
    return initialisation.initial_centers(
        X, k, how, seed=int(settings["init_seed"] if seed is None else seed), bounds=data_bounds(settings),
        tries=int(settings["init_max_tries"]), steps=int(settings["init_search_steps"]))


def sum_sensitivity_radius(bounds) -> float:
    lo, hi = bounds
    return float(max(abs(lo), abs(hi)))


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
