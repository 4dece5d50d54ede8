"""Racing (dpclust.pipeline.racing): the declaration, the contender rule on cells with known answers,
its error under the null, the planned looks, and the race replayed by the `best` item agreeing with
the checkpoint's decisions."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from tests.helpers import timeless

from dpclust.api import DPClustError
from dpclust.pipeline import racing
from dpclust.pipeline.verdicts import ALPHA

ROOT = Path(__file__).resolve().parents[1]
DECL = racing.declaration({"groups": ["kmeans"], "rounds": [2, 4]})


@pytest.mark.parametrize("bad, why", [
    ({"rounds": [2]}, "groups"),
    ({"groups": ["g"], "rounds": [4, 2]}, "increase"),
    ({"groups": ["g"], "rounds": [1, 2]}, "increase"),
    ({"groups": ["g"], "rounds": [2, 20]}, "at most 10"),
    ({"groups": ["g"], "alpha": 0.7}, "alpha"),
    ({"groups": ["g"], "cpu_hours": 0}, "cpu_hours"),
])
def test_a_bad_declaration_is_one_clear_error(bad, why):
    with pytest.raises(DPClustError, match=f"racing: .*{why}"):
        racing.declaration(bad)


def test_the_looks_spend_the_declared_alpha_once():
    assert racing.declaration(None) is None
    decl = racing.declaration({"groups": ["g"], "rounds": [2, 4, 8], "alpha": 0.1})
    assert racing.multiples(decl) == [1, 2, 4, 8]
    assert sum(racing.levels(decl)) == pytest.approx(0.1)
    assert racing.levels(DECL)[0] == pytest.approx(ALPHA / 2)


def _welch_half(sd_a, sd_b, n, level):
    """The half-width of a Welch interval at confidence 1 − level for two samples of n (computed here)."""
    va, vb = sd_a ** 2 / n, sd_b ** 2 / n
    df = (va + vb) ** 2 / (va ** 2 / (n - 1) + vb ** 2 / (n - 1))
    return stats.t.ppf(1 - level / 2, df) * math.sqrt(va + vb)


@pytest.mark.parametrize("inside", [True, False])
def test_a_method_contends_exactly_while_its_gap_to_the_best_reaches_zero(inside):
    level = racing.levels(DECL)[1]
    half = _welch_half(1.0, 2.0, 10, level)
    gap = half * (0.99 if inside else 1.01)   # just inside / just beyond the boundary
    rows = [{"algorithm": "b", "mean": 5.0 + gap, "sd": 2.0, "n": 10},
            {"algorithm": "a", "mean": 5.0, "sd": 1.0, "n": 10},
            {"algorithm": "far", "mean": 50.0, "sd": 1.0, "n": 10}]
    keep, found = racing.contenders(rows, level)
    assert keep == (["a", "b"] if inside else ["a"])       # the best first; "far" never contends
    assert found["b"]["gap_low"] == pytest.approx(gap - half)
    assert found["a"]["gap_low"] == 0.0


def test_one_run_or_equal_constant_methods_keep_contending():
    level = racing.levels(DECL)[0]
    one = [{"algorithm": "a", "mean": 1.0, "sd": 0.1, "n": 5}, {"algorithm": "b", "mean": 9.0, "sd": math.nan, "n": 1}]
    assert racing.contenders(one, level)[0] == ["a", "b"]    # one run: no interval, cannot be beaten
    same = [{"algorithm": n, "mean": 2.0, "sd": 0.0, "n": 5} for n in ("b", "a")]
    assert racing.contenders(same, level)[0] == ["a", "b"]   # a tie is never separated (ties by name)
    worse = [{"algorithm": "a", "mean": 2.0, "sd": 0.0, "n": 5}, {"algorithm": "b", "mean": 2.5, "sd": 0.0, "n": 5}]
    assert racing.contenders(worse, level)[0] == ["a"]       # deterministic and worse: out


def test_the_race_separates_methods_of_equal_mean_at_most_alpha():
    """The simulated null (two methods of equal mean, normal runs): separated at most α of the time,
    with 2 and 5 initial runs. The same race at α at every look (no spending) exceeds α: the test
    can see the inflation the schedule prevents. With a difference of 2 sd it separates nearly always."""
    reps = 2000   # a rate's standard error ≈ 0.004 at 0.03
    for n0 in (2, 5):
        assert racing.null_separation_rate(DECL, n0, reps, seed=n0) <= ALPHA
    unspent = dict(DECL)
    original = racing.levels
    try:
        racing.levels = lambda decl: [ALPHA] * len(racing.multiples(decl))
        assert racing.null_separation_rate(unspent, 5, reps, seed=7) > ALPHA
    finally:
        racing.levels = original
    rng = np.random.default_rng(3)
    separated = 0
    for _ in range(200):
        data = rng.standard_normal((2, 20)) + np.array([[0.0], [2.0]])
        for look, level in enumerate(racing.levels(DECL)):
            x = data[:, : racing.multiples(DECL)[look] * 5]
            rows = [{"algorithm": f"m{i}", "mean": x[i].mean(), "sd": x[i].std(ddof=1), "n": x.shape[1]}
                    for i in (0, 1)]
            if racing.contenders(rows, level)[0] == ["m0"]:
                separated += 1
                break
    assert separated / 200 > 0.9


# ------------------------------------------------------------------------------ planning
@pytest.fixture(scope="module")
def plans():
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    return {p: plan(load_config(ROOT / "config", overrides={"preset": p})) for p in ("test", "quick", "full")}


def test_looks_continue_each_cells_seeds_in_batches_of_their_own(plans):
    for preset, p in plans.items():
        owner = p.item("leaderboard", "table")
        decl = owner.race
        assert owner.race_owner == "table" and len(owner.race_rounds) == len(decl["rounds"])
        for other in ("figure", "best"):   # the items that read the table's runs see its race
            assert p.item("leaderboard", other).race == decl and p.item("leaderboard", other).race_owner == "table"
        seeds: dict[tuple, list[int]] = {}
        for job in owner.runs:
            if job.group in decl["groups"] and job.epsilon is not None:
                seeds.setdefault((job.group, job.dataset, job.algorithm, job.k, job.epsilon), []).extend(
                    range(job.seed_start, job.seed_start + job.seed_count))
        assert seeds
        for look, jobs in enumerate(owner.race_rounds, start=1):
            assert {(j.group, j.dataset, j.algorithm, j.k, j.epsilon) for j in jobs} == set(seeds)
            for j in jobs:
                cell = (j.group, j.dataset, j.algorithm, j.k, j.epsilon)
                reps = decl["repetitions"][j.group]
                assert j.seed_start == racing.multiples(decl)[look - 1] * reps == len(seeds[cell])   # continues
                seeds[cell].extend(range(j.seed_start, j.seed_start + j.seed_count))
                assert j.path.endswith(f"/{j.group}.round{look}/{j.dataset}/{j.algorithm}.json")
        assert all(len(s) == len(set(s)) == racing.multiples(decl)[-1] * decl["repetitions"][c[0]]
                   for c, s in seeds.items())                                                    # never repeated
        planned = {j.path for jobs in owner.race_rounds for j in jobs}
        assert planned == set(p.race_batches) and not planned & set(p.runs_by_path)             # only on request
        # one run job per (group, dataset, algorithm) and look, whatever the cells of it
        assert len(planned) == sum(len({(j.group, j.dataset, j.algorithm) for j in jobs}) for jobs in owner.race_rounds)
        if preset == "full":
            assert len(planned) < sum(map(len, owner.race_rounds)) / 4


def test_a_look_runs_only_the_open_cells_contenders(plans):
    owner = plans["test"].item("leaderboard", "table")
    cell = racing.cell_id("kmeans", "iris", 3, 1.0)
    one = owner.race_look_files(1, {cell: ["su2016.dplloyd"]})
    assert len(one) == 1 and one[0].endswith("/kmeans.round1/iris/su2016.dplloyd.json")
    both = owner.race_look_files(1, {cell: ["su2016.dplloyd", "cohenaddad2022.hst_kmeans"]})
    assert len(both) == 2 and set(one) < set(both)
    assert owner.race_look_files(1, {}) == []
    assert owner.race_look_files(1, {racing.cell_id("kmedian", "iris", 3, 1.0): ["su2016.dplloyd"]}) == []


def test_a_look_job_runs_exactly_its_batchs_open_blocks_as_planned(plans):
    """A look's job for one (group, dataset, algorithm) holds the blocks of its open cells only, each
    with the seeds planned for it whichever other cells are open."""
    owner = plans["full"].item("leaderboard", "table")
    path = next(j.path for j in owner.race_rounds[1] if j.dataset == "s1" and j.algorithm == "su2016.dplloyd")
    blocks = [j for j in owner.race_rounds[1] if j.path == path]
    assert len(blocks) > 2 and len({j.epsilon for j in blocks}) == len(blocks)
    ids = [racing.cell_id("kmeans", j.dataset, j.k, j.epsilon) for j in blocks]
    other = racing.cell_id("kmeans", "s1", blocks[0].k, blocks[0].epsilon)
    whole = owner.race_look_batch(2, path, {cid: ["su2016.dplloyd"] for cid in ids})
    part = owner.race_look_batch(2, path, {ids[1]: ["balcan2017.balcan", "su2016.dplloyd"], other: ["x"]})
    assert whole.cells == tuple(blocks) and part.cells == (blocks[1],)
    assert part.spec["cells"] == [whole.spec["cells"][1]] and part.spec["spec"] == whole.spec["spec"]
    with pytest.raises(DPClustError, match="no block of it is open"):
        owner.race_look_batch(2, path, {ids[0]: ["balcan2017.balcan"]})


def test_a_blocks_record_does_not_depend_on_the_blocks_sharing_its_job(plans, prepared_from_mirror):
    """The same block run alone or in its whole look batch gives the same record, wall times aside."""
    from dpclust.pipeline.run_job import run_batch

    quick = plans["quick"].item("leaderboard", "table")
    path = next(j.path for j in quick.race_rounds[0] if j.dataset == "iris" and j.algorithm == "su2016.dplloyd")
    blocks = [j for j in quick.race_rounds[0] if j.path == path]
    assert len(blocks) == 2
    data = {"iris": str(prepared_from_mirror("iris"))}
    open_all = {racing.cell_id("kmeans", j.dataset, j.k, j.epsilon): [j.algorithm] for j in blocks}
    together = run_batch(quick.race_look_batch(1, path, open_all).spec, data)["records"]
    for i, block in enumerate(blocks):
        alone = run_batch(quick.race_look_batch(1, path, {racing.cell_id("kmeans", "iris", block.k, block.epsilon):
                                                          [block.algorithm]}).spec, data)["records"]
        assert timeless(alone) == [timeless(together[i])]


def test_a_racing_group_the_item_does_not_run_is_one_clear_error():
    with pytest.raises(DPClustError, match="racing names run groups \\['nope'\\]"):
        racing.race_jobs("x/y", [], racing.declaration({"groups": ["nope"]}))


# ------------------------------------------------------------------------------ checkpoint and best agree
def _cell_records(rng, algorithm, mean, seeds, guarantee="eps", eps=1.0, wall=0.1, k=5):
    from tests.leaderboard.helpers import record

    rec = record("s1", algorithm, k, eps, "kmeans", kmeans=list(mean + rng.standard_normal(len(seeds))),
                 guarantee=guarantee, wall=wall)
    for run, seed in zip(rec["runs"], seeds):
        run["seed"] = seed
    return rec


def test_the_best_item_replays_the_race_the_checkpoint_ran():
    """Three methods, 5 initial runs, looks at 10 and 20: the far one is out at look 0 and keeps its
    5 runs; each look adds runs for the contenders the previous decision names, and the `best` item's
    replay on all records ends where the checkpoint's decisions did."""
    from tests.leaderboard.helpers import KMEANSPP, record, spec

    from dpclust.pipeline.items.leaderboard import best
    from dpclust.pipeline.items.leaderboard.common import leaderboard

    item = spec("best", "aggregate", "test")
    item["racing"] = dict(DECL, repetitions={"kmeans": 5}, objectives={"kmeans": "kmeans"})
    means = {"su2016.dplloyd": 20.0, "balcan2017.balcan": 20.4, "cohenaddad2022.hst_kmeans": 60.0}
    rng = np.random.default_rng(11)
    records = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10.0, 10.5], guarantee="nonprivate")]
    records += [_cell_records(rng, a, m, range(5)) for a, m in means.items()]
    cell = racing.cell_id("kmeans", "s1", 5, 1.0)
    decisions = []
    for look in range(len(DECL["rounds"]) + 1):
        decision = racing.decide(records, item["racing"], {"kmeans": 5}, lambda r: leaderboard(r, item), look)
        decisions.append(decision)
        if not decision["next"]:
            break
        lo, hi = [5 * m for m in racing.multiples(DECL)[look: look + 2]]
        records += [_cell_records(rng, a, means[a], range(lo, hi)) for a in decision["open"][cell]]
    assert set(decisions[0]["open"][cell]) == {"su2016.dplloyd", "balcan2017.balcan"}   # 40 sd worse: out at once
    row = best.aggregate(records, item, None).iloc[0]
    runs = {a: sum(len(r["runs"]) for r in records if r["algorithm"] == a) for a in means}
    assert runs["cohenaddad2022.hst_kmeans"] == 5 and runs["su2016.dplloyd"] > 5
    assert row["best_runs"] == runs[row["best"]] and row["runner_up_runs"] == runs[row["runner_up"]]
    last = len(decisions) - 1
    assert row["stopped"].endswith(f"at look {last}")
    assert (row["decided"] == "separated") == row["stopped"].startswith("separated")
    assert row["decided"] in ("separated", "overlapping")
    assert decisions[-1]["open"] == {}


def test_a_cpu_cap_stops_the_open_cells_before_a_look_it_cannot_afford():
    """The next look's price is each open cell's contenders' runs it adds at the committed cost
    table's price per run (`run_cost_s`); a cap below it stops the cell at look 0 ("CPU cap reached",
    overlapping), one above it lets the look run. The recorded run times play no part: the same
    records with three times their wall times (a loaded machine) give the same decision."""
    from tests.leaderboard.helpers import KMEANSPP, record, spec

    from dpclust.pipeline.items.leaderboard import best
    from dpclust.pipeline.items.leaderboard.common import leaderboard

    item = spec("best", "aggregate", "test")
    table_of = lambda r: leaderboard(r, item)   # noqa: E731
    rng = np.random.default_rng(5)
    records = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10.0, 10.5], guarantee="nonprivate")]
    records += [_cell_records(rng, a, 20.0, range(5)) for a in ("su2016.dplloyd", "balcan2017.balcan")]
    slow = [dict(r, runs=[dict(run, wall_time_s=3 * run["wall_time_s"]) for run in r["runs"]]) for r in records]
    cell = racing.cell_id("kmeans", "s1", 5, 1.0)
    price = {"su2016.dplloyd": 2.0, "balcan2017.balcan": 7.0}
    run_cost_s = {racing.price_key("kmeans", "s1", 5, 1.0, a): p for a, p in price.items()}
    need = sum(p * 5 for p in price.values())           # look 1 adds 5 runs to each contender
    for cap_s, stops in ((need * 0.9, True), (need * 1.1, False)):
        decl = dict(DECL, cpu_hours=cap_s / 3600, repetitions={"kmeans": 5}, objectives={"kmeans": "kmeans"},
                    run_cost_s=run_cost_s)
        assert racing.looks_cpu_s(records, decl, {"kmeans": 5}, {cell: list(price)}, 0) == (0.0, {
            cell: pytest.approx(need)})
        decision = racing.decide(records, decl, {"kmeans": 5}, table_of, 0)
        assert decision == racing.decide(slow, decl, {"kmeans": 5}, table_of, 0)
        assert decision["next"] is not stops
        if stops:
            assert decision["cpu_stopped"] == [cell]
            row = best.aggregate(records, dict(item, racing=decl), None).iloc[0]
            assert row["stopped"] == "CPU cap reached at look 0" and row["decided"] == "overlapping"
        else:
            assert set(decision["open"][cell]) == set(price)
    # two open cells, the budget for one: the cheaper cell's look runs, the dearer cell (k = 10, priced
    # ten times higher) stops
    dear = racing.cell_id("kmeans", "s1", 10, 1.0)
    records += [record("s1", KMEANSPP, 10, None, "reference_kmeans", kmeans=[8.0, 8.5], guarantee="nonprivate")]
    records += [_cell_records(rng, a, 20.0, range(5), k=10) for a in price]
    run_cost_s = {**run_cost_s, **{racing.price_key("kmeans", "s1", 10, 1.0, a): 10 * p for a, p in price.items()}}
    decl = dict(DECL, cpu_hours=need * 1.5 / 3600, repetitions={"kmeans": 5}, objectives={"kmeans": "kmeans"},
                run_cost_s=run_cost_s)
    decision = racing.decide(records, decl, {"kmeans": 5}, table_of, 0)
    assert set(decision["open"]) == {cell} and decision["cpu_stopped"] == [dear], decision
    # a run the plan did not price costs the dearest planned run (never a free look), or stops its cell
    # when nothing is priced
    unpriced = {k: v for k, v in run_cost_s.items() if "|10|" in k}
    assert racing.looks_cpu_s(records, dict(decl, run_cost_s=unpriced), {"kmeans": 5}, {cell: list(price)}, 0)[1][
        cell] == pytest.approx(5 * 2 * 70.0)
    decision = racing.decide(records, dict(decl, run_cost_s={}), {"kmeans": 5}, table_of, 0)
    assert not decision["next"] and sorted(decision["cpu_stopped"]) == sorted([cell, dear])
