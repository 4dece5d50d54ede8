"""Initial centres, shared by the papers' algorithms: by name, from a given seed or generator.

* ``sphere_packing`` (Su et al. 2016 §4.1.1, data independent): "Given a radius a, we randomly
  generate k centroids one by one such that each new centroid is of distance at least a away from
  each border of the domain and each new centroid is of distance at least 2a away from any existing
  centroid. When a randomly chosen point does not satisfy this condition, we generate another
  point. When we have failed repeatedly, we conclude that the radius a is too large, and try a
  smaller radius. We use a binary search to find the maximal value for a." Interpretations:
  `tries` (MISSING→REC 100) candidate points per centroid before a radius counts as failed;
  `steps` (MISSING→REC 20) bisection steps on a ∈ [0, (hi−lo)/2]; the centres returned are those
  of the largest radius that succeeded. The candidates of one attempt are drawn as one batch
  (the first admissible one is taken): the same law as drawing them one by one. Cached per
  (k, d, bounds, seed).
* ``random_points``: k distinct data points. NOT private unless the points are public: Lu & Shen's
  and Lloyd's protocol, used only where a config asks for it.
* ``box``: k points uniform in the public box (data independent).
* ``kmeans++`` / ``kmedian++``: D² / D¹ seeding (non-private baselines).

Every set drawn from a seed is a function of that seed only, so runs with equal ``init_seed``
(the runner's ``init_sets``) share their initial centres (Su et al. §5.1's 30 sets).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dpclust.api import DPClustError
from dpclust.metrics import assign, squared_distances

INITIALISATIONS = ("sphere_packing", "random_points", "box", "kmeans++", "kmedian++")


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
    if best is None:  # a = 0 places any k candidates
        raise AssertionError("sphere packing placed no centres at radius 0")
    best.setflags(write=False)
    return best


def sphere_packing_init(k: int, d: int, bounds, seed: int, tries: int = 100, steps: int = 20) -> np.ndarray:
    """k data-independent centres in [lo, hi]^d (§4.1.1), cached per (k, d, bounds, seed)."""
    lo, hi = float(bounds[0]), float(bounds[1])
    if tries < 1 or steps < 0:
        raise DPClustError("init_max_tries must be >= 1 and init_search_steps >= 0")
    return _sphere_packing_cached(int(k), int(d), lo, hi, int(seed), int(tries), int(steps)).copy()


def init_set_seeds(init_seed: int, count: int) -> list[int]:
    """`count` data-independent seeds for the initial sets of one synopsis (EUGkM, §5.1)."""
    ss = np.random.SeedSequence(int(init_seed))
    return [int(s.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1)) for s in ss.spawn(count)]


def kmeans_plus_plus(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (scikit-learn's implementation, seeded from `rng`)."""
    from sklearn.cluster import kmeans_plusplus

    centers, _ = kmeans_plusplus(X, k, random_state=int(rng.integers(2**31 - 1)))
    return centers


def kmedian_plus_plus(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """D¹ seeding: each next centre is a point drawn with probability ∝ its distance."""
    n = X.shape[0]
    centers = [X[rng.integers(n)]]
    _, d2 = assign(X, np.asarray(centers))
    dist = np.sqrt(d2)
    for _ in range(1, k):
        total = dist.sum()
        idx = rng.integers(n) if total <= 0 else rng.choice(n, p=dist / total)
        centers.append(X[idx])
        _, d2_new = assign(X, X[idx][None, :])
        dist = np.minimum(dist, np.sqrt(d2_new))
    return np.asarray(centers)


def initial_centers(X: np.ndarray, k: int, how: str, *, seed: int | None = None,
                    rng: np.random.Generator | None = None, bounds=None, tries: int = 100,
                    steps: int = 20) -> np.ndarray:
    """k initial centres named `how` (see module docstring), drawn from `rng`, or from
    ``default_rng(seed)`` when no generator is given (``sphere_packing`` always uses `seed`)."""
    if how == "sphere_packing":
        if seed is None or bounds is None:
            raise DPClustError("sphere_packing initialisation needs a seed and the public bounds")
        return sphere_packing_init(k, X.shape[1], bounds, seed, tries, steps)
    if rng is None:
        if seed is None:
            raise DPClustError(f"{how} initialisation needs a seed or a generator")
        rng = np.random.default_rng(int(seed))
    if how == "random_points":
        return X[rng.choice(X.shape[0], size=k, replace=False)].copy()
    if how == "box":
        if bounds is None:
            raise DPClustError("box initialisation needs the public bounds")
        lo, hi = bounds
        return rng.uniform(lo, hi, size=(k, X.shape[1]))
    if how == "kmeans++":
        return kmeans_plus_plus(X, k, rng)
    if how == "kmedian++":
        return kmedian_plus_plus(X, k, rng)
    raise DPClustError(f"unknown initialisation {how!r}; known: {', '.join(INITIALISATIONS)}")
