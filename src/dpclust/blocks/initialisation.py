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

import math
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


def _row_norms_sq(A: np.ndarray) -> np.ndarray:
    """‖a‖² of every row, by the same einsum scikit-learn's ``row_norms(A, squared=True)`` runs."""
    A = np.asarray(A)
    return np.einsum("ij,ij->i", A, A)


def _row_batches(n: int, size: int):
    """Slices of `size` rows over range(n), the last one shorter (``sklearn.utils.gen_batches``)."""
    start = 0
    for _ in range(n // size):
        yield slice(start, start + size)
        start += size
    if start < n:
        yield slice(start, n)


def _pp_sq_distances(A: np.ndarray, X: np.ndarray, X_sq: np.ndarray | None) -> np.ndarray:
    """(m, n) squared distances from the rows of `A` to those of `X`, formed as scikit-learn 1.9's
    ``_euclidean_distances(A, X, Y_norm_squared=X_sq, squared=True)`` forms them, operation for
    operation: float64 — ``−2·(A @ X.T)``, then ``+= ‖a‖²`` (a column), then ``+= ‖x‖²`` (`X_sq`,
    a row), clipped at 0 in place; float32 — the same in float64 on row blocks of both sides
    upcast (block size from the same memory budget: 10 % of the operands and result, at least
    10 MiB of 8-byte entries), each block rounded to float32, then clipped at 0 (`X_sq` unused)."""
    if X.dtype == np.float32:
        m, n, d = A.shape[0], X.shape[0], A.shape[1]
        D = np.empty((m, n), dtype=np.float32)
        budget = max(((1 * m + 1 * n) * d + (1 * m * 1 * n)) / 10, 10 * 2**17)
        tmp = (1 + 1) * d
        size = max(int((-tmp + math.sqrt(tmp**2 + 4 * budget)) / 2), 1)
        for rows in _row_batches(m, size):
            A64 = A[rows, :].astype(np.float64)
            A64_sq = _row_norms_sq(A64)[:, None]
            for cols in _row_batches(n, size):
                X64 = X[cols, :].astype(np.float64)
                X64_sq = _row_norms_sq(X64)[None, :]
                block = -2 * (A64 @ X64.T)
                block += A64_sq
                block += X64_sq
                D[rows, cols] = block.astype(np.float32, copy=False)
    else:
        assert X_sq is not None
        A_sq = _row_norms_sq(A)[:, None]
        D = -2 * (A @ X.T)
        D += A_sq
        D += np.reshape(X_sq, (1, -1))
    np.maximum(D, np.asarray(0, dtype=D.dtype), out=D)
    return D


def _native_kmeans_pp_input(X, k) -> bool:
    """The inputs `_greedy_kmeans_pp` reproduces scikit-learn on: a plain 2-D float64/float32
    (native byte order) array, dense, finite, with 1 ≤ k ≤ n and d ≥ 1. Anything else (which no
    caller passes: `dpclust.api` hands algorithms C-contiguous float64) goes to scikit-learn itself,
    so its conversions and its errors stay exactly as they were."""
    if type(X) not in (np.ndarray, np.memmap) or X.ndim != 2 or X.dtype not in (np.float64, np.float32):
        return False
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= X.shape[0]:
        return False
    if X.shape[1] < 1:
        return False
    # sklearn's own O(1)-memory test first (a finite sum), the elementwise one only if it overflowed
    with np.errstate(over="ignore", invalid="ignore"):
        finite_sum = np.isfinite(X.sum())
    return bool(finite_sum or np.isfinite(X).all())


def _greedy_kmeans_pp(X: np.ndarray, k: int, random_state: np.random.RandomState) -> np.ndarray:
    """scikit-learn 1.9's ``_kmeans_plusplus`` (unit sample weights, default local trials) on a
    dense float array, in the same operations, order, dtypes and shapes (see `kmeans_plus_plus`)."""
    n, d = X.shape
    centers = np.empty((k, d), dtype=X.dtype)
    trials = 2 + int(np.log(k))
    w = np.ones(n, dtype=X.dtype)
    X_sq = _row_norms_sq(X) if X.dtype != np.float32 else None  # float32: recomputed blockwise

    first = random_state.choice(n, p=w / w.sum())
    centers[0] = X[first]
    closest = _pp_sq_distances(centers[0, np.newaxis], X, X_sq)       # (1, n)
    potential = closest @ w                                           # (1,)
    for c in range(1, k):
        targets = random_state.uniform(size=trials) * potential
        cand = np.searchsorted(np.cumsum(w * closest), targets)
        np.clip(cand, None, closest.size - 1, out=cand)              # rounding past the last mass
        dist = _pp_sq_distances(X[cand], X, X_sq)                     # (trials, n)
        np.minimum(closest, dist, out=dist)
        pots = dist @ w.reshape(-1, 1)                                # (trials, 1)
        best = np.argmin(pots)
        potential = pots[best]
        closest = dist[best]
        centers[c] = X[cand[best]]
    return centers


def kmeans_plus_plus(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur & Vassilvitskii 2007, "k-means++: the advantages of careful
    seeding", SODA): the first centre is a uniform data point; each next one is the best, by the
    resulting potential Σ_i min_j ‖x_i − c_j‖², of 2 + ⌊ln k⌋ candidates drawn with probability ∝
    D² (the greedy variant the paper's conclusion mentions).

    It reproduces ``sklearn.cluster.kmeans_plusplus(X, k, random_state=seed)`` of scikit-learn 1.9
    bit for bit (same seed, same centres), with ``seed = rng.integers(2**31 - 1)`` drawn from `rng`
    and a ``RandomState(seed)`` stream: the same draws (``choice`` with p = w/Σw, ``uniform`` × the
    potential, ``searchsorted`` in the cumulative D² clipped to n − 1) and the same floating-point
    operations in the same order (‖x‖² by einsum; −2·(C @ Xᵀ) + ‖c‖² + ‖x‖², clipped at 0, float32
    via float64 blocks; potentials as GEMV products with the unit weights; the first argmin).
    tests/test_initialisation_kmeanspp.py checks the identity against the installed scikit-learn.
    It is written out rather than imported because ``import sklearn.cluster`` costs ~2 CPU-s in
    every run job that seeds with k-means++ (issue #42). Inputs outside the reproduced domain
    (not a dense finite float32/float64 2-D array with 1 ≤ k ≤ n) are passed to scikit-learn."""
    seed = int(rng.integers(2**31 - 1))
    if not _native_kmeans_pp_input(X, k):
        from sklearn.cluster import kmeans_plusplus

        centers, _ = kmeans_plusplus(X, k, random_state=seed)
        return centers
    return _greedy_kmeans_pp(X, int(k), np.random.RandomState(seed))


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
