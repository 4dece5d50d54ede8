"""Sample and aggregate k-means (Nissim, Raskhodnikova & Smith 2007), the baseline of Balcan et al.
(2017) §7 ("omitted, since its objective values are orders of magnitude worse").

Framework (NRS 2007 §4): split the data into m disjoint blocks, run the non-private clustering f on
every block (here k-means++ + Lloyd), and release a private aggregate of the m block outputs
(vectors in R^{k·d}). Changing one point changes one block and hence one of the m outputs.

Named choices (declared in `SETTINGS` below with their provenance):
* Blocks: every point goes to a uniformly random block (randomness independent of the data), so
  adding or removing a point changes exactly one block. m = ⌊n / ℓ⌋ with block size ℓ = n^a,
  a = `block_size_exponent` = 0.4 (REC: GUPT's ℓ = n^0.4, Mohan et al. 2012; NRS leave m free).
* Block output: k-means++ seeding + `block_lloyd_iterations` Lloyd steps; the k centres are put in a
  canonical order (sorted by their first coordinate, `order`) so that outputs are comparable
  vectors, as NRS's aggregation of k-means outputs requires. A block with fewer than k points
  outputs k points drawn uniformly from the public box (data-independent).
* Aggregation (`aggregator: noisy_mean`): the mean of the m block outputs, each coordinate clipped to
  the public box, plus Laplace noise with L1 sensitivity k·d·(hi − lo)/m — pure ε-DP (GUPT's
  aggregator). n (hence m) is treated as public, as in NRS. NRS's "center of attention"
  aggregator with smooth sensitivity is NOT implemented
  (it needs an (ε, δ) smooth-sensitivity calibration the paper under reproduction does not give).

Privacy guarantee (declared): ε-DP for add/remove-one neighbours with n public (n sets the number
of blocks m; the point-to-block map is data-independent randomness): one point changes one block's
output, each of its k·d coordinates by at most hi − lo after clipping, so the mean moves by at most
k·d·(hi − lo)/m in L1 — the Laplace sensitivity used.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.blocks.public_size import PUBLIC_N, public_size
from dpclust.mechanisms import laplace_mechanism
from dpclust.metrics import squared_distances
from dpclust.settings import PURE, Guarantee, Interval, Options, Setting, Settings, declared

SETTINGS = Settings(
    public_n=PUBLIC_N,
    block_size_exponent=Setting(
        0.4, "MISSING→REC GUPT's block size ℓ = n^0.4 (Mohan et al. 2012; NRS 2007 leave m free)",
        Interval(float, 0.0, 1.0), "a in the block size ℓ = n^a; m = ⌊n/ℓ⌋ blocks"),
    block_lloyd_iterations=Setting(
        20, "MISSING→REC k-means++ seeding + 20 Lloyd steps per block (the non-private f of NRS)",
        Interval(int, 0), "Lloyd steps after k-means++ on every block"),
    order=Setting(
        "first_coordinate", "REC canonical order of a block's k centres before averaging (by their first "
        "coordinate), so that block outputs are comparable vectors", Options("first_coordinate"),
        "order of a block's centres"),
    aggregator=Setting(
        "noisy_mean", "REC GUPT's noisy mean of the clipped block outputs (pure ε); NRS's center-of-attention "
        "aggregator (smooth sensitivity) is not implemented", Options("noisy_mean"), "private aggregation"),
)


@functools.cache
def _blas_controller():
    """One threadpoolctl controller per process: `threadpool_limits` finds the loaded BLAS libraries
    again on every call (reading the process's maps), which cost more than a small run's blocks
    (about half of a sample-and-aggregate run on the audit's two-point data)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _block_kmeans(P: np.ndarray, k: int, iterations: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (D² sampling, Arthur & Vassilvitskii 2007) + Lloyd steps on one small block.

    Written with dense numpy on purpose: a block has ~n^0.4 rows, where scikit-learn's per-call
    overhead dominates (see benchmarks/balcan2017_mnist.py)."""
    m = P.shape[0]
    P_sq = np.einsum("ij,ij->i", P, P)
    C = np.empty((k, P.shape[1]))
    C[0] = P[rng.integers(m)]
    d2 = squared_distances(P, C[:1], P_sq)[:, 0]
    for t in range(1, k):
        total = d2.sum()
        i = int(rng.integers(m)) if total <= 0 else int(rng.choice(m, p=d2 / total))
        C[t] = P[i]
        np.minimum(d2, squared_distances(P, C[t:t + 1], P_sq)[:, 0], out=d2)
    rows = np.arange(m)
    for _ in range(iterations):
        labels = np.argmin(squared_distances(P, C, P_sq), axis=1)
        onehot = np.zeros((k, m))
        onehot[labels, rows] = 1.0
        counts = onehot.sum(axis=1)
        sums = onehot @ P
        keep = counts > 0                    # an empty cluster keeps its centre
        C[keep] = sums[keep] / counts[keep, None]
    return C


@declared(SETTINGS, guarantee=Guarantee(
    PURE.kind, "Laplace noisy mean of the clipped block outputs (GUPT aggregator)",
    "add/remove one record (n public: it sets the number of blocks m)"))
def sample_aggregate(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Sample-and-aggregate k-means (NRS 2007 framework, noisy-mean aggregation); ε-DP.
    `order` and `aggregator` have one value each (checked by the declaration)."""
    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    n, d = X.shape
    N = public_size(settings, X)   # the public N sets the number of blocks m
    ell = max(1.0, N ** float(settings["block_size_exponent"]))
    m = max(1, int(math.floor(N / ell)))
    block = rng.integers(0, m, size=n)
    order = np.argsort(block, kind="stable")
    cuts = np.searchsorted(block[order], np.arange(m + 1))
    outputs = np.empty((m, k, d))
    iters = int(settings["block_lloyd_iterations"])
    small = 0
    with _blas_controller().limit(limits=1, user_api="blas"):  # tiny GEMMs: threading only adds overhead
        for b in range(m):  # one non-private k-means per block (a loop over blocks, not points)
            P = X[order[cuts[b]:cuts[b + 1]]]
            if P.shape[0] < k:
                outputs[b] = rng.uniform(lo, hi, size=(k, d))
                small += 1
                continue
            C = _block_kmeans(P, k, iters, rng)
            outputs[b] = C[np.argsort(C[:, 0], kind="stable")]
    np.clip(outputs, lo, hi, out=outputs)
    acc = Accountant(epsilon, delta)
    mean = outputs.mean(axis=0)
    sens = k * d * (hi - lo) / m
    Z = laplace_mechanism(mean, sens, epsilon, rng, acc, label="sample-and-aggregate noisy mean of block outputs")
    Z = np.clip(Z, lo, hi)
    return ClusteringResult.from_accountant(Z, acc, iterations=iters, blocks=m, block_size=float(ell),
                                            blocks_below_k=small)
