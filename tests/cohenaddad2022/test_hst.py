"""HST (Alg. 1-3), coreset and private Lloyd: structure, accounting, determinism, run records."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust.accountant import Accountant
from dpclust.api import DPClustError
from dpclust.cohenaddad2022 import dynamic_program, hst
from dpclust.cohenaddad2022.coreset import lsh_coreset_kmedian
from dpclust.cohenaddad2022.private_lloyd import (
    hst_kmeans,
    hst_kmedian,
    private_lloyd,
)
from dpclust.estimators import HSTKMedian
from dpclust.metrics import kmedian_cost


def _blobs(n=2000, k=4, seed=0, d=2):
    r = np.random.default_rng(seed)
    cent = r.uniform(0.15, 0.85, size=(k, d))
    return np.clip(cent[r.integers(k, size=n)] + r.normal(0, 0.02, size=(n, d)), 0, 1), cent


def test_cell_indices_same_for_array_chunks_and_h5(tmp_path):
    import h5py
    X, _ = _blobs(1000, d=3)
    grid = hst.make_grid(3, [0, 1], 4, [1 / 3, 2 / 3], np.random.default_rng(0))
    a = hst.cell_indices(X, grid, chunk_rows=10_000)
    b = hst.cell_indices((X[i:i + 77] for i in range(0, 1000, 77)), grid)
    with h5py.File(tmp_path / "x.h5", "w") as f:
        f["X"] = X
    with h5py.File(tmp_path / "x.h5", "r") as f:
        c = hst.cell_indices(f["X"], grid, chunk_rows=128)
    assert np.array_equal(a, b) and np.array_equal(a, c)
    # index = number of cut points strictly below the coordinate, < 2^layers
    assert a.max() < 16
    j = 1
    assert np.array_equal(a[j], (X[:, j][:, None] > grid.boundaries[j][None, :]).sum(1))


@pytest.mark.parametrize("layers", [1, 2, 7, 8, 16])
@pytest.mark.parametrize("fractions", [(1 / 3, 2 / 3), (0.01, 0.02), (0.98, 0.99)])
def test_interval_index_is_searchsorted_whatever_the_lookup_table(layers, fractions):
    """The lookup table (its size follows the layers: `lookup_bins`) only guesses; the index is exact
    even where the cut points crowd into one bin (fractions far from 1/2), at the cut points too."""
    rng = np.random.default_rng(layers)
    grid = hst.make_grid(1, [-1, 3], layers, fractions, rng)
    assert grid.luts[0].shape[0] == hst.lookup_bins(layers) <= hst.LOOKUP_BINS
    bnd = grid.boundaries[0]
    x = np.concatenate([rng.uniform(-1, 3, 5000), bnd, np.nextafter(bnd, 4), np.nextafter(bnd, -2), [-1.0, 3.0]])
    assert np.array_equal(grid.interval_index(0, x), np.searchsorted(bnd, x, side="left"))


def test_tree_counts_exact_at_huge_epsilon_and_budget_spent():
    X, _ = _blobs(500, d=2)
    grid = hst.make_grid(2, [0, 1], 3, [1 / 3, 2 / 3], np.random.default_rng(1))
    idx = hst.cell_indices(X, grid)
    acc = Accountant(1e6)
    tree = hst.build_private_tree(idx, grid, 1e6, np.random.default_rng(2), acc, weight_threshold_factor=-1.0)
    assert len(tree.weights) == grid.depth + 1
    for t, w in enumerate(tree.weights):
        assert abs(w.sum() - 500) < 1e-3  # every level partitions the points
        # each cell's count equals the number of points inside its box
        inside = ((X[:, None, :] > tree.lo[t][None]) | (tree.lo[t][None] == 0)) & (X[:, None, :] <= tree.hi[t][None])
        assert np.allclose(inside.all(-1).sum(0), w, atol=1e-3)
    assert math.isclose(acc.spent_epsilon, 1e6, rel_tol=1e-12)
    assert len(acc.ledger) == grid.depth + 1


def test_tree_stops_early_still_charges_every_level():
    X, _ = _blobs(50)
    grid = hst.make_grid(2, [0, 1], 10, [1 / 3, 2 / 3], np.random.default_rng(1))
    acc = Accountant(0.5)
    tree = hst.build_private_tree(hst.cell_indices(X, grid), grid, 0.5, np.random.default_rng(0), acc, 3.0)
    assert len(tree.weights) < grid.depth + 1
    assert math.isclose(acc.spent_epsilon, 0.5, rel_tol=1e-12) and len(acc.ledger) == grid.depth + 1


def test_dynamic_program_finds_the_heavy_cells():
    """Noise-free tree of 4 far-apart blobs: the DP puts one centre in each blob's cell."""
    X, cent = _blobs(4000, k=4, seed=3)
    grid = hst.make_grid(2, [0, 1], 6, [1 / 3, 2 / 3], np.random.default_rng(0))
    tree = hst.build_private_tree(hst.cell_indices(X, grid), grid, 1e6, np.random.default_rng(0), Accountant(1e6), 1e-7)
    C, cost, n_distinct = dynamic_program.solve(tree, 4, 1, 2.0)
    assert C.shape == (4, 2) and n_distinct == 4
    d = np.sqrt(((cent[:, None] - C[None]) ** 2).sum(-1)).min(1)
    assert d.max() < 0.1
    # more centres never cost more on the tree
    costs = [dynamic_program.solve(tree, k, 1, 2.0)[1] for k in (1, 2, 4, 8)]
    assert all(a >= b - 1e-9 for a, b in zip(costs, costs[1:]))


@pytest.mark.parametrize("fn", [hst_kmedian, private_lloyd, lsh_coreset_kmedian, hst_kmeans])
def test_algorithms_spend_exactly_and_are_deterministic(fn):
    X, _ = _blobs(1500)
    s = {"bounds": [0, 1], "init_seed": 4}       # every declared setting at its default
    a = fn(X, 4, 0.8, 0.0, np.random.default_rng(9), s)
    b = fn(X, 4, 0.8, 0.0, np.random.default_rng(9), s)
    assert a.centers.shape == (4, 2) and a.centers.tobytes() == b.centers.tobytes()
    assert math.isclose(a.epsilon_spent, 0.8, rel_tol=1e-9) and a.delta_spent == 0.0
    assert (a.centers >= 0).all() and (a.centers <= 1).all()


def test_hst_quality_improves_with_epsilon():
    X, _ = _blobs(3000, k=4, seed=5)
    s = {"bounds": [0, 1], "init_seed": 0, "one_median_smooth_lambda": 0.1}
    cost = {e: np.mean([kmedian_cost(X, hst_kmedian(X, 4, e, 0.0, np.random.default_rng(r), s).centers)
                        for r in range(3)]) for e in (0.05, 5.0)}
    assert cost[5.0] < cost[0.05]


def test_bad_inputs_raise_one_clear_error():
    X, _ = _blobs(100)
    s = {"bounds": [0, 1], "init_seed": 0}
    with pytest.raises(DPClustError):
        hst_kmedian(X * 2, 3, 1.0, 0.0, np.random.default_rng(0), s)       # outside the box
    with pytest.raises(DPClustError):
        hst_kmedian(X, 3, 1.0, 0.0, np.random.default_rng(0), {**s, "layers": 40})
    with pytest.raises(DPClustError):
        hst_kmedian(X, 3, 1.0, 0.0, np.random.default_rng(0), {k: v for k, v in s.items() if k != "bounds"})
    with pytest.raises(DPClustError):
        HSTKMedian(n_clusters=3, epsilon=-1.0, settings={"bounds": [0, 1]}).fit(X)


def test_run_records_spend_the_setting(repo, tmp_path):
    """Through the runner: every run of every algorithm of the paper records epsilon_spent = epsilon."""
    from dpclust.data import write_processed
    from dpclust.pipeline.configuration import load_config, run_spec_for
    from dpclust.pipeline.records import flatten
    from dpclust.pipeline.run_job import run_spec

    config = load_config(repo / "config")
    algorithms = {k: v for k, v in config["algorithms"].items() if v["paper"] == "cohenaddad2022"}
    X, _ = _blobs(800)
    path = tmp_path / "s1.h5"
    write_processed(path, X * 1000)
    for alg, entry in algorithms.items():
        eps = None if not entry.get("private", True) else 0.7
        rec = flatten(run_spec(run_spec_for(config, "s1", alg, 3, eps, seeds=(0, 2), transform="minmax_01"), str(path)))
        assert rec["status"] == "ok"
        for run in rec["runs"]:
            if eps is None:  # a non-private algorithm reports no ε
                assert run["epsilon_spent"] is None and run["delta_spent"] is None, alg
                continue
            assert math.isclose(run["epsilon_spent"], eps, rel_tol=1e-9, abs_tol=0.0), alg
            assert run["delta_spent"] == 0.0


def test_streaming_hst_equals_in_memory(tmp_path):
    """Map-reduce over row chunks (callable chunk source, h5py dataset) gives the same bytes."""
    import h5py

    from dpclust.cohenaddad2022.private_lloyd import hst_kmedian_stream

    X, _ = _blobs(3000, d=3)
    s = {"bounds": [0, 1], "init_seed": 0, "max_points_per_cluster": 300, "chunk_rows": 1000}
    a = hst_kmedian(X, 4, 1.0, 0.0, np.random.default_rng(7), s)
    b = hst_kmedian_stream(lambda: (X[i:i + 77] for i in range(0, 3000, 77)), 3, 4, 1.0, 0.0,
                           np.random.default_rng(7), s)
    with h5py.File(tmp_path / "x.h5", "w") as f:
        f["X"] = X
    with h5py.File(tmp_path / "x.h5", "r") as f:
        c = hst_kmedian_stream(f["X"], 3, 4, 1.0, 0.0, np.random.default_rng(7), s)
    assert a.centers.tobytes() == b.centers.tobytes() == c.centers.tobytes()
    assert math.isclose(b.epsilon_spent, 1.0, rel_tol=1e-12)


def test_bottom_k_sample_is_uniform_without_replacement():
    """Per-cluster cap: the kept rows are a uniform sample (each row kept with prob cap/n)."""
    from dpclust.cohenaddad2022.private_lloyd import _bottom_k_merge

    rng = np.random.default_rng(0)
    hits = np.zeros(50)
    for _ in range(2000):
        pts, keys = np.empty((0, 1)), np.empty(0)
        rows = np.arange(50, dtype=float)[:, None]
        u = rng.random(50)
        for lo in range(0, 50, 7):
            pts, keys = _bottom_k_merge(pts, keys, rows, np.arange(lo, min(lo + 7, 50)), u[lo:lo + 7], 10)
        assert len(np.unique(pts)) == 10
        hits[pts[:, 0].astype(int)] += 1
    p = hits / 2000
    assert np.abs(p - 0.2).max() < 5 * np.sqrt(0.2 * 0.8 / 2000)


def test_bottom_k_merge_keeps_the_rows_of_concatenating_then_selecting():
    """Selecting the keys first (an optimisation) keeps the same rows, in the same order, as
    concatenating every row and then selecting."""
    from dpclust.cohenaddad2022.private_lloyd import _bottom_k_merge

    rng = np.random.default_rng(4)
    chunk = rng.random((300, 3))
    for cap in (1, 25, 80, 500):
        pts, keys = np.empty((0, 3)), np.empty(0)
        ref_pts, ref_keys = pts, keys
        for _ in range(6):
            rows = np.sort(rng.choice(300, size=int(rng.integers(0, 60)), replace=False))
            u = rng.random(rows.size)
            pts, keys = _bottom_k_merge(pts, keys, chunk, rows, u, cap)
            ref_pts, ref_keys = np.concatenate([ref_pts, chunk[rows]]), np.concatenate([ref_keys, u])
            if ref_keys.size > cap:
                sel = np.sort(np.argpartition(ref_keys, cap - 1)[:cap])
                ref_pts, ref_keys = ref_pts[sel], ref_keys[sel]
            assert pts.tobytes() == ref_pts.tobytes() and keys.tobytes() == ref_keys.tobytes()


def test_coreset_weighted_kmedian_has_no_m_by_k_by_d_temporary():
    """Regression: the Lloyd-median assignment broadcast an (m, k, d) array (≈ 1 GB for ~1e5 leaves
    of HIGGS at k = 50); it now uses the chunked `metrics.nearest`."""
    import tracemalloc

    from dpclust.cohenaddad2022.coreset import weighted_kmedian

    r = np.random.default_rng(0)
    P, w = r.random((4000, 20)), r.random(4000) + 0.1
    tracemalloc.start()
    try:
        C = weighted_kmedian(P, w, 40, 2, np.random.default_rng(1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert C.shape == (40, 20)
    assert peak < 4000 * 40 * 20 * 8 / 3     # the broadcast alone was 25.6 MB


@pytest.mark.parametrize("fn, defaults", [(hst_kmedian, {}), (private_lloyd, {}),
                                          (hst_kmeans, {"lloyd_iterations": 1, "tree_budget_fraction": 0.5})])
def test_lloyd_steps_refuse_add_remove_one_medians(fn, defaults):
    """Regression: `one_median_neighbouring: add_remove` was silently accepted for the capped Lloyd
    steps, whose 1-medians then are not ε-DP (the capped-step audit measures ε ≈ 1.5 for ε = 1);
    it is now refused before anything is spent."""
    X, _ = _blobs(300)
    s = {**defaults, "bounds": [0, 1], "init_seed": 0, "one_median_neighbouring": "add_remove"}
    with pytest.raises(DPClustError, match="replace"):
        fn(X, 3, 1.0, 0.0, np.random.default_rng(0), s)
