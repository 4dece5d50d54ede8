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
without replacement (STATED 20k; bottom-k sampling over row chunks), and replace the centre by
`private_one_median` of the sample with
the step's ε. Clusters are disjoint, so the step costs ε_step by parallel composition. Because a
fixed-size sample turns an added point into a replaced one, the 1-median uses replace-one
neighbours (Δ_b = 2L), which covers both cases (enforced: `one_median_neighbouring` must be
`replace`, else `DPClustError`). Empty clusters still get a private 1-median (of
the empty set), covered by the same guarantee.

Declared guarantees (`@declared(..., guarantee=...)`, checked against this code): all three are pure
ε-DP (δ spent = 0) for **add/remove of one record** of X, given the public box:
  * tree: Laplace counts with sensitivity 1 per level (disjoint cells), ε_tree/(D+1) per level;
  * a Lloyd step: the centres are public, so an added record joins one cluster; the uniform sample of
    at most ``max_points_per_cluster`` points of that cluster can be coupled with the old one so that
    it gains the record (cluster below the cap), swaps one point for it, or is unchanged; the
    1-median calibrated to replace-one neighbours of its input is ε_step-DP for both (its
    `one_median_guarantee`), the other clusters' samples are unchanged in distribution;
  * HST k-means: the same tree, post-processing, and Laplace sizes of the disjoint clusters.
The neighbouring relation of the whole algorithm is *not* replace-one: replacing a record moves two
tree counts per level and can change two clusters of a step (2ε-DP under replace-one). The only
configuration that would not be ε-DP, add/remove-calibrated 1-medians in capped steps, is declared
`not_dp` and refused (audited in tests/cohenaddad2022/test_audit.py). Not covered: a Newton solve of
the 1-median that misses its tolerance raises instead of releasing (see `blocks.one_median`).
"""

from __future__ import annotations

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import (
    ClusteringResult,
    DPClustError,
    data_bounds,
    validate_inputs,
)
from dpclust.blocks.domain import public_box
from dpclust.blocks.one_median import ONE_MEDIAN_SETTINGS, private_one_median
from dpclust.cohenaddad2022 import dynamic_program, hst
from dpclust.mechanisms import laplace_mechanism
from dpclust.metrics import assign, nearest
from dpclust.settings import Guarantee, Interval, Options, SequenceOf, Setting, declared, not_dp

# ---------------------------------------------------------------------------------------------
# declared settings (the one home of their defaults; config/papers/cohenaddad2022.yaml holds only
# named variants' overrides)
# ---------------------------------------------------------------------------------------------
#: Settings shared by every algorithm that runs capped private Lloyd-median steps (§6).
_ONE_MEDIAN_IN_LLOYD = {
    "one_median_smooth_lambda": Setting(
        0.1, "MISSING→REC smoothing λ of the norm in the 1-median: EXT-code uses 0.01 on data in [0, 2]; "
        "0.1 from a pilot on a synthetic 15-blob set, not the evaluation data",
        ONE_MEDIAN_SETTINGS["one_median_smooth_lambda"].check, ONE_MEDIAN_SETTINGS["one_median_smooth_lambda"].doc),
    "one_median_neighbouring": Setting(
        "replace", "REC, REQUIRED (add_remove is refused when Lloyd steps run): the sample of at most "
        "max_points_per_cluster points turns an added point into a replaced one → Δ_b = 2L",
        ONE_MEDIAN_SETTINGS["one_median_neighbouring"].check, ONE_MEDIAN_SETTINGS["one_median_neighbouring"].doc),
}
_LLOYD_STEP = {
    "max_points_per_cluster": Setting(
        20000, "STATED §6 'at most 20k points from each cluster' (for HST; the same for Private Lloyd, REC)",
        Interval(int, 1), "cap of the uniform sample of a cluster in one private Lloyd-median step"),
    "chunk_rows": Setting(
        262144, "REC speed/memory only: rows per chunk when computing cell indices and in a Lloyd pass",
        Interval(int, 1), "rows per chunk"),
}

HST_SETTINGS = ONE_MEDIAN_SETTINGS.extend(
    layers=Setting(
        10, "EXT-code --layers 10: one layer splits every dimension once, binary depth = layers·d",
        Interval(int, 1, hst.MAX_LAYERS), "layers of the shifted quadtree"),
    split_fraction_range=Setting(
        [1 / 3, 2 / 3], "EXT-code cut fraction per (layer, dimension) uniform in [1/3, 2/3]",
        SequenceOf(Interval(float, 0.0, 1.0, open_lo=True), length=2), "[a, b] with 0 < a ≤ b < 1"),
    weight_threshold_factor=Setting(
        3.0, "MISSING→REC weight parameter w = 3 × the Laplace scale of one level (paper: 'we tune'); a "
        "multiple of the noise scale keeps the stopping rule meaningful for every ε and depth",
        Interval(float), "split a cell iff its noisy count ≥ factor × the level's Laplace scale"),
    empty_cell_cost_factor=Setting(
        2.0, "EXT-code an empty subtree costs 2·diam·w in the dynamic program",
        Interval(float, 0.0), "Z of Alg. 3: f(c, 0) = Z·w(c)·diam(c)^p"),
    tree_budget_fraction=Setting(
        0.2, "INFERRED §6 'split the privacy budget uniformly' over the tree and 4 Lloyd iterations → ε/5",
        Interval(float, 0.0, 1.0, open_lo=True), "share of ε for the tree (< 1 when Lloyd steps run)"),
    lloyd_iterations=Setting(
        4, "STATED §6 '4 iterations of the Lloyd algorithm using the private 1-median'",
        Interval(int, 0), "private Lloyd-median steps after the dynamic program"),
    **_LLOYD_STEP,
    **_ONE_MEDIAN_IN_LLOYD,
)


# ---------------------------------------------------------------------------------------------
# declared guarantees (checked against the code; tests/cohenaddad2022/test_audit.py audits the parts)
# ---------------------------------------------------------------------------------------------
#: The neighbouring relation of every algorithm of this module: add or remove one record of X. Under
#: replace-one neighbours of X they are 2ε-DP, not ε-DP: a replaced record moves two tree counts per
#: level and may change two clusters of a Lloyd step.
ADD_REMOVE = "add/remove one record (n not released)"
RELATION = ADD_REMOVE + "; the Lloyd steps' 1-medians use replace-one of their capped samples"
_TREE = "Laplace tree counts, ε_tree/(D+1) per level, sensitivity 1 per level (disjoint cells, Lemma 3)"
_STEPS = ("private Lloyd-median steps: disjoint clusters (parallel composition); a cluster's uniform sample of at "
          "most max_points_per_cluster points gains or swaps one point when a record is added (coupling of the "
          "uniform samples), so its private 1-median is calibrated to replace-one (Δ_b = 2L), which covers both")


def _steps_guarantee(settings, parts: str) -> Guarantee:
    """ε-DP for add/remove of a record when the Lloyd steps' 1-medians use replace-one neighbours (the
    code refuses anything else before spending, `_check_step_settings`)."""
    if settings.get("one_median_neighbouring", "replace") != "replace":
        return not_dp("add/remove-calibrated 1-medians on capped samples: an added record can replace a "
                      "sampled point (the code refuses this configuration)", RELATION)
    return Guarantee("ε-DP", parts, RELATION)


def _hst_guarantee(settings) -> Guarantee:
    if int(settings.get("lloyd_iterations", 4)) == 0:
        return Guarantee("ε-DP", _TREE + "; the dynamic program is post-processing", ADD_REMOVE)
    return _steps_guarantee(settings, _TREE + "; the dynamic program is post-processing; " + _STEPS)


def _private_lloyd_guarantee(settings) -> Guarantee:
    return _steps_guarantee(settings, "initial centres uniform in the public box (shared init_seed); " + _STEPS)


def _hst_kmeans_guarantee(settings) -> Guarantee:
    parts = (_TREE + "; the p = 2 and p = 1 dynamic programs are post-processing; Laplace sizes of the disjoint "
             "clusters of the candidate centres (sensitivity 1); the reverse greedy is post-processing")
    if int(settings.get("lloyd_iterations", 0)) == 0:
        return Guarantee("ε-DP", parts, ADD_REMOVE)
    return _steps_guarantee(settings, parts + "; " + _STEPS)


def _bottom_k_merge(pts, keys, chunk, rows, new_keys, cap):
    """Keep the `cap` rows with the smallest keys among the kept `pts` and the new rows
    `chunk[rows]` (keys `new_keys`): a uniform sample without replacement, mergeable. The keys are
    selected first, so only the rows kept are copied, in the order of (kept, new)."""
    keys = np.concatenate([keys, new_keys])
    if keys.size <= cap:
        return np.concatenate([pts, chunk[rows]]), keys
    sel = np.argpartition(keys, cap - 1)[:cap]
    sel.sort()
    split = int(np.searchsorted(sel, pts.shape[0]))          # the kept rows come first
    return np.concatenate([pts[sel[:split]], chunk[rows[sel[split:] - pts.shape[0]]]]), keys[sel]


def _check_step_settings(settings) -> None:
    """The capped sample of a Lloyd step turns an added point into a replaced one, so its 1-medians
    must be calibrated to replace-one neighbours; anything else is not ε-DP (see the capped-step audit
    in tests/cohenaddad2022/test_audit.py). Checked on the settings only (data independent)."""
    if settings["one_median_neighbouring"] != "replace":
        raise DPClustError("a private Lloyd-median step samples at most max_points_per_cluster points per "
                           "cluster and needs one_median_neighbouring: replace (Delta_b = 2L), got "
                           f"{settings['one_median_neighbouring']!r}")


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
                kept[j], keys[j] = _bottom_k_merge(kept[j], keys[j], chunk, rows, u[rows], cap)
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


@declared(HST_SETTINGS, guarantee=_hst_guarantee, objective="kmedian")
def hst_kmedian(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """HST k-median (Alg. 1–3) + private Lloyd-median post-processing (§6; module docstring)."""
    X = validate_inputs(X, k, epsilon, delta)
    return hst_kmedian_stream(X, X.shape[1], k, epsilon, delta, rng, settings)


def hst_kmedian_stream(source, d, k, epsilon, delta, rng, settings=None) -> ClusteringResult:
    """`hst_kmedian` on row chunks: `source` is an (n, d) array, an h5py dataset, or a zero-argument
    callable returning a fresh iterable of chunks (read once for the tree, once per Lloyd step).
    Memory: the uint16 cell indices (2·d bytes per point), the released tree and k·20k sampled rows.
    `settings` are those of `hst_kmedian` (`HST_SETTINGS`: defaults filled, unknown names refused)."""
    settings = HST_SETTINGS.complete(settings, where="hst_kmedian_stream")
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


PRIVATE_LLOYD_SETTINGS = ONE_MEDIAN_SETTINGS.extend(
    iterations=Setting(
        7, "STATED §6 Private Lloyd: 'number of iteration to be 7'", Interval(int, 1),
        "private Lloyd-median steps, ε/iterations each"),
    init=Setting(
        "box", "STATED §6 random initial centres in the space (uniform in the public box, shared init_seed)",
        Options("box"), "initial centres"),
    **_LLOYD_STEP,
    **_ONE_MEDIAN_IN_LLOYD,
)


@declared(PRIVATE_LLOYD_SETTINGS, guarantee=_private_lloyd_guarantee, objective="kmedian")
def private_lloyd(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Private Lloyd-median (§6 baseline) from random centres in the box (shared `init_seed`), ε/T per step."""
    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    acc = Accountant(epsilon, delta)
    T = int(settings["iterations"])
    _check_step_settings(settings)
    C = np.random.default_rng(settings["init_seed"]).uniform(lo, hi, size=(k, X.shape[1]))
    for it in range(T):
        C = private_lloyd_step(X, C, epsilon / T, (lo, hi), rng, acc, settings, f"Lloyd-median step {it + 1}")
    return ClusteringResult.from_accountant(C, acc, iterations=T)


HST_KMEANS_SETTINGS = HST_SETTINGS.extend(
    lloyd_iterations=Setting(
        0, "REC no Lloyd step for the k-means objective (a Lloyd-median step would change the objective)",
        Interval(int, 0), "private Lloyd-median steps after the reverse greedy"),
    tree_budget_fraction=Setting(
        0.9, "REC most of ε for the tree (§5 extension; the paper gives no split)",
        Interval(float, 0.0, 1.0, open_lo=True), "share of ε for the tree"),
    size_budget_fraction=Setting(
        0.1, "REC the noisy cluster sizes of App. A (reverse greedy instance) get the rest",
        Interval(float, 0.0, 1.0, open_lo=True), "share of ε for the noisy cluster sizes"),
)


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


@declared(HST_KMEANS_SETTINGS, guarantee=_hst_kmeans_guarantee)
def hst_kmeans(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """HST k-means extension (§5, Lemma 6, App. A; simplified, see module docstring)."""
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
