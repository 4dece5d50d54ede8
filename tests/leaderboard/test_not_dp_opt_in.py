"""The leaderboard ranks what it can rank (issue #42): by default it plans no run of a method that is not
DP as published (nor of one without a declared guarantee); the opt-in documented in
`--config 'opt_in=[not_dp]'` (config/papers/leaderboard.yaml) brings exactly those methods back without
touching any other run; their rows are labelled, never ranked,
and the notes name the methods left out and how to add them back."""
from __future__ import annotations

import math

import pytest

from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.items.leaderboard import best, common, figure, table
from dpclust.pipeline.planning import plan

from .helpers import (
    BALCAN,
    DPLLOYD,
    KMEANSPP,
    NOT_DP_KIND,
    NOT_DP_METHODS,
    NOTDP,
    _opt_in_plan,
    _plan,
    board_records,
    record,
    spec,
)

ALG1 = {"lushen2020.posterior", "lushen2020.prior"}


def board_batches(the_plan) -> dict[str, object]:
    return {b.path: b for b in the_plan.batches if b.paper == "leaderboard"}


def kind(batch) -> str | None:
    return (batch.spec["spec"].get("guarantee") or {}).get("kind")


@pytest.mark.parametrize("preset", ["full", "quick", "test"])
def test_the_default_board_plans_no_run_without_a_dp_guarantee(preset):
    batches = board_batches(_plan(preset)).values()
    assert batches
    assert not {b.algorithm for b in batches} & NOT_DP_METHODS
    assert {kind(b) for b in batches} <= {*common.DP_KINDS, common.NON_PRIVATE}
    private = [b for b in batches if b.spec["spec"]["private"]]
    assert private and all(kind(b) in common.DP_KINDS for b in private)


@pytest.mark.parametrize("preset", ["full", "quick", "test"])
def test_the_opt_in_adds_exactly_the_not_dp_runs_and_changes_no_other(preset):
    default, opted = board_batches(_plan(preset)), board_batches(_opt_in_plan(preset))
    assert set(default) <= set(opted)
    assert all(opted[path].spec_json == batch.spec_json for path, batch in default.items())  # nothing else re-runs
    added = [opted[path] for path in set(opted) - set(default)]
    expected = ALG1 | {"balcan2017.balcan_authors"} if preset == "test" else NOT_DP_METHODS  # test: lists its own
    assert {b.algorithm for b in added} == expected
    assert {kind(b) for b in added} == {NOT_DP_KIND}
    groups = {b.algorithm: b.group for b in added}
    assert all(groups[a] == "kmeans_pure" for a in ALG1)
    assert all(g == "kmeans_not_dp" for a, g in groups.items() if a not in ALG1)
    # the rest of the plan is the same: only the board's opt-in runs come and go
    others = lambda p: {b.path: b.spec_json for b in p.batches if b.paper != "leaderboard"}  # noqa: E731
    assert others(_plan(preset)) == others(_opt_in_plan(preset))


def test_the_note_names_every_not_dp_candidate():
    """`not_dp_left_out` (what the notes name) is exactly the board's candidates that are not DP."""
    opted = {b.algorithm for b in board_batches(_opt_in_plan("full")).values() if kind(b) == NOT_DP_KIND}
    assert opted == NOT_DP_METHODS
    for item in ("table", "figure", "best"):
        listed = spec(item, "render")["figure"]["not_dp_left_out"]
        assert len(listed) == len(set(listed)) and set(listed) == NOT_DP_METHODS, item


def test_the_notes_say_what_was_left_out_and_how_to_add_it_back(tmp_path, monkeypatch):
    board = table.aggregate(board_records(), spec("table", "aggregate"), None)
    note = common.left_out_note(spec("table", "render"))
    assert note.startswith("Not run by default (not DP as published")
    assert "config/papers/leaderboard.yaml" in note and "\n" not in note
    for shown in ("Posterior", "Prior", "BLUM", "DWORK", "SU", "PrivGene", "Balcan et al., authors' calibration",
                  "Nguyen et al. (Alg. 1), authors' sampler"):
        assert shown in note, shown
    assert common.left_out_note(spec("table", "render", opted_in=True)) == ""   # they ran: nothing left out
    table.render(board, spec("table", "render"), tmp_path / "table")
    assert note in (tmp_path / "table.md").read_text()
    assert "Not run by default" in (tmp_path / "table.html").read_text()   # (escaped there)
    table.render(board, spec("table", "render", opted_in=True), tmp_path / "opted")
    assert "Not run by default" not in (tmp_path / "opted.md").read_text()
    b = best.aggregate(board_records(), spec("best", "aggregate"), None)
    best.render(b, spec("best", "render"), tmp_path / "best")
    assert note in (tmp_path / "best.md").read_text()
    captured = {}
    monkeypatch.setattr(figure, "save_figure", lambda fig, stem: captured.setdefault("fig", fig))
    figure.render(board, spec("figure", "render"), tmp_path / "figure")
    title = captured["fig"]._suptitle.get_text()
    assert "Not run by default" in title and "BLUM" in title and "config/papers/leaderboard.yaml" in title


def test_a_not_dp_row_is_never_ranked_nor_the_best(tmp_path):
    """On a small synthetic board a not-DP method has the lowest cost of all: it keeps its labelled row
    (no rank, no ε spent), the DP methods are ranked among themselves, the best is a DP method, and
    the not-DP one is only named as an unranked better mean; a cell with no DP method has no best."""
    recs = [record("s1", KMEANSPP, 5, None, "reference_kmeans", kmeans=[10, 11], guarantee="nonprivate"),
            record("s1", DPLLOYD, 5, 1.0, "kmeans", kmeans=[20, 21, 22], guarantee="eps"),
            record("s1", BALCAN, 5, 1.0, "kmeans", kmeans=[30, 31, 32], guarantee="approx"),
            record("s1", NOTDP, 5, 1.0, "kmeans", kmeans=[10, 10, 10], guarantee="notdp"),
            record("s1", NOTDP, 5, 3.0, "kmeans", kmeans=[10, 10, 10], guarantee="notdp")]
    for opted_in in (False, True):
        t = table.aggregate(recs, spec("table", "aggregate", opted_in=opted_in), None)
        rows = t[t["epsilon"] == 1.0].set_index("algorithm")
        assert math.isnan(rows.loc[NOTDP, "rank"]) and rows.loc[NOTDP, "guarantee"] == NOT_DP_KIND
        assert math.isnan(rows.loc[NOTDP, "eps_spent_mean"])
        assert rows.loc[DPLLOYD, "rank"] == 1 and rows.loc[BALCAN, "rank"] == 2
        assert (rows["dp_methods"] == 2).all()
        assert t.loc[t["epsilon"] == 3.0, "rank"].isna().all()
        b = best.aggregate(recs, spec("best", "aggregate", opted_in=opted_in), None).set_index("epsilon")
        assert b.loc[1.0, "best"] == DPLLOYD and b.loc[1.0, "runner_up"] == BALCAN
        assert b.loc[1.0, "unranked_better"] == NOTDP and b.loc[1.0, "unranked_better_guarantee"] == NOT_DP_KIND
        assert b.loc[3.0, "decided"] == "no DP method" and not isinstance(b.loc[3.0, "best"], str)
        [check] = table.checks(t, spec("table", "checks"))
        assert check.holds is True and "6 runs of 1 methods without a DP guarantee not counted" in check.detail


def test_an_unknown_opt_in_is_one_clear_error():
    from dpclust.api import DPClustError

    with pytest.raises(DPClustError, match=r"opt_in names \['not_dpp'\].*known: \['not_dp'\]"):
        plan(load_config(overrides={"preset": "test", "opt_in": ["not_dpp"]}))
