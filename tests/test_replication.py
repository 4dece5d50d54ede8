"""Adaptive replication (dpclust.pipeline.replication): the looks' levels, the planned rounds, the
checkpoint's decision, the summary's columns, and the rule's error under the null."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dpclust.api import DPClustError
from dpclust.pipeline import declared, replication, verdicts
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
    # the CPU cap prices each look by the committed cost table, per (group, algorithm, dataset, k, ε) cell
    costs = target.replication_spec()["cost_s"]
    assert len(costs) == len(target.rounds) and all(entry[-1] > 0 for look in costs for entry in look)
    assert {entry[0] for look in costs for entry in look} <= set(decl["groups"])
    # a decision that names a claim's open cells runs only their blocks, in files holding those alone
    job = target.rounds[0][0]
    cell = declared.run_key(job.dataset, {"epsilon": job.epsilon}, job.algorithm, [])
    open_cells = {"any claim": [cell]}
    files = target.look_files(1, ["any claim"], open_cells)
    where = (job.dataset, job.algorithm, job.epsilon)
    same = [j for j in target.rounds[0] if (j.dataset, j.algorithm, j.epsilon) == where]
    assert files == list(dict.fromkeys(j.path for j in same)) and len(files) < len(set(target.look_files(1, ["x"])))
    batch = target.replication_look_batch(1, job.path, {"open": ["any claim"], "open_cells": open_cells})
    assert set(batch.cells) == {j for j in same if j.path == job.path}
    assert replication.look_cost_s(target.replication_spec(), 1, ["any claim"], open_cells) < \
        replication.look_cost_s(target.replication_spec(), 1, ["any claim"])


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
# each look priced per cell (ItemTarget.look_costs): look 1 costs 0.25 h, look 2 0.5 h
DECL = {"groups": ["g"], "rounds": [2, 4], "cpu_hours": 1.0,
        "cost_s": [[["g", "a", "d", 3, 1.0, 900.0]], [["g", "a", "d", 3, 1.0, 1800.0]]]}


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
            "cost_s": [[["g", "a", "d", 3, 1.0, 100.0], ["h", "a", "d", 3, 1.0, 10.0], ["h", "b", "d", 3, 1.0, 1.0],
                        ["h", "b", "d", 3, 2.0, 2.0], ["h", "r", "d", 3, None, 4.0]]]}
    assert replication.look_cost_s(decl, 1, ["claim on only h"]) == 3.0
    assert replication.look_cost_s(decl, 1, ["another claim"]) == 117.0
    assert replication.look_cost_s(decl, 1, []) == 0.0
    # a claim whose decision names its open cells: only their runs, a method without ε at every ε
    cell = declared.run_key("d", {"epsilon": 2.0}, "a", ["r"])
    assert replication.look_cost_s(decl, 1, ["another claim"], {"another claim": [cell]}) == 4.0
    cell = declared.run_key("d", {"epsilon": 1.0}, "a", ["b"])
    assert replication.look_cost_s(decl, 1, ["another claim"], {"another claim": [cell]}) == 111.0
    assert replication.look_cost_s(decl, 1, ["another claim"], {"another claim": []}) == 0.0
    # a cell that reads a method at several ε (a deterioration from ε_max to ε_min): those ε only
    cell = declared.run_key("d", {"epsilon": [2.0]}, "b", [])
    assert replication.look_cost_s(decl, 1, ["claim on only h"], {"claim on only h": [cell]}) == 2.0
    cell = declared.run_key("d", {"epsilon": [1.0, 2.0]}, "b", [])
    assert replication.look_cost_s(decl, 1, ["claim on only h"], {"claim on only h": [cell]}) == 3.0
    # a cell that reads some of the groups only (a step of a sweep): those groups only
    cell = declared.run_key("d", {}, "a", [], groups=["h"])
    assert replication.look_cost_s(decl, 1, ["another claim"], {"another claim": [cell]}) == 10.0
    assert declared.run_key("d", {}, "a", []) != cell and "groups" not in declared.run_key("d", {}, "a", [])


def test_the_summary_takes_the_deciding_look_and_says_how_many_runs(tmp_path):
    table = pd.DataFrame([
        {"paper": "p", "item": "i", "claim": "B", "result": "not decidable", "kind": "paper", "rule": "r0",
         "sensitivity": "robust over s (not decidable at 1 (declared), 2)"},
        {"paper": "p", "item": "j", "claim": "E", "result": "holds", "kind": "paper", "rule": "r"},
        {"paper": "p", "item": "j", "claim": "F", "result": "not decidable", "kind": "paper", "rule": "r",
         "threshold": "> 1 (every)", "quantity": 1.1, "ci_low": 0.9, "ci_high": 1.3},
        {"paper": "p", "item": "i", "claim": "D", "result": "holds", "kind": "bookkeeping", "rule": "r"}])
    decision = {"decided": {"B": {"look": 2, "multiple": 4, "alpha": 0.0125, "stopped": "decided at look 2",
                                  "row": {"claim": "B", "result": "does not hold", "rule": "r2",
                                          "sensitivity": "robust over s (does not hold at 1 (declared), 2)"}}}}
    out = replication.apply(table, {"p/i": decision}).set_index("claim")
    assert out.loc["B", "result"] == "does not hold" and out.loc["B", "rule"] == "r2"
    assert out.loc["B", "sensitivity"] == "robust over s (does not hold at 1 (declared), 2)"   # the same look's
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


def _cell_json(tmp_path, cells, name="c.cells.json"):
    path = tmp_path / name
    path.write_text(json.dumps(cells))
    return path


def _rec(state, look=None):
    return {"state": state, "label": "x", "estimate": 0.0, "low": -1.0, "high": 1.0, "p_fail": 0.5,
            "absent": False, "look": look}


def test_an_open_claim_is_settled_cell_by_cell(tmp_path):
    """A cell a look decided keeps its verdict; the next look runs the open cells only, and the summary
    says how many cells earlier looks settled."""
    a, b, c = (declared.run_key("d", {"epsilon": e}, "m", ["o"]) for e in (0.5, 1.0, 2.0))
    rows = [{"claim": "B", "result": "not decidable", "kind": "paper", "cells": 3},
            {"claim": "H", "result": "not decidable", "kind": "paper", "cells": 2}]   # H: a Python hook's
    cells = {"B": {a: _rec("holds"), b: _rec("open"), c: _rec("open")}}
    d0 = replication.decide(0, _checks(tmp_path, rows), None, DECL,
                            replication.read_decision(_cell_json(tmp_path, cells)))
    assert d0["next"] and d0["open"] == ["B", "H"]
    assert d0["open_cells"] == {"B": sorted([b, c]), "H": None}
    assert d0["settled"]["B"] == {a: _rec("holds", look=0)} and d0["settled"]["H"] == {}
    # look 1: the engine kept a's verdict (its record comes back with look 0); b now fails, c still open
    cells1 = {"B": {a: _rec("holds", look=0), b: _rec("holds"), c: _rec("open")}}
    d1 = replication.decide(1, _checks(tmp_path, rows, "l1.csv"), d0, dict(DECL, rounds=[2, 4, 8],
                                                                          cost_s=DECL["cost_s"] * 3), cells1)
    assert d1["open_cells"]["B"] == [c] and d1["settled"]["B"][b]["look"] == 1
    assert d1["settled"]["B"][a]["look"] == 0
    rows2 = [{"claim": "B", "result": "holds", "kind": "paper", "cells": 3}, rows[1]]
    d2 = replication.decide(2, _checks(tmp_path, rows2, "l2.csv"), d1, dict(DECL, rounds=[2, 4, 8],
                                                                          cost_s=DECL["cost_s"] * 3),
                            {"B": {a: _rec("holds", 0), b: _rec("holds", 1), c: _rec("holds")}})
    assert d2["decided"]["B"]["settled_earlier"] == {"0": 1, "1": 1}
    # a check that judged a settled cell again (outside verdicts.check) is one clear error
    with pytest.raises(DPClustError, match="judged again 1 cell"):
        replication.decide(1, _checks(tmp_path, rows, "l1.csv"), d0, dict(DECL, rounds=[2, 4, 8],
                                                                         cost_s=DECL["cost_s"] * 3),
                           {"B": {a: _rec("open"), b: _rec("holds"), c: _rec("open")}})
    assert replication.runs_text(d2["decided"]["B"]).endswith("cells settled earlier: 1 at look 0, 1 at look 1)")


def test_degenerate_cells_more_runs_cannot_decide_get_no_more_runs(tmp_path):
    """A cell the degenerate guard took never holds (more runs keep it degenerate): a look runs it again
    only while its estimate lies past the threshold (p of "holds here" < ½: it could still fail); a claim
    kept open by such stuck cells alone stops at once instead of spending its looks on them."""
    a, b, c = (declared.run_key("d", {"epsilon": e}, "m", ["o"]) for e in (0.5, 1.0, 2.0))
    rows = [{"claim": "B", "result": "not decidable", "kind": "paper", "cells": 3}]
    stuck = dict(_rec("open"), p_fail=1.0, degenerate=True)
    cells = {"B": {a: _rec("holds"), b: stuck, c: stuck}}
    d0 = replication.decide(0, _checks(tmp_path, rows), None, DECL,
                            replication.read_decision(_cell_json(tmp_path, cells)))
    assert not d0["next"] and d0["open"] == [] and d0["stopped"] == "every claim decided"
    assert d0["decided"]["B"]["stopped"] == replication.STUCK and d0["decided"]["B"]["look"] == 0
    # one degenerate cell past the threshold (it may fail with more runs) and one plain open cell: both
    # run again, the stuck one does not
    past = dict(stuck, p_fail=0.2)
    cells = {"B": {a: stuck, b: past, c: _rec("open")}}
    d0 = replication.decide(0, _checks(tmp_path, rows, "c2.csv"), None, DECL,
                            replication.read_decision(_cell_json(tmp_path, cells, "c2.cells.json")))
    assert d0["next"] and d0["open_cells"] == {"B": sorted([b, c])}
    # the engine marks the guard's cells so: a within-c× cell on a collapsed solution is stuck
    keyed = verdicts.degenerate_cell(verdicts.Cell("x", verdicts.t_cell("x", 3.0, 0.1).interval, key=a), 2, 10)
    states = verdicts.check("ratio < 10", [keyed], verdicts.Directional("<", 10.0), "every").cell_states
    assert states[a]["degenerate"] and states[a]["state"] == "open" and replication.stuck(states[a])


def test_a_settled_cell_keeps_its_verdict_and_leaves_the_test():
    """`verdicts.settled`: the cell keeps the state its look gave it; Holm's family keeps all n cells,
    the settled ones with p = 1, so the open cells' thresholds are those of n."""
    from dataclasses import replace

    from dpclust.pipeline import verdicts

    test = verdicts.Directional(">", 0.0, null_margin=0.0)
    cells = [replace(verdicts.t_cell(f"c{i}", est, 1.0, 50), key=f"c{i}") for i, est in enumerate([-0.5, 2.9, 5.0])]
    plain = verdicts.judge(cells, test, "every", 0.05)
    assert [c.state for c in plain.cells] == ["open", "holds", "holds"]
    prior = {"c0": dict(_rec("holds"), look=0), "c1": dict(_rec("open"))}
    with verdicts.settled({"claim": prior}), verdicts.deciding("claim"):
        v = verdicts.judge(cells, test, "every", 0.05)
    assert [c.state for c in v.cells] == ["holds", "open", "holds"] and v.cells[0].look == 0
    with verdicts.settled({"other claim": prior}), verdicts.deciding("claim"):
        assert [c.state for c in verdicts.judge(cells, test, "every", 0.05).cells] == ["open", "holds", "holds"]


@pytest.mark.parametrize("side, quantifier, means", [
    (">", "every", [0.0, 0.3, 0.3, 0.3]),           # one false cell among nearly decided true ones
    (">=", "every", [0.0, 0.0, 0.2, 0.2]),          # true, two cells at the threshold
    (">", "almost all", [0.0, 0.0, 0.3, 0.3, 0.3]),  # false by one cell
])
def test_settling_cell_by_cell_keeps_the_error_at_its_level(side, quantifier, means):
    """Cells decided at a look keep their verdicts and only the open ones get more runs: a wrong verdict
    still needs a wrong cell decision at some look, each at its share of α. Settling cells at α at every
    look (no error spending) inflates the error, which this simulation sees."""
    reps, looks = 1000, [1, 2, 4, 10]
    rate = replication.null_error_rate(len(means), looks, replication.alpha_schedule(3), reps, side=side,
                                       seed=3, per_cell=True, quantifier=quantifier, means=means)
    naive = replication.null_error_rate(len(means), looks, [ALPHA] * 4, reps, side=side,
                                        seed=3, per_cell=True, quantifier=quantifier, means=means)
    se = (ALPHA * (1 - ALPHA) / reps) ** 0.5
    assert rate <= ALPHA + 2 * se and naive > ALPHA + 3 * se, (rate, naive)


# ------------------------------------------------------------------------------ the alternatives
SENSITIVITY = [{"what": "draw", "declared": "seed 0", "groups": {"sens": "g", "other": "x"},
                "variants": {"_g1": "seed 1"}},
               {"what": "range", "declared": "per coordinate", "groups": {"g_dim": "g"},
                "values": {"g_dim": "per dimension"}},
               {"what": "threshold", "declared": "2", "claims": {"3": {"t": 3}}}]


def test_alternatives_with_runs_of_their_own_are_tracked():
    """Data and settings variants standing for a replicated group are replicated too (thresholds read
    the item's own runs); the declared value is tracked on the alternatives' scope."""
    decl = replication.declaration({"groups": ["g"]}, SENSITIVITY)
    assert decl["alternatives"] == [
        {"what": "draw", "values": {"seed 0 (declared)": {"own": True},
                                    "seed 1": {"groups": {"sens": "g"}, "suffix": "_g1"}}},
        {"what": "range", "values": {"per coordinate (declared)": {"own": True},
                                     "per dimension": {"groups": {"g_dim": "g"}, "suffix": None}}}]
    assert "alternatives" not in replication.declaration({"groups": ["h"]}, SENSITIVITY)


def test_an_alternative_runs_its_own_blocks_only():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Job:
        group: str
        algorithm: str
        dataset: str
        k: int = 3
        epsilon: float | None = 1.0

    decl = replication.declaration({"groups": ["g"]}, SENSITIVITY)
    jobs = [Job("g", "m", "d"), Job("g", "o", "d"), Job("sens", "m", "d_g1"), Job("sens", "o", "d_g1"),
            Job("g_dim", "m", "d"), Job("g", "m", "e")]
    claim = "m beats o"
    key = declared.run_key("d", {"epsilon": 1.0}, "m", ["o"])
    seed1 = replication.alternative_key(claim, "draw", "seed 1")
    dim = replication.alternative_key(claim, "range", "per dimension")
    mine = replication.alternative_key(claim, "draw", "seed 0 (declared)")
    assert replication.look_jobs(decl, jobs, [seed1], {seed1: [key]}) == [jobs[2], jobs[3]]
    # a settings variant: its group's m in place of the own group's, the own group's o beside it
    assert replication.look_jobs(decl, jobs, [dim], {dim: [key]}) == [jobs[1], jobs[4]]
    assert replication.look_jobs(decl, jobs, [mine], {mine: [key]}) == [jobs[0], jobs[1]]
    assert replication.look_jobs(decl, jobs, [claim], {claim: [key]}) == [jobs[0], jobs[1]]
    assert replication.look_jobs(decl, jobs, [seed1]) == [jobs[2], jobs[3]]


def test_the_rounds_are_planned_for_the_variant_groups_too(test_plan):
    target = test_plan.item("su2016", "fig3")
    decl = dict(target.replication, alternatives=[
        {"what": "w", "values": {"v": {"groups": {"e01": target.replication["groups"][0]}, "suffix": None}}}])
    plain = replication.round_jobs(target.key, target.runs, target.replication)
    more = replication.round_jobs(target.key, target.runs, decl)
    assert {j.group for j in more[0]} - {j.group for j in plain[0]} == {"e01"}


def test_an_alternative_is_decided_in_looks_like_a_claim(tmp_path):
    """The paper's claim decided at look 0 stops; its open alternative gets the next look, and the last
    look's label of the tracked declaration reaches the summary (the why that quotes it too), while an
    untracked declaration's label stays the deciding look's; the alternatives' CPU cap is their own, so
    the paper's claim gets the looks it would get alone."""
    decl = dict(replication.declaration({"groups": ["g"], "rounds": [2, 4]}, SENSITIVITY[:1]),
                cost_s=[[["g", "m", "d", 3, 1.0, 900.0], ["sens", "m", "d_g1", 3, 1.0, 900.0]]] * 2)
    seed1 = replication.alternative_key("A", "draw", "seed 1")
    mine = replication.alternative_key("A", "draw", "seed 0 (declared)")
    label0 = "on D only: draw: decided at one value only (does not hold at seed 0 (declared); not decidable at seed 1)"
    other0 = "robust over t (does not hold at 2 (declared), 3)"
    rows = [{"claim": "A", "result": "does not hold", "kind": "paper", "cells": 1,
             "sensitivity": f"{label0}; {other0}", "why": f"genuine; {label0}; {other0}"}]
    alts = {seed1: {"claim": "A", "of": "A", "what": "draw", "value": "seed 1", "cells": {},
                    "row": {"claim": "A", "result": "not decidable", "cells": 1}},
            mine: {"claim": "A", "of": "A", "what": "draw", "value": "seed 0 (declared)", "cells": {},
                   "row": {"claim": "A", "result": "does not hold", "cells": 1}},
            "A ⟦untracked = 1⟧": {"claim": "A", "row": {"result": "not decidable"}, "cells": {}}}
    d0 = replication.decide(0, _checks(tmp_path, rows), None, decl, {},
                            {"alternatives": alts, "labels": {"A": [["draw", label0], ["t", other0]]}})
    assert d0["next"] and d0["open"] == [seed1] and (d0["next_s"], d0["alternatives_next_s"]) == (0.0, 900.0)
    assert d0["decided"]["A"]["stopped"] == "decided at look 0" and d0["decided"][mine]["alternative"]
    assert replication.stopped_results(d0) == {mine: "does not hold", "A": "does not hold"}
    label1 = "on D only: robust over draw (does not hold at seed 0 (declared), seed 1)"
    alts1 = {seed1: dict(alts[seed1], row={"claim": "A", "result": "does not hold", "cells": 1})}
    d1 = replication.decide(1, _checks(tmp_path, [dict(rows[0], result="not decidable")], "l1.csv"), d0, decl, {},
                            {"alternatives": alts1, "labels": {"A": [["draw", label1], ["t", "changed"]]}})
    assert not d1["next"] and d1["stopped"] == "every claim decided"
    assert d1["decided"][seed1]["look"] == 1 and d1["decided"][seed1]["multiple"] == 2
    table = pd.DataFrame([dict(rows[0], paper="p", item="i")])
    out = replication.apply(table, {"p/i": d1})
    runs = " (runs: seed 0 (declared) 1×, seed 1 2×)"
    assert out.loc[0, "sensitivity"] == f"{label1}{runs}; {other0}"
    assert out.loc[0, "why"] == f"genuine; {label1}{runs}; {other0}"
    assert out.loc[0, "runs"].startswith("1× (look 0") and out.loc[0, "result"] == "does not hold"
    # the caps: the alternatives' own; the paper's claim gets the looks it would get alone
    open_rows = [dict(rows[0], result="not decidable")]
    alone = replication.decide(0, _checks(tmp_path, open_rows, "c.csv"), None,
                               dict(decl, cpu_hours=0.3, alternatives=[]))
    tight = dict(decl, cpu_hours=0.3)
    capped = replication.decide(0, _checks(tmp_path, open_rows, "c.csv"), None, tight, {}, {"alternatives": alts})
    assert capped["open"] == ["A", seed1] and (alone["next_s"], capped["next_s"]) == (900.0, 900.0)
    assert capped["alternatives_next_s"] == 900.0    # seed1's own blocks, priced apart
    d1 = replication.decide(1, _checks(tmp_path, open_rows, "c1.csv"), capped, tight, {},
                            {"alternatives": {seed1: alts[seed1]}})
    assert not d1["next"] and d1["decided"][seed1]["stopped"].startswith("cap: CPU (next look")
    assert d1["added_s"] == 900.0 and d1["alternatives_added_s"] == 900.0
    assert replication.apply(table, {"p/i": d1}).loc[0, "added_cpu_s"] == 1800.0
