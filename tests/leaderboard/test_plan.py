"""Planning the leaderboard: the run groups select every algorithm with a declared DP guarantee (a new
entry lands on the board without touching config/papers/leaderboard.yaml), the excluded ones and the
methods not DP as published stay out unless opted in, and every run stands on the same ground
(transform, ε grid, δ, datasets and k)."""
from __future__ import annotations

import shutil
import textwrap
from collections import defaultdict

import pytest

from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan
from dpclust.pipeline.resolve import REPO_ROOT

from .helpers import NOT_DP_METHODS, _opt_in_plan, _plan

FOUR_KMEDIAN = {"balcan2017.balcan_kmedian", "cohenaddad2022.coreset", "cohenaddad2022.hst",
                "cohenaddad2022.private_lloyd"}
ALG1 = {"lushen2020.posterior", "lushen2020.prior"}
ILLUSTRATIONS = {"balcan2017.partition_illustration"}
OPTIONAL_PEERS = {"peers.diffprivlib_kmeans"}    # run group `peers`, off by default (needs scikit-learn < 1.8)


def board_jobs(the_plan):
    return [j for j in the_plan.runs if j.paper == "leaderboard"]


def groups_by_algorithm(jobs) -> dict[str, set[str]]:
    out = defaultdict(set)
    for job in jobs:
        out[job.algorithm].add(job.group)
    return out


def test_a_new_algorithm_entry_lands_on_the_board_without_touching_its_config(tmp_path, monkeypatch):
    config_dir = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config_dir)
    (tmp_path / "newalgo.py").write_text(textwrap.dedent("""
        from dpclust.settings import PURE, Settings, declared, not_dp
        from dpclust.su2016.dplloyd import dplloyd

        def _run(X, k, epsilon, delta, rng, settings):
            return dplloyd(X, k, epsilon, delta, rng, {"bounds": settings["bounds"],
                                                       "init_seed": settings["init_seed"]})

        @declared(Settings(), PURE, objective="kmedian")
        def private_kmedian(X, k, epsilon, delta, rng, settings):
            return _run(X, k, epsilon, delta, rng, settings)

        @declared(Settings(), objective="kmedian")
        def undeclared_kmedian(X, k, epsilon, delta, rng, settings):
            return _run(X, k, epsilon, delta, rng, settings)

        @declared(Settings(), not_dp("a test"), objective="kmedian")
        def not_dp_kmedian(X, k, epsilon, delta, rng, settings):
            return _run(X, k, epsilon, delta, rng, settings)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    (config_dir / "papers" / "zz.yaml").write_text(textwrap.dedent("""
        paper: zz
        title: "Someone's new paper"
        algorithms:
          zz.dplloyd3:
            function: dpclust.su2016.dplloyd:dplloyd
            private: true
            settings: {iterations: 3}
          zz.kmedian:
            function: newalgo:private_kmedian
            private: true
          zz.undeclared:
            function: newalgo:undeclared_kmedian
            private: true
          zz.not_dp:
            function: newalgo:not_dp_kmedian
            private: true
          zz.lloyd:
            function: dpclust.baselines:lloyd_algorithm
            private: false
        items: {}
    """))
    before = groups_by_algorithm(board_jobs(_plan("quick")))
    # the board alone (the other papers' items, e.g. the audit's, ask more of a new algorithm entry)
    jobs = board_jobs(plan(load_config(config_dir, overrides={"preset": "quick", "papers": ["leaderboard"]})))
    after = groups_by_algorithm(jobs)
    assert after["zz.dplloyd3"] == {"kmeans"} and after["zz.kmedian"] == {"kmedian"}   # by declared objective
    assert "zz.lloyd" not in after                                  # non-private: not a contestant
    assert "zz.undeclared" not in after and "zz.not_dp" not in after   # no DP guarantee: not ranked, not run
    assert {a: g for a, g in after.items() if not a.startswith("zz.")} == dict(before)
    new = [j for j in jobs if j.algorithm == "zz.dplloyd3"]
    old = [j for j in jobs if j.algorithm == "su2016.dplloyd"]
    assert sorted((j.dataset, j.k, j.epsilon) for j in new) == sorted((j.dataset, j.k, j.epsilon) for j in old)
    assert new[0].spec["settings"]["iterations"] == 3


def test_every_dp_algorithm_is_on_the_board_once_the_not_dp_ones_only_with_the_opt_in():
    config = _plan("full").config
    private = {a for a, e in config["algorithms"].items() if e.get("private", True)}
    groups = groups_by_algorithm(board_jobs(_plan("full")))
    assert set(groups) & private == private - ILLUSTRATIONS - OPTIONAL_PEERS - NOT_DP_METHODS
    assert all(len(g) == 1 for g in groups.values()), {a: g for a, g in groups.items() if len(g) > 1}
    assert not {a for a, g in groups.items() if g == {"kmeans_pure"}}
    opted = groups_by_algorithm(board_jobs(_opt_in_plan("full")))
    assert set(opted) & private == private - ILLUSTRATIONS - OPTIONAL_PEERS
    assert all(len(g) == 1 for g in opted.values()), {a: g for a, g in opted.items() if len(g) > 1}
    assert {a for a, g in opted.items() if g == {"kmeans_pure"}} == ALG1
    assert {a for a, g in groups.items() if g == {"kmedian"}} == FOUR_KMEDIAN
    assert not set(groups) & OPTIONAL_PEERS
    nonprivate = {a for a in groups if a not in private}
    assert nonprivate == {"baselines.kmeanspp", "baselines.kmedianpp"}


@pytest.mark.parametrize("opted_in", [False, True], ids=["default", "opt-in"])
def test_every_run_stands_on_the_same_ground(opted_in):
    jobs = board_jobs((_opt_in_plan if opted_in else _plan)("full"))
    race = _plan("full").item("leaderboard", "table").race
    cells = defaultdict(set)
    for job in jobs:
        spec = job.spec
        assert spec["transform"] == "minmax_01" and spec["store_centers"] is False
        if spec["private"]:
            if job.group in race["groups"]:   # raced: a few runs, more where they can change the ranking
                assert job.seed_count >= 3 and job.seed_count * race["rounds"][-1] > 10   # the cap: above the old 10
            else:
                assert job.seed_count >= 10
            assert spec["delta"] == (0.0 if job.algorithm in ALG1 else "n^-1.5"), job.path
        cells[job.group].add((job.dataset, job.k))
        cells["eps:" + job.group].add(job.epsilon)
    first = cells["kmeans"]
    assert all(v == first for g, v in cells.items() if not g.startswith("eps:"))
    groups = ("kmeans", "kmeans_pure", "kmedian") if opted_in else ("kmeans", "kmedian")
    assert all(cells[f"eps:{g}"] == {0.1, 0.3, 1.0, 3.0} for g in groups)
    assert ("eps:kmeans_pure" in cells) == opted_in
    assert {d for d, _ in first} >= {"iris", "s1", "birch2_12k", "adult_num", "skin", "shuttle", "mnist70k",
                                     "synth3d", "su_synth_k5_d5", "su_synth_k10_d10", "nguyen_synth",
                                     "balcan_synth"}
    refs = [j for j in jobs if j.group.startswith("reference_")]
    assert all(j.epsilon is None and j.seed_count >= 20 for j in refs)


def test_the_guarantee_each_algorithm_declares_reaches_its_runs():
    from dpclust.pipeline.resolve import import_object
    from dpclust.settings import guarantee_of

    the_plan = _plan("test")
    jobs = {j.algorithm: j.spec for j in board_jobs(the_plan)}
    for algorithm, spec in jobs.items():
        entry = the_plan.config["algorithms"][algorithm]
        declared = guarantee_of(import_object(entry["function"]), spec["settings"])
        expected = declared.kind if declared else (None if spec["private"] else "non-private")
        assert (spec.get("guarantee") or {}).get("kind") == expected, algorithm
    assert jobs["baselines.kmeanspp"]["guarantee"]["kind"] == "non-private"
    assert jobs["baselines.kmeanspp"]["guarantee"]["kind"] == "non-private"


def test_the_quick_form_is_small_and_wide_enough():
    jobs = board_jobs(_plan("quick"))
    private = {j.algorithm for j in jobs if j.spec["private"]}
    datasets = {j.dataset for j in jobs}
    assert len(private) >= 15 and len(datasets) >= 6
    # one job per (algorithm, dataset, ε) and per (reference, dataset): every cell's runs in one block
    assert len(jobs) <= len(private) * len(datasets) * 2 + 2 * len(datasets)
    assert {j.epsilon for j in jobs if j.spec["private"]} == {0.3, 3.0}
    full = board_jobs(_plan("full"))
    cells = {(j.dataset, j.k) for j in full}
    full_private = {j.algorithm for j in full if j.spec["private"]}
    # the full form: one job per (algorithm, dataset, k, ε) and per (reference, dataset, k)
    assert len(full) <= len(full_private) * len(cells) * 4 + 2 * len(cells)
