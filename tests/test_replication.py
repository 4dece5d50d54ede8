"""Adaptive replication (dpclust.pipeline.replication): the looks' levels, the planned rounds, the
checkpoint's decision, the summary's columns, and the rule's error under the null."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dpclust.api import DPClustError
from dpclust.pipeline import replication
from dpclust.pipeline.verdicts import ALPHA

ROOT = Path(__file__).resolve().parents[1]


def test_the_looks_spend_alpha_exactly_once():
    for n in (1, 2, 3, 5):
        levels = replication.alpha_schedule(n)
        assert len(levels) == n + 1
        assert sum(levels) == pytest.approx(ALPHA)
        assert levels[0] == pytest.approx(ALPHA / 2)


@pytest.mark.parametrize("bad, why", [
    ({"rounds": [2, 4]}, "groups"),
    ({"groups": ["g"], "rounds": [4, 2]}, "increase"),
    ({"groups": ["g"], "rounds": [1, 2]}, "increase"),
    ({"groups": ["g"], "rounds": [2, 20]}, "at most 10"),
])
def test_a_bad_declaration_is_one_clear_error(bad, why):
    with pytest.raises(DPClustError, match=why):
        replication.declaration(bad)


def test_no_declaration_is_none_and_defaults_fill_in():
    assert replication.declaration(None) is None
    assert replication.declaration({"groups": ["g"]}) == {"groups": ["g"], "rounds": [2, 4, 10],
                                                           "cpu_hours": replication.DEFAULT_CPU_HOURS}


@pytest.fixture(scope="module")
def test_plan():
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    return plan(load_config(ROOT / "config", overrides={"preset": "test"}))


def test_rounds_continue_the_groups_seeds_in_files_of_their_own(test_plan):
    target = test_plan.item("su2016", "fig3")
    decl = target.replication
    assert decl["groups"] == ["e05", "e06"] and decl["rounds"] == [2, 3]
    assert len(target.rounds) == 2
    own = {(j.group, j.dataset, j.algorithm, j.k, j.epsilon): (j.seed_start, j.seed_count)
           for j in target.runs if j.group in decl["groups"]}
    assert own
    for look, jobs in enumerate(target.rounds, start=1):
        assert {j.group for j in jobs} == set(decl["groups"])
        for j in jobs:
            start, count = own[(j.group, j.dataset, j.algorithm, j.k, j.epsilon)]
            reps = start + count
            lo, hi = [1, *decl["rounds"]][look - 1] * reps, [1, *decl["rounds"]][look] * reps
            assert lo <= j.seed_start and j.seed_start + j.seed_count <= hi
            assert f"/{j.group}.round{look}/" in j.path
            assert json.loads(j.spec_json)["group"] == j.group   # records keep the group's name
    # planned (runnable by path), but not part of `rule all`: only the checkpoint asks for them
    round_paths = {j.path for jobs in target.rounds for j in jobs}
    assert round_paths <= set(test_plan.runs_by_path)
    assert not round_paths & {b.path for b in test_plan.batches}
    # a look runs the blocks of the claims still open: every planned block for an open claim without
    # cells of its own, none when no claim is open
    assert target.look_files(1, ["any claim"]) == list(dict.fromkeys(j.path for j in target.rounds[0]))
    assert target.look_files(1, []) == []
    # the CPU cap prices each look by the committed cost table, per group and algorithm
    costs = target.replication_spec()["cost_s"]
    assert len(costs) == len(target.rounds) and all(v > 0 for look in costs for v in look.values())
    assert {k.split("|")[0] for look in costs for k in look} <= set(decl["groups"])


def test_a_claim_with_cells_of_its_own_runs_only_those():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Job:
        group: str
        algorithm: str

    decl = replication.declaration({"groups": ["a", "b"], "claims": [{"match": "beats B", "groups": ["b"],
                                                                       "algorithms": ["x"]}]})
    jobs = [Job("a", "x"), Job("b", "x"), Job("b", "y")]
    assert replication.look_jobs(decl, jobs, ["HST beats B at every k"]) == [Job("b", "x")]
    assert replication.look_jobs(decl, jobs, ["another claim"]) == jobs
    assert replication.look_jobs(decl, jobs, ["another claim", "HST beats B"]) == jobs
    assert replication.look_jobs(decl, jobs, []) == []


def test_look_zero_decides_at_its_share_and_other_items_at_alpha(test_plan):
    assert test_plan.item("su2016", "fig3").step_spec("checks")["alpha"] == pytest.approx(ALPHA / 2)
    assert "alpha" not in test_plan.item("su2016", "fig1").step_spec("checks")
    assert [t.key for t in test_plan.replicated] == ["su2016/fig3"]


def test_a_group_the_item_does_not_run_is_an_error(test_plan):
    target = test_plan.item("su2016", "fig3")
    with pytest.raises(DPClustError, match="does not run"):
        replication.round_jobs(target.key, target.runs, {"groups": ["nope"], "rounds": [2]})


def _checks(tmp_path, rows, name="c.csv"):
    path = tmp_path / name
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


ROWS = [{"claim": "A", "result": "holds", "kind": "paper"},
        {"claim": "B", "result": "not decidable", "kind": "paper"},
        {"claim": "C", "result": "not evaluable", "kind": "paper"},
        {"claim": "D", "result": "not decidable", "kind": "bookkeeping"}]
# each look priced per group|algorithm (ItemTarget.look_costs): look 1 costs 0.25 h, look 2 0.5 h
DECL = {"groups": ["g"], "rounds": [2, 4], "cpu_hours": 1.0, "cost_s": [{"g|a": 900.0}, {"g|a": 1800.0}]}


def test_a_look_stops_what_it_decides_and_carries_the_open_on(tmp_path):
    d0 = replication.decide(0, _checks(tmp_path, ROWS), None, DECL)
    assert d0["next"] and d0["open"] == ["B"]           # our own checks never enter
    assert d0["decided"]["A"]["stopped"] == "decided at look 0"
    assert "not evaluable" in d0["decided"]["C"]["stopped"]
    rows1 = [{"claim": "A", "result": "does not hold", "kind": "paper"},   # decided claims stay decided
             {"claim": "B", "result": "does not hold", "kind": "paper"}]
    d1 = replication.decide(1, _checks(tmp_path, rows1, "l1.csv"), d0, DECL)
    assert not d1["next"] and d1["stopped"] == "every claim decided"
    assert d1["decided"]["A"]["look"] == 0 and d1["decided"]["A"]["row"]["result"] == "holds"
    assert d1["decided"]["B"]["look"] == 1 and d1["decided"]["B"]["multiple"] == 2
    assert d1["decided"]["B"]["alpha"] == pytest.approx(ALPHA / 4)


def test_the_caps_stop_the_looks(tmp_path):
    open_rows = [{"claim": "B", "result": "not decidable", "kind": "paper"}]
    # the last declared look reached
    d = replication.decide(2, _checks(tmp_path, open_rows), {"open": ["B"], "decided": {}, "last": {}}, DECL)
    assert not d["next"] and d["stopped"].startswith("cap: 4×")
    assert d["decided"]["B"]["stopped"] == d["stopped"] and d["decided"]["B"]["look"] == 2
    # the next look's price above the cap
    d = replication.decide(0, _checks(tmp_path, open_rows), None, dict(DECL, cpu_hours=0.2))
    assert not d["next"] and d["stopped"].startswith("cap: CPU (next look ≈ 0.25 CPU-h, 0 added so far")
    # the cap bounds what the looks add: look 1 (0.25 h) fits the 0.6 h cap; after it, look 2 (0.5 h)
    # would bring the added CPU to 0.75 h, and does not run
    d = replication.decide(0, _checks(tmp_path, open_rows), None, dict(DECL, cpu_hours=0.6))
    assert d["next"] and (d["added_s"], d["next_s"]) == (0.0, 900.0)
    d = replication.decide(1, _checks(tmp_path, open_rows), d, dict(DECL, cpu_hours=0.6))
    assert not d["next"] and d["stopped"].startswith("cap: CPU (next look ≈ 0.5 CPU-h, 0.25 added so far")
    assert d["added_s"] == 900.0


def test_a_look_is_priced_for_the_claims_still_open_only():
    """A claim with cells of its own prices only its groups and algorithms; the others the item's."""
    decl = {"groups": ["g", "h"], "rounds": [2], "cpu_hours": 1.0,
            "claims": [{"match": "only h", "groups": ["h"], "algorithms": ["b"]}],
            "cost_s": [{"g|a": 100.0, "h|a": 10.0, "h|b": 1.0}]}
    assert replication.look_cost_s(decl, 1, ["claim on only h"]) == 1.0
    assert replication.look_cost_s(decl, 1, ["another claim"]) == 111.0
    assert replication.look_cost_s(decl, 1, []) == 0.0


def test_the_summary_takes_the_deciding_look_and_says_how_many_runs(tmp_path):
    table = pd.DataFrame([
        {"paper": "p", "item": "i", "claim": "B", "result": "not decidable", "kind": "paper", "rule": "r0"},
        {"paper": "p", "item": "j", "claim": "E", "result": "holds", "kind": "paper", "rule": "r"},
        {"paper": "p", "item": "j", "claim": "F", "result": "not decidable", "kind": "paper", "rule": "r",
         "threshold": "> 1 (every)", "quantity": 1.1, "ci_low": 0.9, "ci_high": 1.3},
        {"paper": "p", "item": "i", "claim": "D", "result": "holds", "kind": "bookkeeping", "rule": "r"}])
    decision = {"decided": {"B": {"look": 2, "multiple": 4, "alpha": 0.0125, "stopped": "decided at look 2",
                                  "row": {"claim": "B", "result": "does not hold", "rule": "r2"}}}}
    out = replication.apply(table, {"p/i": decision}).set_index("claim")
    assert out.loc["B", "result"] == "does not hold" and out.loc["B", "rule"] == "r2"
    assert out.loc["B", "runs"].startswith("4× (look 2") and out.loc["B", "stopped"] == "decided at look 2"
    assert out.loc["E", "runs"] == "1×" and out.loc["E", "stopped"] == "no replication declared"
    assert out.loc["F", "stopped"] == "no replication declared; would need ≈ 4× the paper's runs"
    assert out.loc["D", "runs"] == "" and out.loc["D", "result"] == "holds"


@pytest.mark.parametrize("cells, side", [(1, ">"), (1, ">="), (4, ">=")])   # 4 cells, ">": never holds
def test_stopping_on_the_data_keeps_the_error_at_its_level(cells, side):
    """The claim sits exactly at its threshold in every cell; the rule looks at 1, 2, 4 and 10 times
    the runs and stops at the first decision. With the declared schedule its wrong verdicts stay at
    most α; deciding at α at every look (no error spending) inflates them, which this simulation sees."""
    looks, reps = [1, 2, 4, 10], 1500
    spent = replication.null_error_rate(cells, looks, replication.alpha_schedule(3), reps, side=side, seed=1)
    naive = replication.null_error_rate(cells, looks, [ALPHA] * 4, reps, side=side, seed=1)
    se = (ALPHA * (1 - ALPHA) / reps) ** 0.5
    assert spent <= ALPHA + 2 * se, (spent, naive)
    assert naive > ALPHA + 3 * se, (spent, naive)   # measured 0.12-0.16: four looks at α each


def test_an_open_claim_at_the_cap_says_how_many_runs_would_decide_it():
    row = {"threshold": "< 0 (every)", "quantity": -0.1, "ci_low": -0.3, "ci_high": 0.1}
    assert replication.runs_needed(row, 4) == 16          # half-width 0.2 must shrink to 0.1: 4 × 2²
    assert replication.runs_needed(dict(row, ci_low=float("-inf")), 4) is None
    assert replication.runs_needed(dict(row, threshold="in [0.9, 1.1] (every)"), 4) is None
