"""Baselines under §7.1's budget protocol, and the items' aggregation and claim checks."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpclust.lushen2020.items import common, fig7, fig8, iterations, table1
from dpclust.workflow import import_object, load_config, resolve_algorithm

PRIOR_TABLE = {"algorithm": {"iris": 8.2}, "lloyd": {"iris": 6.1}, "ratio": {"iris": 1.34}}


@pytest.fixture(scope="module")
def algorithms():
    """Every configured algorithm of the paper as a run resolves it (declared defaults + overrides)."""
    config = load_config()
    return {name: resolve_algorithm(config, name) for name in config["algorithms"] if name.startswith("lushen2020.")}


def _blobs(seed=0, k=3, per=40):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(0.15, 0.85, size=(k, 2))
    return np.clip(np.concatenate([c + 0.03 * rng.standard_normal((per, 2)) for c in centers]), 0, 1)


def _run(algorithms, name, X, k, eps, seed, init_seed=3):
    entry = algorithms[name]
    settings = dict(entry["settings"], bounds=[0.0, 1.0], init_seed=init_seed)
    return import_object(entry["function"])(X, k, eps, 0.0, np.random.default_rng(seed), settings)


@pytest.mark.parametrize("name", ["lushen2020.blum", "lushen2020.dwork", "lushen2020.su"])
def test_dplloyd_baselines_get_algorithm1s_bottom_up_total(algorithms, name):
    X = _blobs()
    res = _run(algorithms, name, X, 3, 20.0, seed=1)
    ref = res.info["epsilon_reference"]
    eps_step = 20.0 / algorithms[name]["settings"]["reference"]["atom_steps"]
    # the reference total is ε₀ + (#iterations)·ε_step of a Prior run, below the cap
    n_steps = ref / eps_step
    assert n_steps == pytest.approx(round(n_steps), abs=1e-9) and round(n_steps) >= 2
    assert ref <= 20.0
    assert res.epsilon_spent <= ref * (1 + 1e-9)
    assert res.epsilon_spent == pytest.approx(ref, rel=1e-9)     # DPLloyd spends its whole total
    assert res.info["reference_strategy"] == "prior"


def test_reference_run_has_the_distribution_of_a_prior_run(algorithms):
    """ε_ref comes from a Prior run from the same initial centroids (child generator)."""
    X = _blobs(seed=2)
    refs = {_run(algorithms, "lushen2020.blum", X, 3, 20.0, seed=s).info["reference_iterations"] for s in range(6)}
    prior = {_run(algorithms, "lushen2020.prior", X, 3, 20.0, seed=s).iterations for s in range(6)}
    assert refs & prior


def test_gupt_gets_one_atom_step(algorithms):
    X = _blobs()
    res = _run(algorithms, "lushen2020.gupt", X, 3, 20.0, seed=0)
    assert res.epsilon_spent <= 20.0 / 100 * (1 + 1e-9)


# --- items -----------------------------------------------------------------------------------
def _record(alg, dataset, eps, costs, info=None, iterations=None, status="ok"):
    settings = {"atom_steps": 100} if alg in common.ALG1 else {"reference": {"atom_steps": 100}}
    rec = {"dataset": dataset, "algorithm": alg, "k": 3, "epsilon": eps, "status": status, "reason": "",
           "settings": settings if alg != common.LLOYD else {}, "runs": []}
    if status != "ok":
        rec["reason"] = "no file"
        return rec
    for seed, cost in enumerate(costs):
        rec["runs"].append({"seed": seed, "cost_kmeans": cost, "iterations": (iterations or [None] * len(costs))[seed],
                            "epsilon_spent": 0.1, "info": dict(info or {})})
    return rec


def _fig7_records(alg1_cost, baseline_cost):
    recs = [_record(common.LLOYD, "iris", None, [1.0, 1.0]), _record(common.LLOYD, "house", None, [], status="x")]
    for eps, (a, b) in zip((10.0, 100.0), zip(alg1_cost, baseline_cost)):
        for alg in common.ALG1:
            recs.append(_record(alg, "iris", eps, [a, a]))
        for alg in common.BASELINES:
            recs.append(_record(alg, "iris", eps, [b, b]))
    return recs


FIG7_CLAIMS = {"claims": {"cap_slack": 1e-9}}


def test_fig7_checks_hold_and_fail_on_the_numbers():
    good = fig7.aggregate_fig7(_fig7_records([1.5, 1.1], [3.0, 2.5]), {})
    assert set(good["eps_step"].dropna()) == {0.1, 1.0}
    assert good.loc[good["algorithm"] == common.PRIOR, "ratio"].tolist() == [1.5, 1.1]
    assert (good.loc[good["status"] == "data_unavailable", "dataset"] == "house").all()
    checks = fig7.check_fig7(good, FIG7_CLAIMS)
    assert [c.holds for c in checks[:4]] == [True, True, True, True]
    bad = fig7.aggregate_fig7(_fig7_records([1.5, 2.6], [3.0, 2.5]), {})
    checks = fig7.check_fig7(bad, FIG7_CLAIMS)
    assert checks[0].holds is False and checks[2].holds is False


def test_fig8_and_iteration_checks_fail_when_the_claims_fail():
    recs = []
    for alg, match, it in [(common.PRIOR, [True, False, False, False], [9, 9, 9, 9]),
                           (common.POSTERIOR, [True, True, True, True], [5, 5, 5, 5])]:
        info = [{"match": m, "lloyd_iterations": 4, "prenoise_ratio": 1.0} for m in match]
        rec = _record(alg, "iris", 10.0, [1.0] * 4, iterations=it)
        for run, inf in zip(rec["runs"], info):
            run["info"] = inf
        recs.append(rec)
    t8 = fig8.aggregate_fig8(recs, {})
    c8 = fig8.check_fig8(t8, {"claims": {"prior_min_match": 0.84, "posterior_max_match": 0.80}})
    assert [c.holds for c in c8] == [False, False, False]
    opts = {"strategy": common.PRIOR, "paper_table": PRIOR_TABLE}
    t10 = iterations.aggregate_iterations(recs, {"options": opts})
    overall = t10[t10["eps_step"].isna()].iloc[0]
    assert overall["iterations_mean"] == 9 and overall["lloyd_iterations_mean"] == 4
    c10 = iterations.check_iterations(t10, {"options": opts, "claims": {"max_ratio": 2.0, "lloyd_tolerance": 0.25}})
    assert c10[0].holds is False            # 2.25 × Lloyd
    assert c10[1].holds is False            # 4 vs 6.1 is −34 %
    assert c10[2].holds is True             # both above 1


def test_renderers_write_files(tmp_path):
    t7 = fig7.aggregate_fig7(_fig7_records([1.5, 1.1], [3.0, 2.5]), {})
    fig7.render_fig7(t7, {"title": "fig7"}, str(tmp_path / "fig7"))
    t1 = table1.aggregate_table1([], {"static": [["a", "b"]]})
    table1.render_table1(t1, {"title": "t1"}, str(tmp_path / "t1"))
    assert (tmp_path / "fig7.png").exists() and (tmp_path / "t1.md").read_text().count("|") > 4
    assert isinstance(t1, pd.DataFrame)


# --- run records through the runner (real Iris from the mirror) ------------------------------
@pytest.fixture(scope="module")
def iris_path(tmp_path_factory, mirror):
    from dpclust.data import fetch_source, load_registry, prepare_dataset

    d = tmp_path_factory.mktemp("lushen_iris")
    reg = load_registry()
    for source in reg.sources_for("iris"):
        fetch_source(source, raw_dir=d / "raw", mirror=str(mirror), registry=reg)
    out = d / "iris.h5"
    prepare_dataset("iris", raw_dir=d / "raw", out_path=out, registry=reg)
    return str(out)


def _record_for(iris_path, algorithms, name, eps=20.0):
    from dpclust.runner import run_spec
    from dpclust.workflow import load_config, run_spec_for

    spec = run_spec_for(load_config(), "iris", name, 3, eps, seeds=(0, 2), transform="minmax_01")
    from dpclust.records import flatten

    return flatten(run_spec(dict(spec, paper="lushen2020", item="fig7", group="main"), iris_path))


def test_run_records_spend_the_bottom_up_total_and_are_reproducible(iris_path, algorithms):
    rec = _record_for(iris_path, algorithms, "lushen2020.prior")
    again = _record_for(iris_path, algorithms, "lushen2020.prior")
    for run in rec["runs"]:
        info = run["info"]
        expected = info["epsilon_0"] + info["sampling_iterations"] * info["epsilon_step"]
        assert run["epsilon_spent"] == pytest.approx(expected, rel=1e-12)
        assert info["epsilon_step"] == pytest.approx(20.0 / 100)
    strip = lambda r: [{k: v for k, v in run.items() if k != "wall_time_s"} for run in r["runs"]]  # noqa: E731
    assert strip(rec) == strip(again)
    base = _record_for(iris_path, algorithms, "lushen2020.blum")
    for run in base["runs"]:
        assert run["epsilon_spent"] == pytest.approx(run["info"]["epsilon_reference"], rel=1e-9)
