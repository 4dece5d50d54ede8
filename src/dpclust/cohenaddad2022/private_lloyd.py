"""HST k-median / k-means and the Private Lloyd baseline (Cohen-Addad et al. 2022, §3, §5, §6).

`hst_kmedian` (§6 "our algorithm"): private tree (Alg. 2, `hst.build_private_tree`) with
ε·``tree_budget_fraction``, dynamic program (Alg. 3, `dynamic_program.solve`, post-processing), then
``lloyd_iterations`` private Lloyd-median iterations, each with an equal share of the rest of ε:
"4 iterations of the Lloyd algorithm using the private 1-median implementation … at most 20k points
from each cluster" (STATED); "we split the privacy budget uniformly" (STATED) → ε/5 each (INFERRED).

`private_lloyd` (§6 baseline "Private Lloyd"): ``iterations`` (STATED 7) private Lloyd-median
iterations from k centres drawn uniformly in the public box with the shared `init_seed`, ε/7 each.

`hst_kmeans` (§5, Lemma 6 and App. A, simplified — interpretation): the tree DP with p = 2 gives k
candidate centres, the union with a given solution S₀ (here: the DP's p = 1 solution on the same
tree, i.e. no extra budget) is reduced to k centres by the reverse greedy of Chrobak et al. run on
the instance {(s, |cluster(s)| + Lap)} (App. A: noisy cluster sizes, parallel over the disjoint
clusters), then ``lloyd_iterations`` private Lloyd steps as for k-median. Budget: tree fraction,
noisy sizes fraction, rest equally over the Lloyd steps.

One private Lloyd-median step: assign every point to its nearest centre (public centres → the
clusters are disjoint), draw at most ``max_points_per_cluster`` points of each cluster uniformly
without replacement (STATED 20k; bottom-k sampling over row chunks), and replace the centre by `private_one_median` of the sample with
the step's ε. Clusters are disjoint, so the step costs ε_step by parallel composition. Because a
fixed-size sample turns an added point into a replaced one, the 1-median uses replace-one
neighbours (Δ_b = 2L), which covers both cases (enforced: `one_median_neighbouring` must be
`replace`, else `DPClustError`). Empty clusters still get a private 1-median (of
the empty set), covered by the same guarantee.
"""

from __future__ import annotations

import numpy as np

from ..accountant import Accountant
from ..api import ClusteringResult, DPClustError, data_bounds, estimator_for, validate_inputs
from ..blocks.domain import public_box
from ..mechanisms import laplace_mechanism
from ..metrics import assign, nearest
from . import dynamic_program, hst
from ..blocks.one_median import ONE_MEDIAN_DEFAULTS, private_one_median

HST_DEFAULTS = {
    "layers": 10,                       # EXT-code --layers 10 (binary depth = layers·d)
    "split_fraction_range": [1 / 3, 2 / 3],  # EXT-code cut fraction per (layer, dim)
    "weight_threshold_factor": 3.0,     # MISSING→REC w = 3 × Laplace scale of a level
    "empty_cell_cost_factor": 2.0,      # EXT-code empty subtree costs 2·diam·w
    "tree_budget_fraction": 0.2,        # INFERRED uniform split ε/5
    "lloyd_iterations": 4,              # STATED §6
    "max_points_per_cluster": 20000,    # STATED §6
    "chunk_rows": 262144,               # REC speed/memory only
    **ONE_MEDIAN_DEFAULTS,
    "one_median_smooth_lambda": 0.1,    # MISSING→REC (config explains; EXT-code 0.01 on data in [0, 2])
    "one_median_neighbouring": "replace",  # fixed-size samples: an added point acts as a replaced one
}


def _bottom_k_merge(pts, keys, new_pts, new_keys, cap):
    """Keep the `cap` rows with the smallest keys (uniform sample without replacement, mergeable)."""
    pts = np.concatenate([pts, new_pts])
    keys = np.concatenate([keys, new_keys])
    if keys.size > cap:
        sel = np.argpartition(keys, cap - 1)[:cap]
        sel.sort()
        pts, keys = pts[sel], keys[sel]
    return pts, keys


def _check_step_settings(settings) -> None:
    """The capped sample of a Lloyd step turns an added point into a replaced one, so its 1-medians
    must be calibrated to replace-one neighbours; anything else is not ε-DP (see the capped-step audit
    in tests/cohenaddad2022/test_audit.py). Checked on the settings only (data independent)."""
    if settings.get("one_median_neighbouring") != "replace":
        raise DPClustError("a private Lloyd-median step samples at most max_points_per_cluster points per "
                           "cluster and needs one_median_neighbouring: replace (Delta_b = 2L), got "
                           f"{settings.get('one_median_neighbouring')!r}")


def private_lloyd_step(source, C, epsilon, bounds, rng, accountant, settings, label):
    """One private Lloyd-median iteration (parallel over the k disjoint clusters).

    `source`: an (n, d) array, an h5py dataset or a zero-argument callable returning a fresh
    iterable of row chunks. One pass: each chunk is assigned to the nearest centre and every point
    gets a uniform key; per cluster the ``max_points_per_cluster`` smallest keys are kept (bottom-k
    sampling = a uniform sample without replacement, merged across chunks, so memory is O(k·cap))."""
    _check_step_settings(settings)
    k, d = C.shape
    cap = int(settings["max_points_per_cluster"])
    kept = [np.empty((0, d)) for _ in range(k)]
    keys = [np.empty(0) for _ in range(k)]
    for chunk in _chunks(source, int(settings["chunk_rows"])):
        lab = nearest(chunk, C)
        u = rng.random(chunk.shape[0])
        order = np.argsort(lab, kind="stable")
        starts = np.searchsorted(lab[order], np.arange(k + 1))
        for j in range(k):
            rows = order[starts[j]:starts[j + 1]]
            if keys[j].size == cap:  # only keys below the current cap-th smallest can enter
                rows = rows[u[rows] < keys[j].max()]
            if rows.size:
                kept[j], keys[j] = _bottom_k_merge(kept[j], keys[j], chunk[rows], u[rows], cap)
    new_C = np.empty_like(C)
    with accountant.parallel(label) as par:
        for j in range(k):
            new_C[j] = private_one_median(kept[j], epsilon, 0.0, bounds, rng, par.branch(), settings)
    return new_C


def _chunks(source, chunk_rows):
    if callable(source):
        return (np.asarray(c, dtype=np.float64) for c in source())
    return hst._iter_chunks(source, chunk_rows)


def _tree(X, epsilon, rng, acc, settings, bounds, d=None):
    d = X.shape[1] if d is None else d
    grid = hst.make_grid(d, bounds, settings["layers"], settings["split_fraction_range"], rng)
    idx = hst.cell_indices(X() if callable(X) else X, grid, int(settings["chunk_rows"]))
    return hst.build_private_tree(idx, grid, epsilon, rng, acc, float(settings["weight_threshold_factor"]))


def hst_kmedian(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """HST k-median + private Lloyd-median post-processing (module docstring)."""
    X = validate_inputs(X, k, epsilon, delta)
    return hst_kmedian_stream(X, X.shape[1], k, epsilon, delta, rng, settings)


def hst_kmedian_stream(source, d, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """`hst_kmedian` on row chunks: `source` is an (n, d) array, an h5py dataset, or a zero-argument
    callable returning a fresh iterable of chunks (read once for the tree, once per Lloyd step).
    Memory: the uint16 cell indices (2·d bytes per point), the released tree and k·20k sampled rows."""
    bounds = data_bounds(settings)
    acc = Accountant(epsilon, delta)
    T = int(settings["lloyd_iterations"])
    frac = float(settings["tree_budget_fraction"])
    if T < 0 or not (0 < frac <= 1) or (T > 0 and frac >= 1):
        raise DPClustError("tree_budget_fraction must be in (0, 1) (or 1 with lloyd_iterations = 0)")
    if T > 0:
        _check_step_settings(settings)  # before the tree spends anything
    eps_tree = epsilon * frac if T > 0 else epsilon
    tree = _tree(source, eps_tree, rng, acc, settings, bounds, d)
    C, tree_cost, n_distinct = dynamic_program.solve(tree, k, 1, float(settings["empty_cell_cost_factor"]))
    eps_step = (epsilon - eps_tree) / T if T > 0 else 0.0
    for it in range(T):
        C = private_lloyd_step(source, C, eps_step, bounds, rng, acc, settings, f"Lloyd-median step {it + 1}")
    return ClusteringResult.from_accountant(
        C, acc, iterations=T, tree_cells=tree.n_cells, tree_levels=len(tree.weights),
        tree_noise_scale=tree.noise_scale, tree_threshold=tree.threshold, tree_cost=tree_cost,
        dp_distinct_centres=n_distinct)


PRIVATE_LLOYD_DEFAULTS = {
    "iterations": 7,                    # STATED §6
    "init": "box",                      # STATED "random initial centres in the space"
    "max_points_per_cluster": 20000,    # as HST (STATED for HST; REC here)
    "chunk_rows": 262144,               # REC speed/memory only
    **ONE_MEDIAN_DEFAULTS,
    "one_median_smooth_lambda": 0.1,    # MISSING→REC (config explains; EXT-code 0.01 on data in [0, 2])
    "one_median_neighbouring": "replace",  # fixed-size samples: an added point acts as a replaced one
}


def private_lloyd(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Private Lloyd-median from random centres in the box (shared `init_seed`), ε/T per step."""
    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    if settings["init"] != "box":
        raise DPClustError("private_lloyd supports init: box only (random centres in the space)")
    acc = Accountant(epsilon, delta)
    T = int(settings["iterations"])
    if T < 1:
        raise DPClustError("iterations must be >= 1")
    _check_step_settings(settings)
    C = np.random.default_rng(settings["init_seed"]).uniform(lo, hi, size=(k, X.shape[1]))
    for it in range(T):
        C = private_lloyd_step(X, C, epsilon / T, (lo, hi), rng, acc, settings, f"Lloyd-median step {it + 1}")
    return ClusteringResult.from_accountant(C, acc, iterations=T)


HST_KMEANS_DEFAULTS = {**HST_DEFAULTS,
                       "lloyd_iterations": 0,          # REC: no k-means Lloyd step (a median step would change the objective)
                       "tree_budget_fraction": 0.9,    # REC
                       "size_budget_fraction": 0.1}    # REC: noisy cluster sizes of App. A


def _reverse_greedy(S: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """Chrobak et al. reverse greedy on the weighted instance {(s, w_s)} with centres from S (k-means
    cost): repeatedly drop the centre whose removal increases the cost least."""
    keep = list(range(S.shape[0]))
    D2 = ((S[:, None, :] - S[None, :, :]) ** 2).sum(-1)
    while len(keep) > k:
        sub = D2[np.ix_(keep, keep)]
        base = (sub.min(axis=1) * w[keep]).sum()
        incs = []
        for r in range(len(keep)):
            mask = np.ones(len(keep), bool)
            mask[r] = False
            incs.append((sub[:, mask].min(axis=1) * w[keep]).sum() - base)
        keep.pop(int(np.argmin(incs)))
    return S[keep]


def hst_kmeans(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """HST k-means extension (§5, simplified; see module docstring)."""
    X = validate_inputs(X, k, epsilon, delta)
    bounds = public_box(settings, X)
    acc = Accountant(epsilon, delta)
    T = int(settings["lloyd_iterations"])
    f_tree, f_size = float(settings["tree_budget_fraction"]), float(settings["size_budget_fraction"])
    ok = f_tree > 0 and f_size > 0 and (f_tree + f_size < 1 if T > 0 else abs(f_tree + f_size - 1) < 1e-12)
    if not ok:
        raise DPClustError("tree and size budget fractions must be positive and sum to 1 (lloyd_iterations = 0) "
                           "or leave budget for the Lloyd steps")
    if T > 0:
        _check_step_settings(settings)
    tree = _tree(X, epsilon * f_tree, rng, acc, settings, bounds)
    Z = float(settings["empty_cell_cost_factor"])
    C2, _, _ = dynamic_program.solve(tree, k, 2, Z)
    C1, _, _ = dynamic_program.solve(tree, k, 1, Z)
    S = np.unique(np.concatenate([C2, C1]), axis=0)
    labels, _ = assign(X, S)
    sizes = np.bincount(labels, minlength=S.shape[0]).astype(float)
    noisy = laplace_mechanism(sizes, 1.0, epsilon * f_size, rng, accountant=acc,
                              label="noisy cluster sizes (disjoint clusters, App. A)")
    C = _reverse_greedy(S, np.maximum(noisy, 0.0), k) if S.shape[0] > k else S
    if C.shape[0] < k:
        C = np.concatenate([C, np.repeat(C[-1:], k - C.shape[0], axis=0)])
    eps_step = epsilon * (1 - f_tree - f_size) / T if T > 0 else 0.0
    for it in range(T):
        C = private_lloyd_step(X, C, eps_step, bounds, rng, acc, settings, f"Lloyd-median step {it + 1}")
    return ClusteringResult.from_accountant(C, acc, iterations=T, tree_cells=tree.n_cells)


HSTKMedian = estimator_for(hst_kmedian, HST_DEFAULTS, "HSTKMedian")
HSTKMeans = estimator_for(hst_kmeans, HST_KMEANS_DEFAULTS, "HSTKMeans")
PrivateLloydMedian = estimator_for(private_lloyd, PRIVATE_LLOYD_DEFAULTS, "PrivateLloydMedian")
