"""benchmarks/equivalence.py: claim verdicts joined and compared, cells compared run by run or by TOST on
their per-run metrics, the exit code that gates a numerics change, on tiny results directories written in
the real formats (run records `{"schema": 2, "records": [...]}`, checks/summary.csv)."""
from __future__ import annotations

import json
import math
import runpy
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpclust.pipeline.records import flatten_run

from .conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]
SUMMARY_COLUMNS = ["paper", "item", "claim", "result", "quantity", "ci_low", "ci_high", "threshold", "detail", "why"]


@pytest.fixture(scope="module")
def eq():
    return load_benchmark("equivalence")


def make_run(seed: int, cost: float, wall: float = 0.01) -> dict:
    """A run as dpclust.pipeline.run_job writes it (store_centers off)."""
    return {"seed": seed, "init_seed": 1000 + seed, "wall_time_s": wall, "released": {},
            "diagnostics": {"cost_kmeans": cost, "nicv": cost / 100, "cost_kmedian": 10 * cost ** 0.5,
                            "cluster_sizes": [50, 50], "epsilon_spent": 1.0, "delta_spent": 0.0, "iterations": 5,
                            "ledger": [["noise", 1.0, 0.0]],
                            "info": {"converged": True, "lloyd_iterations": 3, "tree_cost": 1.1 * cost,
                                     "strategy": "public"}}}


def make_record(costs, dataset="iris", algorithm="su2016.dplloyd", k=3, epsilon=1.0, group="private",
                seed0=0, wall=0.01) -> dict:
    seeds = list(range(seed0, seed0 + len(costs)))
    return {"schema": 2, "paper": "su2016", "item": "fig2", "group": group, "dataset": dataset,
            "algorithm": algorithm, "function": "dpclust.su2016.dplloyd:dplloyd", "private": epsilon is not None,
            "k": k, "epsilon": epsilon, "transform": "minmax_01", "seeds": seeds, "base_seed": 20261121,
            "init_sets": None, "status": "ok", "reason": "", "delta": 0.0, "settings": {}, "n": 100, "d": 2,
            "runs": [make_run(s, float(c), wall) for s, c in zip(seeds, costs)]}


def write_results(root: Path, records: list[dict], claims: list[tuple[str, str]]) -> Path:
    """A results directory: one record file per cell (runs/<paper>/<item>/<group>/<dataset>/<algorithm>.json)
    and checks/summary.csv with one row per (claim, result)."""
    for record in records:
        path = (root / "runs" / record["paper"] / record["item"] / record["group"] / record["dataset"]
                / f"{record['algorithm']}.k{record['k']}.eps{record['epsilon']}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"schema": 2, "records": [record]}, sort_keys=True))
    (root / "checks").mkdir(parents=True, exist_ok=True)
    rows = [{"paper": "su2016", "item": "fig2", "claim": claim, "result": result, "quantity": "1.0",
             "ci_low": "0.9", "ci_high": "1.1", "threshold": "< 1.2", "detail": "", "why": ""}
            for claim, result in claims]
    pd.DataFrame(rows, columns=SUMMARY_COLUMNS).to_csv(root / "checks" / "summary.csv", index=False)
    return root


CLAIMS = [("DPLloyd beats PGkM at every k", "holds"), ("EUGkM is best at ε = 1", "does not hold"),
          ("GkM converges", "not decidable")]


def base_records(rng, wall=0.01) -> list[dict]:
    return [make_record(rng.normal(100, 5, 10), dataset="iris", wall=wall),
            make_record(rng.normal(50, 2, 5), dataset="s1", k=15, epsilon=0.1, wall=wall),
            make_record(rng.normal(20, 0.1, 3), algorithm="baselines.lloyd", epsilon=None, group="reference",
                        wall=wall)]


def compare(eq, tmp_path, before_records, after_records, before_claims=CLAIMS, after_claims=CLAIMS, **kw):
    before = write_results(tmp_path / "before", before_records, before_claims)
    after = write_results(tmp_path / "after", after_records, after_claims)
    return eq.build_report(before, after, **kw), before, after


def statuses(report) -> dict:
    return {c["cell"]["dataset"] + "/" + c["cell"]["algorithm"]: c["status"] for c in report["cells"]["compared"]}


# --- the statistics --------------------------------------------------------------------------------------

def test_welch_tost_is_two_shifted_one_sided_welch_tests(eq):
    rng = np.random.default_rng(1)
    a, b = rng.normal(10, 1, 12), rng.normal(10.2, 2, 9)
    m = 0.5
    t = eq.tost_welch(a, b, m, 0.05)
    assert t.diff == pytest.approx(b.mean() - a.mean())
    # H0: d <= -m  <=>  mean(b + m) <= mean(a); H0: d >= m  <=>  mean(b - m) >= mean(a)
    assert t.p_lower == pytest.approx(stats.ttest_ind(b + m, a, equal_var=False, alternative="greater").pvalue)
    assert t.p_upper == pytest.approx(stats.ttest_ind(b - m, a, equal_var=False, alternative="less").pvalue)
    assert t.p == max(t.p_lower, t.p_upper)
    welch = stats.ttest_ind(b, a, equal_var=False)
    assert t.df == pytest.approx(welch.df)
    ci = welch.confidence_interval(0.90)
    assert (t.ci_low, t.ci_high) == pytest.approx((ci.low, ci.high))
    # equivalent exactly when the 90 % interval lies inside the margin
    assert t.equivalent(0.05) == (-m < t.ci_low and t.ci_high < m)


def test_tost_known_cases(eq):
    # a hand case: means 0 and 0.1, each sd 1 over 4 values: se = sqrt(2/4), df = 6
    a, b = np.array([-1.0, 1.0, -1.0, 1.0]) * np.sqrt(3) / 2, np.array([-1.0, 1.0, -1.0, 1.0]) * np.sqrt(3) / 2 + 0.1
    t = eq.tost_welch(a, b, 1.0, 0.05)
    se = np.sqrt(0.75 * 4 / 3 * 2 / 4)
    assert (t.diff, t.se, t.df) == pytest.approx((0.1, se, 6.0))
    assert t.p_lower == pytest.approx(stats.t.sf(1.1 / se, 6))
    assert t.p_upper == pytest.approx(stats.t.cdf(-0.9 / se, 6))
    # tight samples far inside the margin: equivalent; far outside: not
    tight = np.array([100.0, 100.01, 99.99, 100.0])
    assert eq.tost_welch(tight, tight + 0.05, 0.5).equivalent(0.05)
    assert not eq.tost_welch(tight, tight + 5.0, 0.5).equivalent(0.05)
    # both sides constant: the difference is exact
    assert eq.tost_welch([1.0, 1.0, 1.0], [1.001, 1.001, 1.001], 0.005).p == 0.0
    assert eq.tost_welch([1.0, 1.0, 1.0], [1.01, 1.01, 1.01], 0.005).p == 1.0


def test_paired_tost_is_a_one_sample_tost_of_the_differences(eq):
    rng = np.random.default_rng(2)
    a = rng.normal(100, 20, 10)
    b = a + rng.normal(0.01, 0.05, 10)
    t = eq.tost_paired(a, b, 0.5, 0.05)
    d = b - a
    assert t.p_lower == pytest.approx(stats.ttest_1samp(d + 0.5, 0, alternative="greater").pvalue)
    assert t.p_upper == pytest.approx(stats.ttest_1samp(d - 0.5, 0, alternative="less").pvalue)
    assert t.equivalent(0.05)
    assert not eq.tost_welch(a, b, 0.5, 0.05).equivalent(0.05)   # the same runs, unpaired: no power


# --- metrics and records ---------------------------------------------------------------------------------

def test_metrics_are_the_float_fields_not_seeds_wall_times_or_counters(eq):
    runs = [flatten_run(make_run(s, 10.0 + s)) for s in range(3)]
    assert eq.metric_names(runs) == ["cost_kmeans", "cost_kmedian", "delta_spent", "epsilon_spent",
                                     "info.tree_cost", "nicv"]


def test_a_cell_split_over_blocks_is_one_cell_and_checkpoint_blocks_are_ignored(eq, tmp_path):
    root = write_results(tmp_path / "r", [make_record([1.0, 2.0]), make_record([3.0], seed0=2, dataset="s1")], [])
    extra = dict(make_record([4.0, 5.0], seed0=2), algorithm="su2016.dplloyd")
    path = root / "runs" / "su2016" / "fig2" / "private" / "iris" / "block2.json"
    path.write_text(json.dumps({"schema": 2, "records": [extra]}))
    hidden = path.parent / ".batch.json.blocks" / "0.json"
    hidden.parent.mkdir()
    hidden.write_text(json.dumps({"schema": 2, "records": [make_record([9.0])]}))
    # a replication look's runs (more seeds of the same cell, only where a claim was open) are left out
    looked = root / "runs" / "su2016" / "fig2" / "private.round1" / "iris" / "su2016.dplloyd.json"
    looked.parent.mkdir(parents=True)
    looked.write_text(json.dumps({"schema": 2, "records": [make_record([7.0], seed0=4)]}))
    cells = eq.load_cells(root)
    iris = cells[("su2016", "fig2", "private", "iris", "su2016.dplloyd", 3, 1.0, "")]
    assert [r["seed"] for r in iris["runs"]] == [0, 1, 2, 3]
    assert [r["cost_kmeans"] for r in iris["runs"]] == [1.0, 2.0, 4.0, 5.0]
    assert len(cells) == 2


# --- the harness on results directories ------------------------------------------------------------------

def test_identical_directories_are_accepted_wall_times_aside(eq, tmp_path, capsys):
    rng = np.random.default_rng(3)
    records = base_records(rng)
    after = [dict(r, runs=[dict(run, wall_time_s=run["wall_time_s"] * 3) for run in r["runs"]]) for r in records]
    report, before_dir, after_dir = compare(eq, tmp_path, records, after)
    assert set(statuses(report).values()) == {"identical"} and len(statuses(report)) == 3
    assert report["claims"]["unchanged"] == 3 and not report["claims"]["changed"]
    assert report["accepted"]
    assert eq.main([str(before_dir), str(after_dir)]) == 0
    out = capsys.readouterr().out
    assert "3 identical" in out and "ACCEPTED" in out and "NOT ACCEPTED" not in out


def test_a_flipped_verdict_is_reported_and_fails(eq, tmp_path, capsys):
    records = base_records(np.random.default_rng(4))
    flipped = [CLAIMS[0], (CLAIMS[1][0], "holds"), CLAIMS[2]]
    report, before_dir, after_dir = compare(eq, tmp_path, records, records, after_claims=flipped)
    changed = report["claims"]["changed"]
    assert [(c["claim"], c["before"], c["after"]) for c in changed] == [(CLAIMS[1][0], "does not hold", "holds")]
    assert report["claims"]["unchanged"] == 2 and not report["accepted"]
    assert eq.main([str(before_dir), str(after_dir)]) == 1
    out = capsys.readouterr().out
    assert "EUGkM is best at ε = 1: does not hold -> holds" in out and "NOT ACCEPTED" in out


def test_a_mean_moved_by_5_percent_is_not_equivalent(eq, tmp_path):
    rng = np.random.default_rng(5)
    records = base_records(rng)
    before = [records[0], make_record(rng.normal(50, 0.05, 5), dataset="s1", k=15, epsilon=0.1), records[2]]
    moved = [records[0], make_record(rng.normal(52.5, 0.05, 5), dataset="s1", k=15, epsilon=0.1), records[2]]
    report, *_ = compare(eq, tmp_path, before, moved)
    assert statuses(report)["s1/su2016.dplloyd"] == "not equivalent"
    cell = next(c for c in report["cells"]["compared"] if c["cell"]["dataset"] == "s1")
    cost = next(m for m in cell["metrics"] if m["metric"] == "cost_kmeans")
    assert cost["rel_diff"] == pytest.approx(0.05, abs=0.002) and cost["p"] > 0.05
    assert cost["margin"] == pytest.approx(0.005 * cost["before"]["mean"])
    assert cost["note"].startswith("moved")
    assert {m["metric"]: m["status"] for m in cell["metrics"]}["epsilon_spent"] == "equal"
    assert not report["accepted"]


def test_the_same_distribution_with_other_draws_is_equivalent(eq, tmp_path):
    records = base_records(np.random.default_rng(6))
    mean = 1000.0
    before = records + [make_record(np.random.default_rng(7).normal(mean, 0.001 * mean, 200), dataset="big")]
    after = records + [make_record(np.random.default_rng(8).normal(mean, 0.001 * mean, 200), dataset="big")]
    report, *_ = compare(eq, tmp_path, before, after)
    assert statuses(report)["big/su2016.dplloyd"] == "equivalent"
    cell = next(c for c in report["cells"]["compared"] if c["cell"]["dataset"] == "big")
    assert {m["status"] for m in cell["metrics"]} == {"equivalent", "equal"}
    assert report["accepted"]


def test_two_noisy_runs_are_not_decidable(eq, tmp_path):
    records = base_records(np.random.default_rng(9))
    report, *_ = compare(eq, tmp_path, records + [make_record([10.0, 12.0], dataset="tiny")],
                         records + [make_record([10.5, 11.0], dataset="tiny")])
    assert statuses(report)["tiny/su2016.dplloyd"] == "not decidable"
    cell = next(c for c in report["cells"]["compared"] if c["cell"]["dataset"] == "tiny")
    assert all("too few runs" in m["note"] for m in cell["metrics"] if m["status"] == "not decidable")
    assert not report["accepted"]


def test_cells_on_one_side_only_are_listed(eq, tmp_path, capsys):
    records = base_records(np.random.default_rng(10))
    report, before_dir, after_dir = compare(eq, tmp_path, records + [make_record([1.0, 2.0, 3.0], dataset="gone")],
                                            records + [make_record([1.0, 2.0, 3.0], dataset="new", k=7)])
    assert report["cells"]["only_before"] == ["su2016/fig2/private gone su2016.dplloyd k=3 ε=1.0"]
    assert report["cells"]["only_after"] == ["su2016/fig2/private new su2016.dplloyd k=7 ε=1.0"]
    assert not report["accepted"]
    assert eq.main([str(before_dir), str(after_dir)]) == 1
    assert "only before  su2016/fig2/private gone" in capsys.readouterr().out
    assert eq.main([str(before_dir), str(after_dir), "--common-only"]) == 0   # listed, not gating


def test_paired_by_seed_shows_a_tiny_numerical_change_equivalent(eq, tmp_path):
    rng = np.random.default_rng(11)
    costs = rng.normal(100, 20, 10)                                      # noisy runs, the same draws after
    before = [make_record(costs, dataset="noisy")]
    after = [make_record(costs * (1 + rng.normal(0, 1e-7, 10)), dataset="noisy")]
    welch, *_ = compare(eq, tmp_path / "w", before, after)
    paired, *_ = compare(eq, tmp_path / "p", before, after, paired=True)
    assert statuses(welch)["noisy/su2016.dplloyd"] == "not equivalent"
    assert statuses(paired)["noisy/su2016.dplloyd"] == "equivalent"


def test_a_metric_margin_can_be_overridden(eq):
    before = [(s, v) for s, v in enumerate([100.0, 100.1, 99.9, 100.0, 100.05, 99.95])]
    after = [(s, v * 1.01) for s, v in before]
    assert eq.compare_metric("cost_kmeans", before, after, 0.005, 0.05)["status"] == "not equivalent"
    assert eq.compare_metric("cost_kmeans", before, after, 0.02, 0.05)["status"] == "equivalent"
    assert eq.parse_margins(["cost_kmeans=0.02,nicv=0.01", "info.tree_cost=0.1"]) == {
        "cost_kmeans": 0.02, "nicv": 0.01, "info.tree_cost": 0.1}
    with pytest.raises(ValueError):
        eq.parse_margins(["cost_kmeans"])


def test_claims_are_read_from_the_per_item_checks_while_the_summary_is_not_written(eq, tmp_path):
    root = write_results(tmp_path / "r", [], CLAIMS)
    (root / "checks" / "su2016").mkdir()
    per_item = pd.read_csv(root / "checks" / "summary.csv").drop(columns=["paper", "item"])
    per_item.to_csv(root / "checks" / "su2016" / "fig2.csv", index=False)
    (root / "checks" / "summary.csv").unlink()
    claims = eq.load_claims(root)
    assert list(claims["claim"]) == [c for c, _ in CLAIMS] and set(claims["paper"]) == {"su2016"}
    assert list(claims["result"]) == [r for _, r in CLAIMS] and set(claims["item"]) == {"fig2"}


def test_json_and_markdown_reports_are_written(eq, tmp_path):
    rng = np.random.default_rng(12)
    records = base_records(rng)
    after = [records[0], make_record(rng.normal(52.5, 0.05, 5), dataset="s1", k=15, epsilon=0.1), records[2]]
    _, before_dir, after_dir = compare(eq, tmp_path, records, after)
    out_json, out_md = tmp_path / "report.json", tmp_path / "report.md"
    assert eq.main([str(before_dir), str(after_dir), "--json", str(out_json), "--markdown", str(out_md),
                    "--title", "float32 Lloyd"]) == 1
    report = json.loads(out_json.read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert report["accepted"] is False and report["settings"]["margin"] == 0.005
    md = out_md.read_text()
    assert md.startswith("### float32 Lloyd") and "Not accepted" in md and "| s1" not in md
    assert "su2016/fig2/private s1 su2016.dplloyd k=15 ε=0.1 | not equivalent | cost_kmeans" in md


def test_the_command_runs_and_gates_by_exit_code(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(13)
    records = base_records(rng)
    before = write_results(tmp_path / "before", records, CLAIMS)
    after = write_results(tmp_path / "after", records, [CLAIMS[0], CLAIMS[1], (CLAIMS[2][0], "holds")])
    script = REPO / "benchmarks" / "equivalence.py"
    monkeypatch.setattr(sys, "argv", [str(script), str(before), str(after)])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(script), run_name="__main__")     # as `python benchmarks/equivalence.py ...`
    assert exit_.value.code == 1
    assert "GkM converges: not decidable -> holds" in capsys.readouterr().out


def test_metrics_can_be_restricted_to_the_cost_distribution(eq, tmp_path):
    """A change that nulls or adds a field by design (ε of a not-DP run, a new diagnostic) is judged on
    its costs alone with `metrics`: the cell is decided by them, the other fields are not compared."""
    rng = np.random.default_rng(9)
    costs = rng.normal(50, 0.05, 6)
    before = [make_record(costs, dataset="s1")]
    after = [make_record(costs * (1 + 1e-9), dataset="s1")]
    for run in after[0]["runs"]:
        run["diagnostics"]["epsilon_spent"] = None                 # by design: no ε reported
        run["diagnostics"]["floating_point_delta"] = 1e-8          # a new diagnostic
    full, *_ = compare(eq, tmp_path / "a", before, after, paired=True)
    assert not full["accepted"]
    costs_only, *_ = compare(eq, tmp_path / "b", before, after, paired=True, metrics=("cost_kmeans", "nicv"))
    cell = costs_only["cells"]["compared"][0]
    assert cell["status"] == "equivalent" and {m["metric"] for m in cell["metrics"]} == {"cost_kmeans", "nicv"}
    assert costs_only["accepted"]


def test_cells_not_equivalent_are_split_into_moved_and_not_shown_and_listed_for_a_next_look(eq, tmp_path, capsys):
    rng = np.random.default_rng(14)
    records = base_records(rng)
    moved = make_record(rng.normal(50, 0.05, 5), dataset="s1", k=15, epsilon=0.1)        # +5 %, tight: moved
    noisy = rng.normal(100, 20, 6)                                                      # wide: not shown
    before = [*records[:1], make_record(rng.normal(50, 0.05, 5), dataset="s1", k=15, epsilon=0.1), records[2],
              make_record(noisy, dataset="wide"), make_record([10.0, 12.0], dataset="tiny")]
    moved["runs"] = [dict(r, diagnostics=dict(r["diagnostics"], cost_kmeans=r["diagnostics"]["cost_kmeans"] * 1.05
                                              + rng.normal(0, 0.01)))
                     for r in before[1]["runs"]]
    after = [*records[:1], moved, records[2], make_record(noisy + rng.normal(0, 20, 6), dataset="wide"),
             make_record([10.5, 11.0], dataset="tiny")]
    report, before_dir, after_dir = compare(eq, tmp_path, before, after, paired=True)
    how = {c["cell"]["dataset"]: c.get("how") for c in report["cells"]["compared"]}
    assert statuses(report)["s1/su2016.dplloyd"] == statuses(report)["wide/su2016.dplloyd"] == "not equivalent"
    assert how["s1"] == "moved" and how["wide"] == "not shown" and how["tiny"] is None
    labels = tmp_path / "look.txt"
    assert eq.main([str(before_dir), str(after_dir), "--paired", "--labels-out", str(labels)]) == 1
    assert "2 not equivalent [1 moved, 1 not shown]" in capsys.readouterr().out
    listed = labels.read_text().splitlines()
    assert sorted(label.split()[1] for label in listed) == ["s1", "tiny", "wide"]
    assert set(listed) == {c["label"] for c in report["cells"]["compared"] if c["status"] not in ("identical",
                                                                                               "equivalent")}


def test_paired_seeds_that_took_another_path_are_counted_and_printed(eq, tmp_path, capsys):
    rng = np.random.default_rng(5)
    costs = rng.normal(100, 5, 12)
    after = costs * (1 + rng.normal(0, 1e-9, 12))          # the same path, last bits apart
    after[[2, 7]] = costs[[2, 7]] * np.array([1.08, 0.95])  # two seeds flip a discrete choice
    report, *_ = compare(eq, tmp_path, [make_record(costs, dataset="chaos")], [make_record(after, dataset="chaos")],
                         paired=True)
    (cell,) = [c for c in report["cells"]["compared"] if c["cell"]["dataset"] == "chaos"]
    (m,) = [m for m in cell["metrics"] if m["metric"] == "cost_kmeans"]
    assert m["other_path"] == 2
    assert m["other_path_range"] == pytest.approx([-0.05, 0.08])
    assert 0 < m["same_path_max"] < 1e-8
    assert eq.paths_text(m) == "2 of 12 seeds took another path (-5 % to +8 %), the others agree to " \
                               f"{m['same_path_max']:.1g}"
    assert "2 of 12 seeds took another path" in eq.metric_line(m)
    assert "seeds on another path" in eq.format_markdown(report)
    welch = eq.compare_metric("cost_kmeans", list(enumerate(costs)), list(enumerate(after)), 0.005, 0.05)
    assert "other_path" not in welch and eq.paths_text(welch) == ""


def test_a_metric_not_shown_says_about_how_many_runs_would_show_it(eq):
    """(z s / (m - |d|))^2 from the measured move d and spread s: at that size a look of the same cell shows
    equivalence about half the time, so the figure is one to plan a look with, not a promise."""
    rng = np.random.default_rng(11)
    before = rng.normal(100, 5, 20)
    zs = rng.normal(0, 1, 20)
    zs = (zs - zs.mean()) / zs.std(ddof=1)                              # mean 0, sd 1 exactly
    diffs = 2 * zs + 0.1
    m = eq.compare_metric("cost_kmeans", list(enumerate(before)), list(enumerate(before + diffs)), 0.005, 0.05,
                          paired=True)
    assert m["test"] == "paired" and m["note"].startswith("not shown")
    margin = 0.005 * abs(before.mean())
    want = math.ceil((stats.norm.ppf(0.95) * 2.0 / (margin - 0.1)) ** 2)
    assert m["runs_to_show"] == want
    assert f"≈ {want:,} paired seeds would show it" in eq.metric_line(m)
    at_zero = math.ceil(((stats.norm.ppf(0.95) + stats.norm.ppf(0.75)) * 2.0 / margin) ** 2)
    assert m["runs_to_show_if_no_move"] == at_zero and f"≈ {at_zero:,} if the true move were 0" in eq.metric_line(m)
    # many more pairs with that move and spread: shown in about half of the looks or more, never moved
    shown = 0
    for i in range(40):
        r = np.random.default_rng(100 + i)
        d2 = r.normal(0.1, 2.0, 2 * want)
        b2 = r.normal(100, 5, 2 * want)
        shown += eq.compare_metric("cost_kmeans", list(enumerate(b2)), list(enumerate(b2 + d2)), 0.005,
                                   0.05, paired=True)["status"] == "equivalent"
    assert shown >= 20
    shown = 0
    for i in range(40):                                                 # no move, at_zero pairs: about half
        b2 = np.random.default_rng(200 + i).normal(100, 5, at_zero)
        d2 = np.random.default_rng(300 + i).normal(0, 2.0, at_zero)
        shown += eq.compare_metric("cost_kmeans", list(enumerate(b2)), list(enumerate(b2 + d2)), 0.005, 0.05,
                                   paired=True)["status"] == "equivalent"
    assert 12 <= shown <= 28
    # a mean move at or beyond the margin: no number of runs shows it
    far = eq.compare_metric("cost_kmeans", list(enumerate(before)), list(enumerate(before + 10 * zs + 0.55)),
                            0.005, 0.05, paired=True)                  # mean move 0.55 > margin ~0.5, wide
    assert abs(far["diff"]) >= far["margin"] and far["note"].startswith("not shown")
    assert far["runs_to_show"] is None and "no number of runs" in eq.metric_line(far)
    welch = eq.compare_metric("cost_kmeans", list(enumerate(before)), list(enumerate(rng.permutation(before) + 0.1)),
                              0.005, 0.05)                              # Welch: both sides' spreads count
    sd = before.std(ddof=1)
    assert welch["runs_to_show"] == math.ceil((stats.norm.ppf(0.95) * math.sqrt(2) * sd / (margin - 0.1)) ** 2)
    assert "runs a side would show it" in eq.metric_line(welch)
    assert "runs_to_show" not in eq.compare_metric("cost_kmeans", list(enumerate(before)),
                                                   list(enumerate(before * 1.0001)), 0.005, 0.05,
                                                   paired=True)


def test_a_cell_whose_records_ran_on_other_data_is_not_decidable(eq, tmp_path):
    costs = np.linspace(90, 110, 6)
    before, after = make_record(costs, dataset="same"), make_record(costs, dataset="same")
    before["dataset_sha256"], after["dataset_sha256"] = "a" * 64, "b" * 64
    report, *_ = compare(eq, tmp_path, [before], [after], paired=True)
    (cell,) = [c for c in report["cells"]["compared"] if c["cell"]["dataset"] == "same"]
    assert cell["status"] == "not decidable" and "the data differ" in cell["note"]
    after["dataset_sha256"] = "a" * 64                          # the same data: identical runs
    report, *_ = compare(eq, tmp_path / "again", [before], [after], paired=True)
    assert statuses(report)["same/su2016.dplloyd"] == "identical"
