""""Coreset" baseline of Cohen-Addad et al. 2022 §6: the LSH-splits private coreset heuristic (Google
`differential-privacy/learning/clustering`), k-median variant with the private 1-median.

Algorithm (facts of the public LSH-splits design, re-implemented; interpretations marked):
  1. SimHash: ``lsh_depth`` (EXT 20) random Gaussian hyperplanes through the centre of the public
     box (the code centres the data; we use the box centre, which is public — ours) give every
     point a ``lsh_depth``-bit code; the prefixes form a binary prefix tree.
  2. Private prefix tree: every level t = 0..depth gets ε_tree/(depth + 1) and releases the counts of
     its (disjoint) nodes with Laplace(1/ε_level) (ours: pure ε Laplace instead of the code's
     discrete-Laplace + PLD accounting; Lemma-3-style parallel/sequential composition). A node
     branches iff its noisy count ≥ ``branching_threshold_factor`` × min_points (EXT 3×), and a leaf is
     kept iff its noisy count ≥ min_points, min_points = ``min_points_factor`` × the Laplace scale of
     a level (MISSING→REC: the code's 10·√d·σ/radius uses its Gaussian σ; this is the analogue).
  3. k-median variant (STATED "with the private 1-median"): each kept leaf releases the private
     1-median of its points with the remaining budget (leaves are disjoint: parallel composition),
     weighted by its released noisy count.
  4. Non-private weighted k-median on the coreset (post-processing): D¹ (k-median++) seeding and
     ``coreset_lloyd_iterations`` weighted Lloyd-median steps (weighted Weiszfeld) — ours, the code's
     k-means variant uses k-means++.

Declared guarantee (checked against this code): pure ε-DP for add/remove of one record given the
public box. A record sits in one node per level (sensitivity 1 per level, ε_tree/(depth+1) each) and
in at most one kept leaf, whose 1-median sees it added or removed (add/remove calibration Δ_b = L is
right: leaves are not subsampled); step 4 reads only released values.
"""

from __future__ import annotations

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.blocks.one_median import ONE_MEDIAN_SETTINGS, private_one_median
from dpclust.mechanisms import laplace_mechanism, laplace_scale
from dpclust.metrics import nearest
from dpclust.settings import Guarantee, Interval, Setting, declared

#: Declared settings of the Coreset baseline (the one home of their defaults). The 1-median keeps
#: add/remove neighbours (the declared default of `ONE_MEDIAN_SETTINGS`): the leaves are disjoint
#: and not subsampled.
CORESET_SETTINGS = ONE_MEDIAN_SETTINGS.extend(
    lsh_depth=Setting(
        20, "EXT LSH-splits (Google differential-privacy/learning/clustering) max depth 20",
        Interval(int, 1, 62), "SimHash bits = depth of the prefix tree"),
    tree_budget_fraction=Setting(
        0.5, "MISSING→REC half of ε for the prefix tree, half for the leaf 1-medians",
        Interval(float, 0.0, 1.0, open_lo=True), "share of ε for the prefix tree (< 1)"),
    min_points_factor=Setting(
        3.0, "MISSING→REC a leaf is kept if its noisy count ≥ 3 × the level's Laplace scale (the code's "
        "10·√d·σ/radius uses its Gaussian σ; this is the Laplace analogue)",
        Interval(float, 0.0), "min_points = factor × the Laplace scale of a level"),
    branching_threshold_factor=Setting(
        3.0, "EXT LSH-splits branching threshold = 3 × min_num_points_in_node",
        Interval(float, 0.0), "a node branches iff its noisy count ≥ factor × min_points"),
    coreset_lloyd_iterations=Setting(
        10, "REC weighted Lloyd-median iterations on the coreset (as kmed++, §6)",
        Interval(int, 0), "non-private weighted Lloyd-median steps on the released coreset"),
    one_median_smooth_lambda=Setting(
        0.1, "MISSING→REC as for HST (cohenaddad2022.private_lloyd.HST_SETTINGS)",
        ONE_MEDIAN_SETTINGS["one_median_smooth_lambda"].check, ONE_MEDIAN_SETTINGS["one_median_smooth_lambda"].doc),
)


def simhash_codes(X: np.ndarray, depth: int, centre: float, rng: np.random.Generator) -> np.ndarray:
    """`depth`-bit SimHash codes (int64) of the rows; hyperplanes through the box centre."""
    H = rng.standard_normal((X.shape[1], depth))
    bits = ((X - centre) @ H) > 0
    weights = (1 << np.arange(depth - 1, -1, -1)).astype(np.int64)
    return bits.astype(np.int64) @ weights


def _weighted_median(P, w, iters=100, tol=1e-9):
    y = (P * w[:, None]).sum(0) / w.sum()
    for _ in range(iters):
        d = np.sqrt(((P - y) ** 2).sum(1))
        inv = w / np.maximum(d, 1e-12)
        t = (P * inv[:, None]).sum(0) / inv.sum()
        if np.linalg.norm(t - y) <= tol:
            return t
        y = t
    return y


def weighted_kmedian(P: np.ndarray, w: np.ndarray, k: int, iterations: int, rng: np.random.Generator) -> np.ndarray:
    """Non-private weighted k-median: D¹ seeding then Lloyd-median with weighted Weiszfeld."""
    m = P.shape[0]
    if m <= k:
        return np.concatenate([P, np.repeat(P[-1:], k - m, axis=0)]) if m else None
    C = [P[rng.choice(m, p=w / w.sum())]]
    dist = np.sqrt(((P - C[0]) ** 2).sum(1))
    for _ in range(1, k):
        p = w * dist
        idx = rng.integers(m) if p.sum() <= 0 else rng.choice(m, p=p / p.sum())
        C.append(P[idx])
        dist = np.minimum(dist, np.sqrt(((P - P[idx]) ** 2).sum(1)))
    C = np.array(C)
    for _ in range(iterations):
        lab = nearest(P, C)  # chunked GEMM: no (m, k, d) temporary (m = #leaves can be ~1e5)
        for j in range(k):
            sel = lab == j
            if sel.any() and w[sel].sum() > 0:
                C[j] = _weighted_median(P[sel], w[sel])
    return C


def _coreset_guarantee(settings) -> Guarantee:
    """ε-DP for add/remove of a record: Laplace counts of the disjoint prefix-tree nodes, ε_tree/(depth+1)
    per level (sensitivity 1 per level); the leaves are disjoint and not subsampled, so each leaf's
    1-median sees one point added or removed (Δ_b = L with add_remove, 2L with replace: both are DP);
    the weighted k-median on the released coreset is post-processing."""
    relation = "add/remove one record (n not released)"
    return Guarantee("ε-DP", "Laplace prefix-tree counts (sensitivity 1 per level, disjoint nodes); private "
                     f"1-median per disjoint leaf ({settings.get('one_median_neighbouring', 'add_remove')} "
                     "calibration); weighted k-median on the coreset is post-processing", relation)


@declared(CORESET_SETTINGS, guarantee=_coreset_guarantee, objective="kmedian")
def lsh_coreset_kmedian(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """The LSH-splits private coreset, k-median variant (§6 "Coreset"; steps 1–4 of the module docstring)."""
    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    depth = int(settings["lsh_depth"])
    frac = float(settings["tree_budget_fraction"])
    if not 0 < frac < 1:
        raise DPClustError("tree_budget_fraction must be in (0, 1)")
    acc = Accountant(epsilon, delta)
    n = X.shape[0]
    codes = simhash_codes(X, depth, 0.5 * (lo + hi), rng)
    n_levels = depth + 1
    eps_level = epsilon * frac / n_levels
    scale = laplace_scale(1.0, eps_level)
    min_pts = float(settings["min_points_factor"]) * scale
    branch_thr = float(settings["branching_threshold_factor"]) * min_pts

    active = np.arange(n)
    node = np.zeros(n, dtype=np.int64)
    counts = np.array([n])
    leaf_of = np.full(n, -1, dtype=np.int64)
    leaf_w: list = []
    n_leaves = 0
    for t in range(n_levels):
        if counts.size:
            w = laplace_mechanism(counts.astype(float), 1.0, eps_level, rng, accountant=acc,
                                  label=f"LSH tree level {t} counts (disjoint nodes)")
        else:
            acc.spend(eps_level, 0.0, label=f"LSH tree level {t} counts (no node reached)")
            continue
        branch = (w >= branch_thr) if t < depth else np.zeros(w.shape, bool)
        keep_leaf = (~branch) & (w >= min_pts)
        leaf_index = np.full(w.shape, -1, dtype=np.int64)
        leaf_index[keep_leaf] = n_leaves + np.arange(int(keep_leaf.sum()))
        n_leaves += int(keep_leaf.sum())
        leaf_w.append(w[keep_leaf])
        stop = ~branch[node]
        leaf_of[active[stop]] = leaf_index[node[stop]]
        if t == depth or not branch.any():
            counts = np.empty(0, dtype=np.int64)
            active = active[:0]
            continue
        rank = np.cumsum(branch) - 1
        go = ~stop
        active, node = active[go], rank[node[go]]
        bit = (codes[active] >> (depth - 1 - t)) & 1
        node = 2 * node + bit
        counts = np.bincount(node, minlength=2 * int(branch.sum()))
    weights = np.concatenate(leaf_w) if leaf_w else np.empty(0)
    eps_leaf = epsilon - epsilon * frac
    sel = leaf_of >= 0
    order = np.argsort(leaf_of[sel], kind="stable")
    idx = np.nonzero(sel)[0][order]
    starts = np.searchsorted(leaf_of[idx], np.arange(n_leaves + 1))
    medians = np.empty((n_leaves, X.shape[1]))
    with acc.parallel("leaf 1-medians (disjoint leaves)") as par:
        for leaf in range(n_leaves):
            medians[leaf] = private_one_median(X[idx[starts[leaf]:starts[leaf + 1]]], eps_leaf, 0.0, (lo, hi),
                                               rng, par.branch(), settings)
    if n_leaves == 0:  # nothing survived: the released tree says so; spend the rest, return the centre
        acc.spend(eps_leaf, 0.0, label="leaf 1-medians (no leaf kept)")
        C = np.full((k, X.shape[1]), 0.5 * (lo + hi))
    else:
        C = weighted_kmedian(medians, np.maximum(weights, 1e-12), k, int(settings["coreset_lloyd_iterations"]), rng)
    return ClusteringResult.from_accountant(C, acc, iterations=int(settings["coreset_lloyd_iterations"]),
                                            coreset_size=n_leaves, min_points=min_pts)
