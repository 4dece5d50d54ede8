"""Non-private baselines: Lloyd, k-means++ (+ Lloyd), k-median++ and Lloyd-style k-median.

Lloyd's iteration (Lloyd 1982) is written here on BLAS: one GEMM per iteration for the assignment
(`lloyd_step`) fused with the one-hot product for the cluster sums; on MNIST it is faster than
scikit-learn's on the same init and iteration count (see `benchmarks/bench_lloyd.py`). k-means++
seeding is scikit-learn's `kmeans_plusplus` (Arthur & Vassilvitskii 2007). The k-median variant
uses D¹ seeding and the exact geometric median per cluster (Weiszfeld's algorithm).

The `*_algorithm` functions follow the `dpclust.api` contract with ε spent = 0, so baselines run
through the same runner, records and tables as the private algorithms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpclust.api import ClusteringResult
from dpclust.blocks.initialisation import INITIALISATIONS, initial_centers, kmedian_plus_plus
from dpclust.metrics import assign, centre_scores, centre_terms, cluster_sums_in_order
from dpclust.settings import Boolean, Interval, Options, Setting, Settings, declared

LLOYD_SETTINGS = Settings(
    init=Setting("random_points", "REC k distinct data points drawn with the run's shared init_seed "
                 "(Lloyd's classic start; 'kmeans++' for k-means++, 'box' for uniform in the box)",
                 Options(*[i for i in INITIALISATIONS if i != "sphere_packing"])),
    max_iter=Setting(300, "REC scikit-learn's default iteration cap", Interval(int, 1)),
    tol=Setting(0.0, "REC stop when no centre moves by more than tol (0: the centres stay the same, "
                "Lu & Shen §7.1; negative: never stop early)", Interval(float)),
    record_trace=Setting(False, "REC analysis only: the cost after each iteration in info.trace_cost", Boolean()),
)
KMEDIAN_SETTINGS = Settings(
    max_iter=Setting(10, "STATED Cohen-Addad et al. 2022 §6: k-median++ followed by 10 Lloyd iterations",
                     Interval(int, 1)),
)


@dataclass
class LloydResult:
    centers: np.ndarray
    labels: np.ndarray
    iterations: int
    cost: float
    converged: bool
    trace: list[float] = field(default_factory=list)


def cluster_sums(X: np.ndarray, labels: np.ndarray, k: int):
    """Per-cluster sums (k, d) (`metrics.cluster_sums_in_order`) and counts (k,), as floats."""
    return cluster_sums_in_order(X, labels, k), np.bincount(labels, minlength=k).astype(float)


#: Rows per block of the fused Lloyd step: small enough that a block of X stays in cache between
#: the distance GEMM and the accumulation of the sums (a speed setting only).
LLOYD_BLOCK_ROWS = 512

#: From this many centres on, the per-cluster sums of a block are a sparse one-hot product (n·d
#: additions) instead of a dense one-hot GEMM (k·n·d flops, faster for few centres). Speed only;
#: scipy.sparse is imported only then, which keeps small runs' imports lean.
LLOYD_SPARSE_SUMS_MIN_K = 24


def lloyd_step(X: np.ndarray, C: np.ndarray, weights: np.ndarray | None = None):
    """One assignment + accumulation pass: per-cluster (weighted) sums (k, d) and counts (k,).

    Fused per block of rows: the (k × rows) scores ‖c‖² − 2c·x by one GEMM (`centre_scores`),
    argmin down their columns, then the block's one-hot matrix times the block, so X is read from
    memory once per iteration.
    """
    k, d = C.shape
    terms = centre_terms(C)
    sums = np.zeros((k, d))
    counts = np.zeros(k)
    sparse = None
    if k >= LLOYD_SPARSE_SUMS_MIN_K:
        from scipy import sparse
    step = LLOYD_BLOCK_ROWS
    for start in range(0, X.shape[0], step):
        block = X[start:start + step]
        m = block.shape[0]
        lab = np.argmin(centre_scores(block, terms), axis=0)
        w = np.ones(m) if weights is None else weights[start:start + step]
        if sparse is None:
            onehot = np.zeros((k, m))
            onehot[lab, np.arange(m)] = w
        else:
            onehot = sparse.csr_matrix((w, lab, np.arange(m + 1)), shape=(m, k)).T
        sums += onehot @ block
        counts += np.bincount(lab, weights=w, minlength=k)
    return sums, counts


def lloyd(X: np.ndarray, init: np.ndarray, max_iter: int = 300, tol: float = 0.0,
          weights: np.ndarray | None = None, record_trace: bool = False) -> LloydResult:
    """Lloyd's algorithm from the given centres.

    Stops after `max_iter` iterations or when no centre moves by more than `tol` (Euclidean;
    tol = 0 means "the centres stay the same", Lu & Shen §7.1). An empty cluster keeps its previous
    centre. `trace` holds the (weighted) k-means cost after each iteration when `record_trace`.
    """
    C = np.array(init, dtype=float, copy=True)
    trace: list[float] = []
    converged = False
    it = 0
    w = None if weights is None else np.asarray(weights, dtype=float)
    for it in range(1, max_iter + 1):
        sums, counts = lloyd_step(X, C, w)
        new_C = C.copy()
        nonempty = counts > 0
        new_C[nonempty] = sums[nonempty] / counts[nonempty, None]
        shift = np.sqrt(((new_C - C) ** 2).sum(axis=1)).max()
        C = new_C
        if record_trace:
            trace.append(float(_weighted_cost(X, C, weights)))
        if shift <= tol:
            converged = True
            break
    labels, d2 = assign(X, C)
    cost = float(d2.sum() if weights is None else np.dot(weights, d2))
    return LloydResult(C, labels, it, cost, converged, trace)


def _weighted_cost(X, C, weights):
    _, d2 = assign(X, C)
    return d2.sum() if weights is None else np.dot(weights, d2)


def geometric_median(P: np.ndarray, max_iter: int = 200, tol: float = 1e-9) -> np.ndarray:
    """Exact 1-median of the rows of P by Weiszfeld's algorithm (with the Vardi-Zhang guard). The
    per-point arrays of an iteration share one work array (the arithmetic of ((P − y)²).sum(axis=1)
    and (P·w).sum(axis=0), without two fresh (m, d) arrays an iteration)."""
    y = P.mean(axis=0)
    work = np.empty_like(P, dtype=float)
    for _ in range(max_iter):
        np.subtract(P, y, out=work)
        np.square(work, out=work)
        d = np.sqrt(work.sum(axis=1))
        near = d < 1e-12
        w = 1.0 / np.where(near, 1.0, d)
        w[near] = 0.0
        if w.sum() == 0:
            return y
        np.multiply(P, w[:, None], out=work)
        t = work.sum(axis=0) / w.sum()
        if near.any():  # Vardi & Zhang (2000) step when y sits on a data point
            r = np.linalg.norm((P[~near] - y).T @ w[~near])
            eta = near.sum()
            t = max(0.0, 1 - eta / r) * t + min(1.0, eta / r) * y if r > 0 else y
        if np.linalg.norm(t - y) <= tol * max(1.0, np.linalg.norm(y)):
            return t
        y = t
    return y


def lloyd_kmedian(X: np.ndarray, init: np.ndarray, max_iter: int = 10) -> LloydResult:
    """Lloyd-style k-median: assign to the nearest centre, move each centre to its cluster's
    geometric median; `max_iter` rounds (Cohen-Addad et al. §6: kmed++ with 10 iterations)."""
    C = np.array(init, dtype=float, copy=True)
    it = 0
    for it in range(1, max_iter + 1):
        labels, _ = assign(X, C)
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(C.shape[0] + 1))
        for j in range(C.shape[0]):
            members = order[bounds[j]:bounds[j + 1]]
            if members.size:
                C[j] = geometric_median(X[members])
    labels, d2 = assign(X, C)
    return LloydResult(C, labels, it, float(np.sqrt(d2).sum()), False, [])


# ---------------------------------------------------------------------------------------------
# Algorithm-contract wrappers (ε spent = 0)
# ---------------------------------------------------------------------------------------------
@declared(LLOYD_SETTINGS)
def lloyd_algorithm(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Non-private Lloyd from `settings['init']` centres (drawn with the shared `init_seed`),
    for `settings['max_iter']` iterations or until the centres move by ≤ `settings['tol']`."""
    init_rng = np.random.default_rng(settings["init_seed"])
    C0 = initial_centers(X, k, settings["init"], rng=init_rng, bounds=settings.get("bounds"))
    res = lloyd(X, C0, max_iter=int(settings["max_iter"]), tol=float(settings["tol"]),
                record_trace=bool(settings["record_trace"]))
    info = {"converged": res.converged}
    if res.trace:
        info["trace_cost"] = res.trace
    return ClusteringResult(res.centers, 0.0, 0.0, res.iterations, info)


@declared(KMEDIAN_SETTINGS, objective="kmedian")
def kmedian_algorithm(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Non-private k-median++ plus `settings['max_iter']` Lloyd-median iterations."""
    init_rng = np.random.default_rng(settings["init_seed"])
    C0 = kmedian_plus_plus(X, k, init_rng)
    res = lloyd_kmedian(X, C0, max_iter=int(settings["max_iter"]))
    return ClusteringResult(res.centers, 0.0, 0.0, res.iterations, {})
