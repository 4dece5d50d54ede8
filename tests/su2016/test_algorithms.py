"""Su et al. (2016): mechanisms, budgets, determinism, input errors (tiny data, fast)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpclust import estimators
from dpclust.accountant import Accountant
from dpclust.api import DPClustError
from dpclust.blocks.initialisation import sphere_packing_init
from dpclust.su2016 import dplloyd, eugkm, gupt, hybrid, lloyd, privgene

BOUNDS = [-1.0, 1.0]


def blobs(n=300, d=2, k=3, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.6, 0.6, size=(k, d))
    X = centres[rng.integers(0, k, size=n)] + rng.normal(0, 0.05, size=(n, d))
    return np.clip(X, -1, 1)


def settings(fn, **kw):
    """`fn`'s declared defaults with the runtime keys the runner adds (and `kw`)."""
    return dict(fn.settings.defaults(), bounds=BOUNDS, init_seed=7, **kw)


ALGS = [
    ("dplloyd-uniform", dplloyd.dplloyd, settings(dplloyd.dplloyd)),
    ("dplloyd-geometric", dplloyd.dplloyd, settings(dplloyd.dplloyd, allocation="geometric")),
    ("dplloyd-su_tops", dplloyd.dplloyd, settings(dplloyd.dplloyd, allocation="su_tops")),
    ("eugkm", eugkm.eugkm, settings(eugkm.eugkm)),
    ("gkm", gupt.gkm, settings(gupt.gkm)),
    ("gkm3k", gupt.gkm, settings(gupt.gkm, blocks="n/3k")),
    ("pgkm", privgene.pgkm, dict(settings(privgene.pgkm), pool_size=30)),
    ("hybrid-auto", hybrid.hybrid, settings(hybrid.hybrid)),
    ("hybrid-forced", hybrid.hybrid, settings(hybrid.hybrid, mode="forced")),
]


@pytest.mark.parametrize("name,fn,st", ALGS, ids=[a[0] for a in ALGS])
@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_spends_exactly_epsilon_and_is_deterministic(name, fn, st, eps):
    X = blobs()
    r1 = fn(X, 3, eps, 0.0, np.random.default_rng(5), dict(st))
    r2 = fn(X, 3, eps, 0.0, np.random.default_rng(5), dict(st))
    assert r1.epsilon_spent == pytest.approx(eps, rel=1e-9)
    assert r1.epsilon_spent <= eps * (1 + 1e-9)
    assert r1.centers.shape == (3, 2) and np.isfinite(r1.centers).all()
    assert r1.centers.tobytes() == r2.centers.tobytes()
    assert ((r1.centers >= -1) & (r1.centers <= 1)).all()


def test_uniform_allocation_noise_scale_is_d_r_plus_1_times_t_over_eps(monkeypatch):
    """§4.1.1: every count and sum gets Lap((d·r + 1)·t/ε)."""
    calls = []
    real = dplloyd.laplace_mechanism

    def spy(value, sensitivity, epsilon, rng, accountant=None, label=""):
        calls.append((sensitivity, epsilon))
        return real(value, sensitivity, epsilon, rng, accountant=accountant, label=label)

    monkeypatch.setattr(dplloyd, "laplace_mechanism", spy)
    X = blobs(d=3) * 0.5                                  # domain [-0.5, 0.5]^3 → r = 0.5
    st = {"bounds": [-0.5, 0.5], "init_seed": 1}                # declared defaults fill the rest
    dplloyd.dplloyd(X, 3, 0.8, 0.0, np.random.default_rng(0), st)
    assert len(calls) == 5
    for sens, eps in calls:
        assert sens / eps == pytest.approx((3 * 0.5 + 1) * 5 / 0.8)


def test_noisy_counts_are_laplace_with_the_stated_scale():
    """KS test of the released counts: Lap((d·r + 1)/ε_iter) around the true counts."""
    X = blobs(n=200)
    C = np.array([[-0.6, -0.6], [0.0, 0.0], [0.6, 0.6]])
    from dpclust.metrics import assign
    true = np.bincount(assign(X, C)[0], minlength=3)
    rng = np.random.default_rng(3)
    st = settings(dplloyd.dplloyd)
    noise = []
    for _ in range(600):
        acc = Accountant(1.0)
        _, counts, _ = dplloyd.noisy_lloyd_step(X, C, (0.2, None), acc, rng, 1.0, BOUNDS, st, "it")
        noise.extend(counts - true)
    scale = (2 * 1.0 + 1) / 0.2
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(noise, stats.laplace(scale=scale / 2).cdf).pvalue < 1e-6


def test_allocations_sum_to_epsilon_and_su_tops_split():
    st = settings(dplloyd.dplloyd)
    for how in ("uniform", "geometric"):
        b = dplloyd.iteration_budgets(0.7, dict(st, allocation=how), 5000, 15, 2)
        assert sum(e for e, _ in b) == pytest.approx(0.7)
    g = dplloyd.iteration_budgets(1.0, dict(st, allocation="geometric"), 5000, 15, 2)
    assert all(g[i][0] == pytest.approx(2 * g[i + 1][0]) for i in range(len(g) - 1))
    for n, k, d, eps in [(5000, 15, 2, 0.05), (48842, 5, 6, 2.0), (10000, 3, 10, 1.0), (10**6, 2, 2, 10.0)]:
        T, e0, es = dplloyd.su_tops_schedule(eps, n, k, d, 0.225)
        assert 2 <= T <= 7
        assert T * (e0 + d * es) == pytest.approx(eps)                  # never overspends
        assert e0 / es == pytest.approx((4 * d * 0.225 ** 2) ** (1 / 3))  # intended count:sum split


def test_sphere_packing_is_data_independent_spread_and_seeded():
    C = sphere_packing_init(5, 2, BOUNDS, seed=11)
    assert C.tobytes() == sphere_packing_init(5, 2, BOUNDS, seed=11).tobytes()
    assert C.tobytes() != sphere_packing_init(5, 2, BOUNDS, seed=12).tobytes()
    d2 = ((C[:, None] - C[None]) ** 2).sum(-1) + np.eye(5) * 9
    margin = np.minimum(C - (-1), 1 - C).min()
    # the radius found (≥ margin-consistent): pairwise distance ≥ 2a and distance to border ≥ a
    assert np.sqrt(d2.min()) >= 2 * margin - 1e-9
    assert margin > 0.2                                                  # 5 centres in [-1,1]^2 fit with a > 0.2
    single = sphere_packing_init(1, 2, BOUNDS, seed=0)
    assert np.abs(single).max() < 0.01                                   # k = 1: a → 1, centre at the middle


def test_shared_init_between_dplloyd_and_baseline():
    X = blobs()
    st = settings(lloyd.lloyd)
    from dpclust.su2016.common import initial_centers
    C0 = initial_centers(X, 3, settings(dplloyd.dplloyd))
    assert np.allclose(C0, initial_centers(X, 3, st))


def test_eugkm_runs_from_dplloyds_initial_sets_via_the_runner_pool():
    """§5.1: EUGkM uses "the same 30 sets of initial centroids as those generated for DPLloyd"."""
    from dpclust.su2016.common import initial_centers

    pool = [101, 202, 303, 404]
    st = settings(eugkm.eugkm, n_init_sets=3, init_pool_seeds=pool)
    seeds = eugkm.initial_set_seeds(st)
    assert seeds == pool[:3]
    X = blobs()
    for j in range(3):  # DPLloyd's run with init_seed = pool[j] starts from EUGkM's j-th set
        dp_init = initial_centers(X, 3, dict(settings(dplloyd.dplloyd), init_seed=pool[j]))
        assert np.array_equal(dp_init, initial_centers(X[:0], 3, st, seed=seeds[j]))
    with pytest.raises(DPClustError, match="pool has 4"):
        eugkm.initial_set_seeds(settings(eugkm.eugkm, init_pool_seeds=pool))  # n_init_sets 30 > 4
    assert len(eugkm.initial_set_seeds(settings(eugkm.eugkm))) == 30  # library use: derived from init_seed


def test_runner_passes_the_init_pool_only_with_init_sets(monkeypatch, tmp_path):
    from dpclust.api import ClusteringResult
    from dpclust.data import write_processed
    from dpclust.pipeline import run_job as runner

    seen = []

    def spy(X, k, epsilon, delta, rng, st):
        seen.append((st["init_seed"], st.get("init_pool_seeds")))
        return ClusteringResult(centers=X[:k].copy(), epsilon_spent=0.0)

    monkeypatch.setattr(runner, "import_object", lambda name: spy)
    data = tmp_path / "iris.h5"
    write_processed(data, np.random.default_rng(0).random((20, 4)), None, {"name": "iris", "source": "test"})
    spec = {"dataset": "iris", "dataset_entry": {"name": "iris"}, "transform": "minmax_01", "algorithm": "spy",
            "function": "spy:spy", "private": False, "settings": {}, "k": 2, "epsilon": None, "delta": 0.0,
            "seeds": [0, 2], "base_seed": 0, "store_centers": False}
    pool = [runner.derive_seed(0, "init", "iris", 2, j) for j in range(3)]
    for init_sets, expected_pool in ((3, pool), (None, None)):
        seen.clear()
        assert runner.run_spec(dict(spec, init_sets=init_sets), str(data))["status"] == "ok"
        assert [p for _, p in seen] == [expected_pool] * 2
        if init_sets:  # run s starts from pool member s mod init_sets
            assert [s for s, _ in seen] == [pool[0], pool[1]]


def test_eugkm_grid_and_all_cells_noisy():
    M, m = eugkm.grid_cells(5000, 1.0, 2, 10.0)
    assert M == pytest.approx(500.0) and m == 23
    M, m = eugkm.grid_cells(10000, 1.0, 10, 10.0)
    assert M == pytest.approx(1000 ** (20 / 12)) and m == 4
    X = blobs(n=400)
    acc = Accountant(1.0)
    syn = eugkm.synopsis(X, 1.0, np.random.default_rng(0), settings(eugkm.eugkm), acc)
    assert syn.info["cells_total"] == syn.grid.total == syn.weights.size          # every cell released
    assert (syn.weights < 0).any()                                                 # unrounded, negative kept
    assert acc.spent_epsilon == pytest.approx(1.0)


def test_eugkm_releases_every_cell_with_laplace_noise():
    """Every cell's released value is its count plus Lap(1/ε): empty cells are pure Laplace noise
    (no threshold, no sampling: the paper's synopsis, §4.2)."""
    X = np.full((50, 2), -0.99)                                            # one occupied cell
    st = settings(eugkm.eugkm, theta=1.0)
    rng = np.random.default_rng(1)
    empty_vals, occ_vals = [], []
    for _ in range(200):
        syn = eugkm.synopsis(X, 2.0, rng, st, Accountant(2.0))
        occ = syn.grid.cell_of(X[:1])[0]
        mask = np.ones(syn.grid.total, bool)
        mask[occ] = False
        empty_vals.extend(syn.weights[mask])
        occ_vals.append(syn.weights[occ] - 50)
    assert syn.weights.size == syn.grid.total == syn.info["cells_per_dim"] ** 2
    assert stats.kstest(empty_vals, stats.laplace(scale=0.5).cdf).pvalue > 1e-3
    assert stats.kstest(occ_vals, stats.laplace(scale=0.5).cdf).pvalue > 1e-3


def _naive_weighted_lloyd(P, w, inits, max_iter, tol, bounds):
    """Reference: weighted Lloyd over every cell, float64, one set at a time, written directly."""
    out, costs, its = [], [], []
    for C in inits:
        C = C.copy()
        it = 0
        for _ in range(max_iter):
            lab = ((P[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)
            cnt = np.bincount(lab, w, minlength=len(C))
            S = np.stack([np.bincount(lab, w * P[:, i], minlength=len(C)) for i in range(P.shape[1])], 1)
            new = C.copy()
            new[cnt > 0] = S[cnt > 0] / cnt[cnt > 0, None]
            np.clip(new, *bounds, out=new)
            shift = np.sqrt(((new - C) ** 2).sum(1)).max()
            C, it = new, it + 1
            if shift <= tol:
                break
        lab = ((P[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)
        out.append(C)
        costs.append(float((w * ((P - C[lab]) ** 2).sum(1)).sum()))
        its.append(it)
    return np.array(out), np.array(costs), np.array(its)


@pytest.mark.parametrize("m,d,k", [(7, 2, 3), (4, 3, 4), (3, 5, 2), (5, 1, 2)])
def test_grid_lloyd_is_the_weighted_lloyd_over_every_cell(m, d, k):
    """The fast grid Lloyd (the compiled float64 labels + separable sums) equals a direct weighted
    Lloyd over every cell centre, negative weights included."""
    rng = np.random.default_rng(m * 10 + d)
    grid = eugkm.Grid(m, d, -1.0, 2.0 / m)
    w = rng.laplace(0, 1, grid.total) + rng.poisson(3, grid.total) * (rng.random(grid.total) < 0.3)
    syn = eugkm.Synopsis(grid, w, {})
    inits = rng.uniform(-0.8, 0.8, (4, k, d))
    got = eugkm.grid_lloyd(syn, inits, 10, 1e-4, (-1.0, 1.0))
    ref = _naive_weighted_lloyd(grid.centres(), w, inits, 10, 1e-4, (-1.0, 1.0))
    assert np.allclose(got[0], ref[0], atol=1e-12) and np.allclose(got[1], ref[1], rtol=1e-10)
    assert (got[2] == ref[2]).all()


def test_eugkm_output_is_lloyd_on_the_full_synopsis_not_a_thresholded_one():
    """Regression (the synopsis kept ~5,000 cells above a threshold): EUGkM's centres are those of
    the weighted Lloyd on every cell of the released synopsis, from the same 30 sets."""
    X = blobs(n=600, d=3, k=3)
    st = settings(eugkm.eugkm, theta=0.3)                                  # 21^3 > 5,000 cells
    r = eugkm.eugkm(X, 3, 1.0, 0.0, np.random.default_rng(4), dict(st))
    assert r.info["cells_total"] > 5000
    syn = eugkm.synopsis(X, 1.0, np.random.default_rng(4), st, Accountant(1.0))
    seeds = eugkm.initial_set_seeds(st)
    inits = np.stack([eugkm.initial_centers(np.zeros((3, 3)), 3, st, seed=s) for s in seeds])
    C, cost, _ = _naive_weighted_lloyd(syn.grid.centres(), syn.weights, inits, st["lloyd_max_iter"],
                                       st["lloyd_tol"], (-1.0, 1.0))
    assert np.allclose(r.centers, C[int(np.argmin(cost))], atol=1e-9)
    with pytest.raises(DPClustError):
        eugkm.eugkm(X, 3, 1.0, 0.0, np.random.default_rng(4), dict(st, max_synopsis_cells=5000))


def test_eugkm_refuses_a_grid_above_the_memory_guard():
    from dpclust.api import Refused

    with pytest.raises(Refused, match="max_grid_cells"):
        eugkm.eugkm(blobs(), 3, 1.0, 0.0, np.random.default_rng(0), settings(eugkm.eugkm, max_grid_cells=10))


def test_gkm_blocks_and_range():
    assert gupt.num_blocks("n^0.4", 5000, 15) == 30
    assert gupt.num_blocks("n/3k", 5000, 15) == 111
    assert gupt.num_blocks("n^0.9", 5000, 15) == 5000 // 15               # clamped: blocks hold ≥ k points
    v = np.linspace(-0.5, 0.5, 101)
    qs = [gupt.private_quantile(v, 0.5, -1, 1, 50.0, np.random.default_rng(s), None, "") for s in range(50)]
    assert abs(np.median(qs)) < 0.1


@pytest.mark.parametrize("blocks,k,d", [("n^0.4", 5, 2), ("n/3k", 3, 4), ("n^0.6", 4, 1), ("n^0.2", 6, 3)])
def test_block_kmeans_leaving_converged_blocks_out_gives_the_same_bytes(blocks, k, d):
    """Blocks at their fixed point leave the iterations (an optimisation): the centres must be the
    bytes of running every block for every iteration, ties included (points on a coarse lattice)."""
    rng = np.random.default_rng(7)
    for X in (rng.uniform(-1, 1, size=(3000, d)), np.round(rng.uniform(-1, 1, size=(3000, d)) * 2) / 2):
        ell = gupt.num_blocks(blocks, X.shape[0], k)
        for seed in range(3):
            fast = gupt.block_kmeans(X, ell, k, 20, 10, np.random.default_rng(seed))
            full = gupt.block_kmeans(X, ell, k, 20, 10, np.random.default_rng(seed), freeze_converged=False)
            assert fast.tobytes() == full.tobytes()


@pytest.mark.parametrize("blocks,k,d", [("n^0.4", 5, 2), ("n/3k", 3, 40), ("n^0.2", 6, 3)])
def test_block_kmeans_gives_the_same_bytes_whatever_the_chunk(blocks, k, d):
    """Blocks are clustered a chunk at a time (an optimisation): one block per chunk, a few, or all
    at once must give the same bytes."""
    X = np.random.default_rng(11).uniform(-1, 1, size=(2000, d))
    ell = gupt.num_blocks(blocks, X.shape[0], k)
    outs = [gupt.block_kmeans(X, ell, k, 7, 10, np.random.default_rng(5), chunk_bytes=c).tobytes()
            for c in (1, 7 * k * (d + 2) * 8 * 3, 1 << 40)]
    assert outs[0] == outs[1] == outs[2]


@pytest.mark.parametrize("a,R,k,B,d", [(3, 20, 10, 30, 784), (5, 4, 3, 9, 2), (2, 3, 16, 800, 50),
                                       (1, 1, 1, 1, 1), (4, 2, 5, 1500, 7), (7, 18, 13, 65, 218)])
def test_cluster_sums_are_the_bytes_of_one_bincount_per_restart_and_dimension(a, R, k, B, d):
    """Block k-means sums each cluster's points one at a time in the block's order from 0: the
    bytes of numpy's weighted bincount (which adds in index order), on general float64 values,
    with padding rows (zero, weight 0) and empty clusters."""
    rng = np.random.default_rng(a * 1000 + B)
    X = rng.standard_normal((a, B, d)) * 10.0 ** rng.integers(-8, 8, (a, B, 1))
    w = (rng.random((a, B)) < 0.9).astype(np.float64)
    X *= w[..., None]
    lab = rng.integers(0, k, (a, R, B)).astype(np.min_scalar_type(k))
    counts, sums = gupt.cluster_sums(lab, X, w, k)
    for b in range(a):
        for r in range(R):
            assert counts[b, r].tobytes() == np.bincount(lab[b, r], weights=w[b], minlength=k).tobytes()
            for f in range(d):
                assert sums[b, r, :, f].tobytes() == np.bincount(lab[b, r], weights=X[b, :, f], minlength=k).tobytes()


def test_block_labels_are_numpys_argmin_ties_included():
    """Block k-means labels a point by its nearest centre, ties to the lowest index (as argmin)."""
    rng = np.random.default_rng(3)
    D = rng.integers(0, 3, size=(4, 5, 6, 7)).astype(float)       # (blocks, k, R, B), many ties
    for dtype in (np.float64, np.float32):
        m, lab = np.empty((4, 6, 7), dtype=dtype), np.empty((4, 6, 7), dtype=np.uint8)
        gupt.min_and_first_argmin(D.astype(dtype), m, lab)
        assert np.array_equal(lab, D.argmin(axis=1)) and np.array_equal(m, D.min(axis=1))


def test_hybrid_threshold_matches_inequality_15():
    # §6.4: on Adult-num (N=48,841, d=6, k=5) the rule falls back to EUGkM at ε = 0.05; on Gowalla
    # (N=107,091, d=2, k=5) the hybrid is applied at ε = 0.7 (its NICV differs from EUGkM's there)
    e_adult = hybrid.epsilon_threshold(48841, 5, 6, 1.0, 1.0, 0.225, 10.0)
    e_gowalla = hybrid.epsilon_threshold(107091, 5, 2, 1.0, 1.0, 0.225, 10.0)
    assert 0.05 < e_adult and e_gowalla < 0.7
    X_adult = hybrid.epsilon_threshold(48841, 5, 6, 1.0, 1.0, 0.0, 10.0)
    assert X_adult < e_adult                                            # ρ enters X through (1 + (2ρr)²)
    X = blobs()
    r = hybrid.hybrid(X, 3, 0.05, 0.0, np.random.default_rng(0), settings(hybrid.hybrid, mode="forced"))
    assert r.info["hybrid_applied"] is True
    assert [c[0] for c in r.ledger] == ["hybrid: EUGkM part", "hybrid: one DPLloyd iteration"]


def test_gene_trace_and_lloyd_trace():
    X = blobs()
    g = privgene.gene(X, 3, None, 0.0, np.random.default_rng(0), settings(privgene.gene, generations=6, pool_size=30))
    assert len(g.info["trace_nicv"]) == 6 and np.all(np.diff(g.info["trace_nicv"]) <= 1e-12)
    res = lloyd.lloyd(X, 3, None, 0.0, None, settings(lloyd.lloyd, record_trace=True))
    assert res.info["trace_nicv"][-1] <= res.info["trace_nicv"][0]


@pytest.mark.parametrize("bad", [
    lambda X: dplloyd.dplloyd(X, 3, 1.0, 0.0, np.random.default_rng(0), settings(dplloyd.dplloyd, allocation="nope")),
    lambda X: dplloyd.dplloyd(X, 3, 1.0, 0.0, np.random.default_rng(0),
                              {k: v for k, v in settings(dplloyd.dplloyd).items() if k != "bounds"}),
    lambda X: dplloyd.dplloyd(X, 400, 1.0, 0.0, np.random.default_rng(0), settings(dplloyd.dplloyd)),
    lambda X: eugkm.eugkm(X, 3, -1.0, 0.0, np.random.default_rng(0), settings(eugkm.eugkm)),
    lambda X: gupt.gkm(X, 3, 1.0, 0.0, np.random.default_rng(0), settings(gupt.gkm, blocks="sqrt")),
    lambda X: hybrid.hybrid(X, 3, 1.0, 0.0, np.random.default_rng(0), settings(hybrid.hybrid, mode="x")),
    lambda X: eugkm.eugkm(X, 3, 1.0, 0.0, np.random.default_rng(0), settings(eugkm.eugkm, init="random_points")),
    lambda X: dplloyd.dplloyd(np.full((10, 2), np.nan), 3, 1.0, 0.0, np.random.default_rng(0),
                              settings(dplloyd.dplloyd)),
    lambda X: dplloyd.dplloyd(X * 3, 3, 1.0, 0.0, np.random.default_rng(0),
                              settings(dplloyd.dplloyd)),   # outside the box
    lambda X: eugkm.eugkm(X + 2, 3, 1.0, 0.0, np.random.default_rng(0), settings(eugkm.eugkm)),
    lambda X: privgene.pgkm(X - 2, 3, 1.0, 0.0, np.random.default_rng(0), settings(privgene.pgkm)),
])
def test_bad_input_raises_one_clear_error(bad):
    with pytest.raises(DPClustError):
        bad(blobs())


def test_estimators():
    X = blobs()
    est = estimators.DPLloyd(n_clusters=3, epsilon=1.0, random_state=0, settings={"bounds": BOUNDS}).fit(X)
    assert est.cluster_centers_.shape == (3, 2) and est.epsilon_spent_ == pytest.approx(1.0)
    for Est in (estimators.EUGkM, estimators.GkM, estimators.Hybrid):
        assert Est(n_clusters=3, epsilon=0.5, random_state=1,
                   settings={"bounds": BOUNDS}).fit(X).epsilon_spent_ == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------
# Review regressions (each failed before its fix) and calibration checks of the GkM / PGkM draws
# ---------------------------------------------------------------------------------------------
def test_hybrid_rejects_a_data_dependent_init():
    """The hybrid runs EUGkM's Lloyd from its 30 sets: they must be data independent (as for EUGkM)."""
    with pytest.raises(DPClustError):
        hybrid.hybrid(blobs(), 3, 1.0, 0.0, np.random.default_rng(0), settings(hybrid.hybrid, init="random_points"))


def test_eugkm_synopsis_is_indexed_by_grid_cell():
    """The released vector is in grid order: weight t belongs to cell t (not "non-empty cells
    first", which would tell where the data is)."""
    X = blobs(n=300) * 0.3
    syn = eugkm.synopsis(X, 1.0, np.random.default_rng(0), settings(eugkm.eugkm), Accountant(1.0))
    lin = syn.grid.cell_of(syn.grid.centres())
    assert (lin == np.arange(syn.grid.total)).all()


def test_gkm_private_quantile_follows_the_exponential_mechanism_law():
    """Pr[interval] ∝ length · exp(ε/2 · −|rank − qℓ|) (Δrank = 1); a doubled logit is rejected."""
    v, eps = np.array([-0.5, 0.0, 0.5]), 2.0
    edges = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    u = -np.abs(np.arange(4) - 0.5 * 3)
    rng = np.random.default_rng(0)
    out = np.array([gupt.private_quantile(v, 0.5, -1.0, 1.0, eps, rng, None, "") for _ in range(4000)])
    obs = np.bincount(np.searchsorted(edges, out, side="right") - 1, minlength=4)
    for logit, should_fit in ((eps / 2, True), (eps, False)):
        p = 0.5 * np.exp(logit * u)
        p /= p.sum()
        pval = stats.chisquare(obs, 4000 * p).pvalue
        assert (pval > 1e-3) if should_fit else (pval < 1e-6)
    acc = Accountant(1.0)
    gupt.private_quantile(v, 0.5, -1.0, 1.0, 0.25, rng, acc, "q")
    assert acc.spent_epsilon == pytest.approx(0.25)


def test_gkm_charges_half_for_the_range_and_half_for_eq3():
    r = gupt.gkm(blobs(), 3, 0.8, 0.0, np.random.default_rng(0), settings(gupt.gkm))
    rng_part = sum(e for label, e, _ in r.ledger if label.startswith("GkM range"))
    eq3 = [e for label, e, _ in r.ledger if label.startswith("GkM Eq. (3)")]
    assert len([1 for label, _, _ in r.ledger if label.startswith("GkM range")]) == 2 * 3 * 2
    assert rng_part == pytest.approx(0.4) and eq3 == [pytest.approx(0.4)]


def test_gkm_per_dimension_range_is_one_range_per_dimension_at_rank_sensitivity_k(monkeypatch):
    """Eq. 3's literal reading: 2d draws of ε/2/(2d) each over the k·ℓ values of a dimension, whose
    ranks one tuple moves by k (logit ε'/(2k)); every centroid gets its dimension's range."""
    logits = []
    real = gupt.mech.exponential_logit_scale

    def spy(sensitivity, epsilon, monotonic=False):
        logits.append((sensitivity, epsilon))
        return real(sensitivity, epsilon, monotonic)

    monkeypatch.setattr(gupt.mech, "exponential_logit_scale", spy)
    k, d = 3, 2
    r = gupt.gkm(blobs(), k, 0.8, 0.0, np.random.default_rng(0),
                 {**settings(gupt.gkm), "output_range": "per_dimension"})
    ranges = [(label, e) for label, e, _ in r.ledger if label.startswith("GkM range")]
    assert [label for label, _ in ranges] == [f"GkM range {m}[{i}]" for i in range(d) for m in ("min", "max")]
    assert all(e == pytest.approx(0.4 / (2 * d)) for _, e in ranges)
    assert logits and all(s == k and e == pytest.approx(0.4 / (2 * d)) for s, e in logits)
    cents = np.random.default_rng(1).uniform(-1, 1, size=(20, k, d))
    mins, maxs = gupt.private_range(cents, -1.0, 1.0, 2.0, [0.0, 1.0], np.random.default_rng(2), None,
                                    "per_dimension")
    assert mins.shape == maxs.shape == (k, d)
    assert (mins == mins[0]).all() and (maxs == maxs[0]).all() and (mins <= maxs).all()
    with pytest.raises(DPClustError, match="output_range"):
        gupt.private_range(cents, -1.0, 1.0, 2.0, [0.0, 1.0], np.random.default_rng(2), None, "per_block")


def test_pgkm_selection_logit_is_eps_sel_over_2_delta(monkeypatch):
    """Every PGkM selection samples ∝ exp(−ε_sel·f/(2Δf)), Δf = d·(hi − lo)², ε_sel = ε/(rounds·m')."""
    costs, logits = [], []
    real_costs, real_sample = privgene.pool_costs, privgene.mech.sample_from_log_weights

    def spy_costs(*a, **kw):
        c = real_costs(*a, **kw)
        costs.append(c.copy())
        return c

    def spy_sample(logw, rng, *a, **kw):
        logits.append((len(costs), np.array(logw, dtype=float)))
        return real_sample(logw, rng, *a, **kw)

    monkeypatch.setattr(privgene, "pool_costs", spy_costs)
    monkeypatch.setattr(privgene.mech, "sample_from_log_weights", spy_sample)
    X, eps = blobs(d=3), 0.6
    st = dict(settings(privgene.pgkm), pool_size=30)
    r = privgene.pgkm(X, 3, eps, 0.0, np.random.default_rng(0), st)
    rounds = privgene.pgkm_rounds(X.shape[0], eps, st)
    eps_sel = eps / (rounds * st["selected"])
    delta_f = 3 * 2.0 ** 2
    assert len(logits) == rounds * st["selected"] == len(r.ledger)
    for rnd, logw in logits:      # softmax is shift invariant: the mechanism shifts by the best utility
        fin = np.isfinite(logw)
        ideal = -eps_sel / (2 * delta_f) * costs[rnd - 1][fin]
        assert np.allclose(logw[fin] - logw[fin].max(), ideal - ideal.max(), rtol=0, atol=1e-12 * np.abs(ideal).max())
    assert r.epsilon_spent == pytest.approx(eps)
    # every selection notes its floating-point δ (mechanisms.FLOATING_POINT_GUARANTEE) over the pool_size candidates
    per_call = privgene.mech.floating_point_delta("exponential", eps_sel, candidates=st["pool_size"])
    assert r.floating_point_delta == pytest.approx(rounds * st["selected"] * per_call)


def test_eugkm_uses_the_declared_cells_rounding_when_the_caller_omits_it():
    """A caller that gives no `cells_rounding` gets the declared default (round_log: 22 cells per
    dimension at N = 5000, d = 2, ε = 1), not the inventory's ceil (23)."""
    assert eugkm.eugkm.settings["cells_rounding"].default == "round_log"
    X = blobs(n=5000)
    r = eugkm.eugkm(X, 3, 1.0, 0.0, np.random.default_rng(0), {"bounds": BOUNDS, "init_seed": 7})
    assert r.info["cells_per_dim"] == eugkm.grid_cells(5000, 1.0, 2, 10.0, "round_log")[1] == 22
    assert eugkm.grid_cells(5000, 1.0, 2, 10.0, "ceil")[1] == 23


def _pool_costs_per_slot(X, pool, chunk_entries=4_000_000):
    """The reference: k GEMMs of the P candidates' [−2c; ‖c‖²] columns per row block, a running
    minimum, rows summed in order (pool_costs before it computed repeated centres once)."""
    P, k, d = pool.shape
    n = X.shape[0]
    X_sq = np.einsum("ij,ij->i", X, X)
    Xa = np.hstack([X, np.ones((n, 1))])
    slots = []
    for j in range(k):
        s = np.ascontiguousarray(pool[:, j, :].T)
        a = np.empty((d + 1, P))
        a[:d] = s * -2.0
        a[d] = np.einsum("ij,ij->j", s, s)
        slots.append(a)
    out = np.zeros(P)
    step = max(1, chunk_entries // P)
    sub = max(1, min(step, privgene._CACHE_ENTRIES // P))
    best_buf, d_buf, part = np.empty((min(sub, n), P)), np.empty((min(sub, n), P)), np.empty(P)
    for s0 in range(0, n, step):
        s1 = min(s0 + step, n)
        part[:] = 0.0
        for r0 in range(s0, s1, sub):
            xb = Xa[r0:min(r0 + sub, s1)]
            best, D = best_buf[:xb.shape[0]], d_buf[:xb.shape[0]]
            np.matmul(xb, slots[0], out=best)
            for j in range(1, k):
                np.matmul(xb, slots[j], out=D)
                np.minimum(best, D, out=best)
            best += X_sq[r0:r0 + xb.shape[0], None]
            np.maximum(best, 0.0, out=best)
            best[0] += part
            np.sum(best, axis=0, out=part)
        out += part
    return out


@pytest.mark.parametrize("n, d, k, P, chunk", [(1000, 2, 15, 200, 4_000_000), (997, 3, 5, 200, 5_000),
                                               (1500, 100, 16, 200, 4_000_000), (2000, 784, 10, 200, 4_000_000),
                                               (700, 6, 4, 50, 4_000_000), (400, 40, 3, 64, 3_000)])
@pytest.mark.parametrize("gather_cost", [None, 0])     # None: the module's rule; 0: always the distinct columns
def test_pool_costs_computing_repeated_centres_once_gives_the_same_bits(n, d, k, P, chunk, gather_cost, monkeypatch):
    """Over GA rounds (children share most centres with their parents), the cost of every candidate
    equals, bit for bit, the per-slot GEMMs over the whole pool."""
    if gather_cost is not None:
        monkeypatch.setattr(privgene, "_GATHER_COST_PRODUCTS", gather_cost)
    rng = np.random.default_rng(n + d)
    X = rng.normal(size=(n, d)) * 7.0
    lo, hi = float(X.min()), float(X.max())
    pool = rng.uniform(lo, hi, size=(P, k, d))
    settings = {"mutation_scale": 0.5, "mutation_decay": 0.8}
    for rnd in range(3):
        want = _pool_costs_per_slot(X, pool, chunk)
        assert privgene.pool_costs(X, pool, chunk).tobytes() == want.tobytes(), f"round {rnd}"
        pool = privgene._offspring(pool[np.argsort(want)[:10]], P, rnd, settings, lo, hi, rng)
    if gather_cost == 0 and P % privgene._GEMM_COLUMN_ALIGN == 0:
        blocks, gather = privgene._gemm_blocks([np.zeros((d + 1, P)) + np.arange(P) % 7 for _ in range(k)])
        assert gather is not None and blocks[0].shape[1] % privgene._GEMM_COLUMN_ALIGN == 0   # the path was taken
