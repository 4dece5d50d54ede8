"""Aggregation of the leaderboard on synthetic records: normalisation by the best non-private cost,
intervals, ranks among DP methods only, unknown guarantees never DP, the best-method summary and
the spent-ε check."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust.api import DPClustError
from dpclust.pipeline.claims import mean_ci
from dpclust.pipeline.items.leaderboard import best, common, table

from .helpers import BALCAN, DPLLOYD, HST, KMEANSPP, KMEDIANPP, NOTDP, PRIOR, board_records, record, spec


@pytest.fixture(scope="module")
def agg_spec():
    return spec("table", "aggregate", preset="test")


@pytest.fixture(scope="module")
def board(agg_spec):
    return table.aggregate(board_records(), agg_spec, None)


def cell(frame, algorithm, eps, dataset="s1", objective="kmeans"):
    sel = frame[(frame["algorithm"] == algorithm) & (frame["dataset"] == dataset) & (frame["objective"] == objective)]
    sel = sel[sel["epsilon"].isna()] if eps is None else sel[sel["epsilon"] == eps]
    assert len(sel) == 1, sel
    return sel.iloc[0]


def test_normalised_by_the_best_nonprivate_run_on_each_objective(board):
    dpl = cell(board, DPLLOYD, 1.0)
    assert dpl["best_nonprivate"] == 10.0                      # min over both references' k-means costs
    assert dpl["mean"] == pytest.approx(2.2)                   # (20, 22, 24) / 10
    ci = mean_ci(2.2, 0.2, 3)
    assert (dpl["ci_low"], dpl["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert dpl["sd"] == pytest.approx(0.2) and dpl["n"] == 3
    hst = cell(board, HST, 1.0, objective="kmedian")
    assert hst["best_nonprivate"] == 29.0 and hst["mean"] == pytest.approx(2.0)   # k-median cost / 29
    ref = cell(board, KMEANSPP, None)
    assert ref["mean"] == pytest.approx(1.1) and ref["guarantee"] == "non-private" and math.isnan(ref["rank"])
    assert cell(board, KMEDIANPP, None, objective="kmedian")["mean"] == pytest.approx(32 / 29)


def test_a_kmeans_solution_can_be_the_best_kmedian_reference(agg_spec):
    recs = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10], kmedian=[20], guarantee="nonprivate"),
            record("s1", KMEDIANPP, 5, None, "reference_kmedian", kmeans=[12], kmedian=[25], guarantee="nonprivate"),
            record("s1", HST, 5, 1.0, "kmedian", kmedian=[40, 40], guarantee="eps")]
    t = table.aggregate(recs, agg_spec, None)
    assert cell(t, HST, 1.0, objective="kmedian")["best_nonprivate"] == 20.0


def test_ranks_only_methods_with_a_dp_guarantee(board):
    assert cell(board, BALCAN, 1.0)["rank"] == 1 and cell(board, DPLLOYD, 1.0)["rank"] == 2
    assert cell(board, BALCAN, 1.0)["dp_methods"] == 2
    notdp = cell(board, NOTDP, 1.0)
    assert notdp["mean"] == pytest.approx(1.1) and math.isnan(notdp["rank"])   # best by mean, never ranked
    assert notdp["guarantee"] == "not DP as published" and notdp["guarantee_note"] == "swapped split"
    assert np.isnan([notdp["eps_spent_mean"], notdp["eps_spent_max"], notdp["delta_spent_max"]]).all()  # no ε
    assert np.isnan(cell(board, KMEANSPP, None)["eps_spent_mean"])           # non-private: no ε either
    unknown = cell(board, PRIOR, 1.0)
    assert unknown["guarantee"] == "unknown" and math.isnan(unknown["rank"])    # undeclared: never DP
    assert unknown["eps_spent_mean"] == pytest.approx(0.2) and unknown["delta"] == 0.0
    assert cell(board, HST, 1.0, objective="kmedian")["rank"] == 1               # ranked within its objective


def test_equal_means_share_a_rank(agg_spec):
    recs = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10], guarantee="nonprivate"),
            record("s1", DPLLOYD, 5, 1.0, "kmeans", kmeans=[20, 20], guarantee="eps"),
            record("s1", BALCAN, 5, 1.0, "kmeans", kmeans=[20, 20], guarantee="approx"),
            record("s1", "su2016.eugkm", 5, 1.0, "kmeans", kmeans=[30, 30], guarantee="eps")]
    t = table.aggregate(recs, agg_spec, None)
    assert sorted(t["rank"].dropna()) == [1, 1, 3]


def test_unavailable_and_unnormalisable_cells_say_why(board):
    gow = board[board["dataset"] == "gowalla"]
    assert set(gow["status"]) == {"data_unavailable"} and gow["reason"].str.contains("not mirrored").all()
    assert gow["rank"].isna().all()
    iris = cell(board, DPLLOYD, 1.0, dataset="iris")
    assert iris["status"] == "no_reference" and math.isnan(iris["mean"]) and math.isnan(iris["rank"])
    assert iris["cost_mean"] == 5.5


def test_a_refused_cell_keeps_its_row_and_reason_and_is_never_ranked(agg_spec, tmp_path):
    """A cell whose algorithm refused the run (`dpclust.api.Refused`: status `refused`, no runs) is one
    row with that status and the reason, unranked; the table's note lists it."""
    refused = dict(record("s1", "su2016.eugkm", 5, 1.0, "kmeans", guarantee="eps", status="refused"),
                   reason="EUGkM grid of 6^9 = 10,077,696 cells exceeds max_grid_cells = 8,388,608")
    recs = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10], guarantee="nonprivate"),
            record("s1", DPLLOYD, 5, 1.0, "kmeans", kmeans=[20, 30], guarantee="eps"), refused]
    t = table.aggregate(recs, agg_spec, None)
    row = cell(t, "su2016.eugkm", 1.0)
    assert row["status"] == "refused" and "max_grid_cells" in row["reason"] and math.isnan(row["rank"])
    assert row["n"] == 0 and cell(t, DPLLOYD, 1.0)["rank"] == 1 and cell(t, DPLLOYD, 1.0)["dp_methods"] == 1
    table.render(t, agg_spec, str(tmp_path / "board"))
    md = (tmp_path / "board.md").read_text()
    assert "Refused (the algorithm's documented limit" in md and "| refused |" in md
    assert "su2016.eugkm on s1 (k = 5, ε = 1)." in md              # (this test spec has no display names)


def test_the_note_names_each_refused_algorithm_and_dataset_once_with_its_k_and_eps(agg_spec, tmp_path):
    """Eight refused cells of one algorithm on one dataset are one entry of the note, not eight."""
    reason = "the authors' sampler on N = 245,057 records exceeds authors_max_n = 150,000"
    recs = [record("s1", KMEANSPP, k, None, "reference_kmeans", kmeans=[10], guarantee="nonprivate") for k in (5, 10)]
    recs += [dict(record("s1", "su2016.eugkm", k, eps, "kmeans", guarantee="eps", status="refused"), reason=reason)
             for k in (5, 10) for eps in (0.1, 0.3, 1.0, 3.0)]
    t = table.aggregate(recs, agg_spec, None)
    table.render(t, agg_spec, str(tmp_path / "board"))
    md = (tmp_path / "board.md").read_text()
    assert "su2016.eugkm on s1 (k ∈ {5, 10}, ε ∈ {0.1, 0.3, 1, 3})." in md
    assert md.count("su2016.eugkm on s1 (") == 1


def test_seed_blocks_of_one_cell_are_pooled(agg_spec):
    recs = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10], guarantee="nonprivate"),
            record("s1", DPLLOYD, 5, 1.0, "kmeans", kmeans=[20, 30], guarantee="eps"),
            record("s1", DPLLOYD, 5, 1.0, "kmeans", kmeans=[40], guarantee="eps")]
    t = table.aggregate(recs, agg_spec, None)
    assert cell(t, DPLLOYD, 1.0)["n"] == 3 and cell(t, DPLLOYD, 1.0)["mean"] == pytest.approx(3.0)


def test_non_empty_clusters_are_counted_and_named_where_the_best_is_decided(agg_spec):
    """A collapsed solution (every point in one cluster) shows in the table and in the sentence."""
    recs = [record("s1", KMEANSPP, 3, None, "reference_kmeans", kmeans=[10], guarantee="nonprivate",
                   sizes=[[5, 5, 5]]),
            record("s1", HST, 3, 1.0, "kmeans", kmeans=[20, 20], guarantee="eps", sizes=[[15, 0, 0], [0, 15, 0]]),
            record("s1", DPLLOYD, 3, 1.0, "kmeans", kmeans=[30, 30], guarantee="eps", sizes=[[5, 10, 0], [5, 5, 5]]),
            record("s1", BALCAN, 3, 1.0, "kmeans", kmeans=[40, 40], guarantee="eps")]   # no sizes recorded
    t = table.aggregate(recs, agg_spec, None)
    assert cell(t, HST, 1.0)["nonempty_mean"] == 1.0 and cell(t, DPLLOYD, 1.0)["nonempty_mean"] == 2.5
    assert cell(t, KMEANSPP, None)["nonempty_mean"] == 3.0 and math.isnan(cell(t, BALCAN, 1.0)["nonempty_mean"])
    assert "non-empty clusters (mean)" in common.display_frame(t, agg_spec).columns
    b = best.aggregate(recs, agg_spec, None).iloc[0]
    assert (b["best_nonempty"], b["runner_up_nonempty"]) == (1.0, 2.5)
    text = best.how_decided(b, spec("best", "render"))
    assert "(1 of 3 clusters non-empty)" in text and "(2.5 of 3 clusters non-empty)" in text


def test_a_group_without_an_objective_is_a_clear_error(agg_spec):
    with pytest.raises(DPClustError, match="run group 'elsewhere' has no objective"):
        table.aggregate([record("s1", DPLLOYD, 5, 1.0, "elsewhere", kmeans=[1.0])], agg_spec, None)


def test_every_run_group_of_the_board_has_an_objective():
    for preset in ("full", "quick", "test"):
        for item in ("table", "figure", "best"):
            objectives = common.objectives_of(spec(item, "aggregate", preset))
            groups = set(spec(item, "render", preset)["runs"])
            assert groups and groups <= set(objectives), (preset, item, groups - set(objectives))


def unraced(item: dict) -> dict:
    """The spec without `racing`: cells decided by the 95 % intervals of the runs given."""
    return {k: v for k, v in item.items() if k != "racing"}


def test_best_is_decided_by_the_intervals(board, agg_spec):
    b = best.aggregate(board_records(), unraced(agg_spec), None)
    one = b[(b["dataset"] == "s1") & (b["objective"] == "kmeans") & (b["epsilon"] == 1.0)].iloc[0]
    assert one["best"] == BALCAN and one["runner_up"] == DPLLOYD and one["decided"] == "separated"
    assert one["best_ci_high"] < one["runner_up_ci_low"] and one["dp_methods"] == 2
    assert one["unranked_better"] == NOTDP and one["unranked_better_guarantee"] == "not DP as published"
    half = b[(b["dataset"] == "s1") & (b["epsilon"] == 0.5)].iloc[0]
    assert half["best"] == BALCAN and half["decided"] == "overlapping"   # 2.6 vs 3.0 ± 2.5
    med = b[(b["objective"] == "kmedian")].iloc[0]
    assert med["best"] == HST and med["decided"] == "only DP method"
    nodp = b[(b["dataset"] == "s1") & (b["epsilon"] == 2.0)].iloc[0]
    assert nodp["decided"] == "no DP method" and not isinstance(nodp["best"], str)
    assert nodp["unranked_better"] == PRIOR and nodp["unranked_better_guarantee"] == "unknown"
    gow = b[b["dataset"] == "gowalla"].iloc[0]
    assert gow["status"] == "data_unavailable" and "not mirrored" in gow["reason"]
    text = best.how_decided(one, spec("best", "render"))
    assert "lies below runner-up DPLloyd" in text and "not ranked" in text and "race" not in text
    # raced (the test preset: 2 runs, then 4): 3 runs of each cannot separate 1.5 from 2.2 ± 0.2 at the
    # cap's level, so the race says overlapping where the unraced 95 % intervals said separated
    raced = best.aggregate(board_records(), agg_spec, None)
    r = raced[(raced["dataset"] == "s1") & (raced["objective"] == "kmeans") & (raced["epsilon"] == 1.0)].iloc[0]
    assert r["decided"] == "overlapping" and r["stopped"] == "cap reached at look 1"
    assert (r["best_runs"], r["runner_up_runs"]) == (3, 3) and r["runner_up_gap_low"] < 0 < r["runner_up_gap_high"]
    assert "race: cap reached at look 1 (3 runs of the best, 3 of the runner-up" in best.how_decided(r, agg_spec)


def test_spent_check_holds_fails_and_ignores_methods_without_a_dp_guarantee(agg_spec):
    item = spec("table", "checks", preset="test")
    good = table.aggregate(board_records(), agg_spec, None)
    [check] = table.checks(good, item)
    assert check.holds is True and "16 runs in 6 cells of 3 DP methods" in check.detail
    assert "not counted" in check.detail                       # Posterior and Prior are not DP-ranked
    over = board_records() + [record("iris", BALCAN, 3, 1.0, "kmeans", kmeans=[7], guarantee="approx", spent=1.5)]
    [check] = table.checks(table.aggregate(over, agg_spec, None), item)
    assert check.holds is False and "balcan2017.balcan on iris (k=3, ε=1) spent ε 1.5" in check.detail
    delta = board_records() + [record("iris", BALCAN, 3, 1.0, "kmeans", kmeans=[7], guarantee="approx",
                                      delta=1e-6, delta_spent=2e-6)]
    assert table.checks(table.aggregate(delta, agg_spec, None), item)[0].holds is False
    notdp = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10], guarantee="nonprivate"),
             record("s1", NOTDP, 5, 1.0, "kmeans", kmeans=[20], guarantee="notdp", spent=5.0)]
    [check] = table.checks(table.aggregate(notdp, agg_spec, None), item)
    assert check.holds is None and "no run of a method with a declared DP guarantee" in check.detail


def test_the_table_round_trips_through_csv(board, tmp_path):
    """Steps read the table back from CSV: ranks, NaN ε of the references and intervals survive."""
    from dpclust.pipeline.steps import read_table

    board.to_csv(tmp_path / "t.csv", index=False)
    back = read_table(tmp_path / "t.csv")
    assert list(back.columns) == common.COLUMNS
    assert back["epsilon"].isna().sum() == board["epsilon"].isna().sum()
    assert np.allclose(back["rank"].fillna(-1), board["rank"].fillna(-1))
    b = best.aggregate(board_records(), unraced(spec("best", "aggregate", preset="test")), None)
    assert set(b["decided"].dropna()) >= {"separated", "overlapping", "only DP method", "no DP method"}
    raced = best.aggregate(board_records(), spec("best", "aggregate", preset="test"), None)
    raced.to_csv(tmp_path / "b.csv", index=False)
    back = read_table(tmp_path / "b.csv")      # the render step reads the raced columns back from CSV
    assert list(back.columns) == best.COLUMNS
    texts = [best.how_decided(r, spec("best", "render", preset="test")) for r in back.itertuples(index=False)]
    assert sum("race: " in t for t in texts) == int(back["stopped"].notna().sum()) > 0
