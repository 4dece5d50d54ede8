"""Algorithm 4 (+ SuLQ refinement), the k-median variant and the baselines: budgets, determinism,
clear errors, and utility sanity on easy data."""
import json

import numpy as np
import pytest

from dpclust.api import DPClustError
from dpclust.balcan2017.algorithm import balcan, balcan_kmedian, stage_budgets
from dpclust.balcan2017.kvariates import kvariates, kvariates_simhash
from dpclust.balcan2017.partition import partition_illustration
from dpclust.balcan2017.sample_aggregate import sample_aggregate
from dpclust.balcan2017.sulq import sulq
from dpclust.estimators import Balcan, BalcanKMedian
from dpclust.metrics import kmeans_cost

SET = {"bounds": [0.0, 1.0], "init_seed": 7}


@pytest.fixture
def wide(rng):
    """2,000 points in [0, 1]^8 around 4 centres (projection p = floor(ln(2000)/2) = 3)."""
    C = rng.uniform(0.2, 0.8, size=(4, 8))
    return np.clip(C[rng.integers(4, size=2000)] + 0.02 * rng.normal(size=(2000, 8)), 0, 1)


def test_stage_budgets_sum_to_epsilon():
    eps = stage_budgets(0.7, balcan.settings["budget_weights"].default,
                        {"candidate": True, "local_swap": True, "recovery": True, "select": False, "refine": True})
    assert sum(eps.values()) == pytest.approx(0.7, rel=1e-12)
    assert eps["candidate"] == pytest.approx(0.7 * 8 / 17) and eps["select"] == 0.0


@pytest.mark.parametrize("recovery", ["noisy_mean", "noisyavg"])
def test_balcan_spends_exactly_epsilon_and_delta(wide, recovery):
    res = balcan(wide, 4, 0.8, 1e-5, np.random.default_rng(0), {**SET, "recovery": recovery})
    assert res.epsilon_spent == pytest.approx(0.8, rel=1e-9)
    assert res.delta_spent == pytest.approx(1e-5, rel=1e-9)
    assert res.centers.shape == (4, 8)
    assert ((res.centers >= 0) & (res.centers <= 1)).all()
    json.dumps(res.info)                                  # info must be JSON-serialisable


def test_balcan_trials_and_pure_variant(wide):
    res = balcan(wide, 3, 1.0, 0.0, np.random.default_rng(1),
                 {**SET, "trials": 2, "refine_sum_mechanism": "laplace",
                  "budget_weights": {"candidate": 8, "local_swap": 1, "recovery": 2, "select": 1, "refine": 6}})
    assert res.epsilon_spent == pytest.approx(1.0) and res.delta_spent == 0.0
    assert res.info["trial_chosen"] in (1, 2) and len(res.info["trials"]) == 2


def test_same_seed_same_bytes(wide):
    a = balcan(wide, 4, 1.0, 1e-6, np.random.default_rng(5), SET)
    b = balcan(wide, 4, 1.0, 1e-6, np.random.default_rng(5), SET)
    assert a.centers.tobytes() == b.centers.tobytes()
    assert json.dumps(a.info, sort_keys=True, default=str) == json.dumps(b.info, sort_keys=True, default=str)


def test_bad_input_is_one_clear_error(wide):
    with pytest.raises(DPClustError, match="bounds"):
        balcan(wide, 4, 1.0, 1e-6, np.random.default_rng(0), {"init_seed": 1})
    with pytest.raises(DPClustError, match="delta"):
        balcan(wide, 4, 1.0, 0.0, np.random.default_rng(0), SET)     # Gaussian refinement needs δ > 0
    with pytest.raises(DPClustError, match="unknown"):
        balcan(wide, 4, 1.0, 1e-6, np.random.default_rng(0), {**SET, "refine_iters": 3})
    with pytest.raises(DPClustError):
        balcan(np.full((10, 2), np.nan), 2, 1.0, 1e-6, np.random.default_rng(0), SET)
    with pytest.raises(DPClustError):
        balcan(wide, 4, -1.0, 1e-6, np.random.default_rng(0), SET)


def test_large_epsilon_recovers_the_clusters(wide):
    from dpclust.baselines import lloyd
    from dpclust.blocks.initialisation import kmeans_plus_plus

    opt = min(lloyd(wide, kmeans_plus_plus(wide, 4, np.random.default_rng(s))).cost for s in range(3))
    res = balcan(wide, 4, 1e4, 1e-6, np.random.default_rng(3), SET)
    assert kmeans_cost(wide, res.centers) < 3 * opt


def test_kmedian_variant(wide):
    explicit = {**SET, "one_median": {},
                "budget_weights": {"candidate": 8, "local_swap": 1, "recovery": 2, "select": 0, "refine": 0}}
    res = balcan_kmedian(wide, 3, 1.0, 0.0, np.random.default_rng(0), explicit)
    assert res.epsilon_spent == pytest.approx(1.0) and res.delta_spent == 0.0
    assert res.centers.shape == (3, 8) and res.info["objective"] == "kmedian"
    assert res.info["stage_epsilon"]["refine"] == 0.0
    # the declared defaults of the variant are those explicit values: same run, same bytes
    again = balcan_kmedian(wide, 3, 1.0, 0.0, np.random.default_rng(0), SET)
    assert again.centers.tobytes() == res.centers.tobytes()


def test_kmedian_passes_one_median_settings(wide, monkeypatch):
    """The nested `one_median` mapping reaches the private 1-median unchanged (the callee resolves it)."""
    import dpclust.blocks.one_median as om

    seen = []
    real = om.private_one_median

    def spy(P, epsilon, delta, bounds, rng, accountant, settings=None):
        seen.append(dict(settings))
        return real(P, epsilon, delta, bounds, rng, accountant, settings)

    monkeypatch.setattr(om, "private_one_median", spy)
    balcan_kmedian(wide, 2, 1.0, 0.0, np.random.default_rng(0),
                   {**SET, "one_median": {"one_median_smooth_lambda": 0.1}})
    assert seen and all(s == {"one_median_smooth_lambda": 0.1} for s in seen)


def test_estimator(wide):
    est = Balcan(n_clusters=3, epsilon=1.0, delta=1e-6, random_state=0, settings={"bounds": [0, 1]}).fit(wide)
    assert est.cluster_centers_.shape == (3, 8) and est.epsilon_spent_ == pytest.approx(1.0)
    assert BalcanKMedian.default_settings == balcan_kmedian.settings.defaults()
    est = BalcanKMedian(n_clusters=3, epsilon=1.0, random_state=0, settings={"bounds": [0, 1]}).fit(wide)
    assert est.epsilon_spent_ == pytest.approx(1.0)


@pytest.mark.parametrize("fn,settings", [
    (sulq, {"iterations": 20, "count_fraction": 0.5, "sum_mechanism": "gaussian"}),
    (sample_aggregate, {}),
    (kvariates, {}),
    (kvariates_simhash, {"nodes": 50, "potential_fraction": 0.5}),
    (partition_illustration, {"initial_cube_half_side": 2.0, "gamma_factor": 1.0, "level_rule": "paper",
                              "analysis_delta": 0.1}),
])
def test_baselines_spend_epsilon_and_are_deterministic(wide, fn, settings):
    s = {**SET, **settings}
    a = fn(wide, 4, 0.9, 1e-6, np.random.default_rng(2), s)
    b = fn(wide, 4, 0.9, 1e-6, np.random.default_rng(2), s)
    assert a.epsilon_spent == pytest.approx(0.9, rel=1e-9)
    assert a.delta_spent <= 1e-6 * (1 + 1e-9)
    assert a.centers.shape == (4, 8) and np.isfinite(a.centers).all()
    assert a.centers.tobytes() == b.centers.tobytes()


def test_noise_scales_statistics():
    """Recovery (Alg. 4) adds Laplace noise of L1 sensitivity d·h to the cluster sum; SuLQ adds Gaussian
    noise of L2 sensitivity √d·h. With 2,000 points at the box centre the count noise is negligible,
    so count × centre is the sum noise: its spread must match the calibrated scale (±10 %)."""
    from dpclust.accountant import Accountant
    from dpclust.balcan2017.algorithm import _noisy_mean_recovery
    from dpclust.balcan2017.sulq import private_lloyd_steps
    from dpclust.mechanisms import gaussian_sigma, laplace_scale

    n, d, h, reps = 2_000, 4, 1.0, 800
    X = np.zeros((n, d))
    labels = np.zeros(n, dtype=np.int64)
    lap, gau = [], []
    for s in range(reps):
        r = np.random.default_rng(s)
        lap.append(_noisy_mean_recovery(X, labels, 1, 1.0, h, r, Accountant(1.0), 0.5)[0] * n)
        C, _ = private_lloyd_steps(X, np.zeros((1, d)), 1, 1.0, 1e-5, h, r, Accountant(1.0, 1e-5),
                                   count_fraction=0.5, sum_mechanism="gaussian")
        gau.append(C[0] * n)
    lap, gau = np.asarray(lap).ravel(), np.asarray(gau).ravel()
    b = laplace_scale(d * h, 0.5)
    sigma = gaussian_sigma(np.sqrt(d) * h, 0.5, 1e-5)
    assert np.std(lap) == pytest.approx(np.sqrt(2) * b, rel=0.1)
    assert np.std(gau) == pytest.approx(sigma, rel=0.1)


def test_data_radius_geometry_and_clipping(rng):
    from dpclust.balcan2017.sulq import data_geometry

    g = data_geometry(100, [-11, 11], None)
    assert g["radius"] == pytest.approx(110.0) and g["l1"] == pytest.approx(1100.0)
    g = data_geometry(100, [-11, 11], 11.0)
    assert g["radius"] == 11.0 and g["l1"] == pytest.approx(110.0)          # min(d·h, √d·Λ)
    with pytest.raises(DPClustError):
        data_geometry(3, [0, 1], -1.0)
    X = rng.uniform(0, 1, size=(500, 8))
    res = balcan(X, 3, 1.0, 1e-6, np.random.default_rng(0), {**SET, "data_radius": 0.5})
    assert res.epsilon_spent == pytest.approx(1.0)
    assert (np.linalg.norm(res.centers - 0.5, axis=1) <= 0.5 + 1e-9).all()  # centres clipped to the ball


def test_sample_aggregate_noise_scale_and_audit_hook():
    """Sample and aggregate adds Laplace noise of L1 sensitivity k·d·(hi − lo)/m to the mean of the m
    block outputs. Identical points make every block output exact, so the output spread is the noise:
    its median absolute deviation is b·ln 2 (robust to a rare empty block). The draw goes through
    `mechanisms.laplace_scale`, so `halved_noise()` halves it."""
    import math

    from dpclust.audit import statistics as audit
    from dpclust.mechanisms import laplace_scale

    X = np.full((200, 1), 0.5)

    def spread():
        out = []
        for s in range(250):
            r = sample_aggregate(X, 1, 1.0, 0.0, np.random.default_rng(s), {"bounds": [0.0, 1.0],
                                                                               "block_lloyd_iterations": 1})
            out.append(r.centers[0, 0])
        return float(np.median(np.abs(np.asarray(out) - 0.5)) / math.log(2)), r.info["blocks"]

    b_hat, m = spread()
    b = laplace_scale(1 * 1 * 1.0 / m, 1.0)
    assert b_hat == pytest.approx(b, rel=0.2)            # ~2 standard errors at 250 draws
    with audit.halved_noise() as calls:
        b_half, _ = spread()
    assert calls["laplace_scale"] > 0 and b_half == pytest.approx(b / 2, rel=0.2)


def test_sulq_zero_iterations_is_a_clear_error(wide):
    with pytest.raises(DPClustError, match="iterations"):
        sulq(wide, 3, 1.0, 1e-6, np.random.default_rng(0), {**SET, "iterations": 0, "count_fraction": 0.5,
                                                              "sum_mechanism": "gaussian"})


# --- the authors' calibration (NOT DP) and the diagnostics of the MNIST non-reproduction ---------------
def test_authors_calibration_reports_only_its_nominal_epsilon_and_says_why(wide):
    settings = {**SET, "calibration": "authors", "refine_iterations": 3}
    res = balcan(wide, 4, 1.0, 1e-6, np.random.default_rng(2), settings)
    assert res.epsilon_spent == 1.0 and res.delta_spent == 0.0           # the nominal ε it was given ...
    assert balcan.guarantee(balcan.settings.complete(settings)).kind == "not DP as published"   # ... no guarantee
    assert res.info["nominal_epsilon_authors"] == pytest.approx(17 / 12)  # 2/3 + 1/12 + 1/6 + 1/2 of ε
    assert res.info["stage_epsilon"]["refine"] == pytest.approx(0.5) and res.iterations == 3
    assert res.info["privacy_note"].startswith("NOT DP") and "17ε/12" in res.info["privacy_note"]
    assert all("NOT DP" in label for label, _, _ in res.ledger if "recovery" in label or "Lloyd" in label)
    assert sum(1 for label, _, _ in res.ledger if "Lloyd step" in label) == 3
    json.dumps(res.info)
    with pytest.raises(DPClustError, match="authors"):
        balcan(wide, 4, 1.0, 1e-6, np.random.default_rng(2),
               {**SET, "calibration": "authors", "trials": 2,
                "budget_weights": {"candidate": 8, "local_swap": 1, "recovery": 2, "select": 1, "refine": 6}})


def test_authors_recovery_noise_is_l2_scaled_and_divided_by_the_exact_count():
    """The authors' recovery adds per-coordinate Lap(Λ/ε) to the sum and divides by the EXACT count, so
    the mean's noise has scale Λ/(ε·n) (spread √2·Λ/(ε·n)); the DP recovery's sum noise has the L1
    sensitivity d·h at ε/2 — (d·h/(ε/2)) / (Λ/ε) = 2√d times more (with Λ = √d·h, the box radius)."""
    from dpclust.accountant import Accountant
    from dpclust.balcan2017.algorithm import _authors_recovery, _noisy_mean_recovery

    n, d, h, eps, reps = 400, 16, 1.0, 1.0, 600
    X = np.zeros((n, d))
    labels = np.zeros(n, dtype=np.int64)
    radius = np.sqrt(d) * h
    auth = np.array([_authors_recovery(X, labels, 1, eps, h, radius, np.random.default_rng(s), Accountant(eps), "t")[0]
                     for s in range(reps)]).ravel()
    dp = np.array([_noisy_mean_recovery(X, labels, 1, eps, h, np.random.default_rng(s), Accountant(eps), 0.5)[0]
                   for s in range(reps)]).ravel()
    assert np.std(auth) == pytest.approx(np.sqrt(2) * radius / (eps * n), rel=0.1)
    assert np.std(dp) / np.std(auth) == pytest.approx(2 * np.sqrt(d), rel=0.15)


def test_recovery_diagnostics_are_recorded(wide):
    for settings in ({}, {"calibration": "authors", "refine_iterations": 3}, {"refine_iterations": 0}):
        res = balcan(wide, 4, 1.0, 1e-6, np.random.default_rng(3), {**SET, **settings})
        assert 1 <= res.info["recovery_nonempty_clusters"] <= 4 and 1 <= res.info["nonempty_clusters"] <= 4
        assert res.info["recovery_cost"] >= kmeans_cost(wide, res.centers) * 0.0          # a finite cost
        if settings.get("refine_iterations") == 0:
            assert res.info["recovery_cost"] == pytest.approx(kmeans_cost(wide, res.centers), rel=1e-9)
    res = sulq(wide, 4, 1.0, 1e-6, np.random.default_rng(3), SET)
    assert 1 <= res.info["nonempty_clusters"] <= 4


def test_high_dimension_collapses_with_dp_noise_but_not_with_the_authors_calibration(rng):
    """The mechanism behind the MNIST non-reproduction, on a small stand-in: d = 400 in [0, 1]^d,
    n = 4,000 points around 4 well separated centres. With noise calibrated for ε-DP the recovered
    centres are noise clipped to the box: the result is no better than ONE centre at the data mean;
    the authors' L2-scaled noise with exact counts keeps the clusters (not DP)."""
    d, n = 400, 4_000
    C = (rng.uniform(size=(4, d)) < 0.5).astype(float)
    X = np.clip(C[rng.integers(4, size=n)] + 0.05 * rng.normal(size=(n, d)), 0, 1)
    dp = balcan(X, 4, 1.0, 1e-6, np.random.default_rng(0), SET)
    auth = balcan(X, 4, 1.0, 1e-6, np.random.default_rng(0), {**SET, "calibration": "authors", "refine_iterations": 3})
    one_centre = kmeans_cost(X, X.mean(axis=0, keepdims=True))
    assert kmeans_cost(X, dp.centers) >= one_centre
    assert auth.info["nonempty_clusters"] >= 3 and kmeans_cost(X, auth.centers) < 0.5 * one_centre


@pytest.fixture(scope="module")
def iris_path(tmp_path_factory, mirror):
    from dpclust.data import fetch_source, load_registry, prepare_dataset

    d = tmp_path_factory.mktemp("balcan_iris")
    reg = load_registry()
    for source in reg.sources_for("iris"):
        fetch_source(source, raw_dir=d / "raw", mirror=str(mirror), registry=reg)
    out = d / "iris.h5"
    prepare_dataset("iris", raw_dir=d / "raw", out_path=out, registry=reg)
    return str(out)


def test_run_records_mark_the_authors_variant_not_dp(iris_path):
    """Through the runner: the variant's record carries its 'not DP as published' guarantee with the
    reason (its ε spent is only the nominal budget it was given); the DP variant's record says
    (ε, δ)-DP and spends exactly ε."""
    from dpclust.pipeline.configuration import load_config, run_spec_for
    from dpclust.pipeline.records import flatten
    from dpclust.pipeline.run_job import run_spec

    cfg = load_config()
    recs = {}
    for name in ("balcan2017.balcan", "balcan2017.balcan_authors"):
        spec = run_spec_for(cfg, "iris", name, 3, 1.0, seeds=(0, 2), transform="minmax_pm1", delta=1e-6)
        recs[name] = flatten(run_spec(spec, iris_path))
    auth, dp = recs["balcan2017.balcan_authors"], recs["balcan2017.balcan"]
    assert auth["guarantee"]["kind"] == "not DP as published" and "L2 radius" in auth["guarantee"]["note"]
    assert dp["guarantee"]["kind"] == "(ε, δ)-DP"
    assert all(r["epsilon_spent"] is None for r in auth["runs"])   # not DP as published: no ε is reported
    assert all(r["epsilon_spent"] == pytest.approx(1.0) for r in dp["runs"])
