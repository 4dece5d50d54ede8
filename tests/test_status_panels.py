"""A panel or line without results says why, by the record's status: "data unavailable" only when
the data could not be had, "refused" when the algorithm refused the cell (`api.Refused`: EUGkM's grid
above its memory guard, the authors' sampler above `authors_max_n`), never one for the other."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpclust.api import Refused
from dpclust.pipeline import plotting
from dpclust.pipeline.itemkit import availability
from dpclust.pipeline.items.su2016 import common as su_common
from dpclust.su2016.eugkm import grid_for

NAMES = {"algorithms": {"su2016.eugkm": "EUGkM", "su2016.dplloyd": "DPLloyd", "su2016.lloyd": "Baseline"},
         "datasets": {"s1": "S1", "adult_num": "Adult-num"}}


def eugkm_refusal() -> str:
    """The reason EUGkM itself gives for a grid above its guard (not a made-up string)."""
    with pytest.raises(Refused) as exc:
        grid_for(10 ** 6, 1.0, 10, {"theta": 0.01, "max_grid_cells": 1000, "cells_rounding": "ceil"}, (0.0, 1.0))
    return str(exc.value)


def record(dataset, algorithm, eps, nicvs=(), status="ok", reason="", k=3, group="g"):
    return {"group": group, "dataset": dataset, "algorithm": algorithm, "k": k, "epsilon": eps, "status": status,
            "reason": reason, "d": 2, "n": 100,
            "runs": [{"seed": i, "nicv": v, "wall_time_s": 0.01, "cluster_sizes": [60, 40], "info": {}}
                     for i, v in enumerate(nicvs)]}


def texts(fig) -> str:
    return " | ".join([t.get_text() for ax in fig.axes for t in ax.texts] + [ax.get_title() for ax in fig.axes])


@pytest.fixture
def drawn(monkeypatch):
    saved = []
    monkeypatch.setattr(su_common, "save_figure", lambda fig, stem: saved.append(fig))
    return saved


def test_a_refused_panel_says_refused_with_its_reason_not_data_unavailable(drawn):
    reason = eugkm_refusal()
    recs = [record("s1", "su2016.eugkm", e, status="refused", reason=reason) for e in (0.1, 1.0)]
    recs.append(record("adult_num", "su2016.eugkm", 0.1, status="data_unavailable",
                       reason="https://example.org unreachable (gaierror)"))
    table = su_common.aggregate_nicv(recs, {"table": {"labels": {}}})
    assert availability(table, "s1") == ("refused", reason)
    assert availability(table, "adult_num")[0] == "data_unavailable"
    su_common.nicv_panels(table, {"options": {"panels": ["s1", "adult_num"]}, "names": NAMES}, "unused",
                          ["su2016.eugkm"])
    s1, adult = drawn[-1].axes[:2]
    s1_text = " ".join(t.get_text() for t in s1.texts)
    assert s1_text.startswith("refused") and "EUGkM grid" in s1_text and "data unavailable" not in s1_text
    assert "could not be fetched" not in s1_text
    assert [t.get_text() for t in adult.texts] == ["data unavailable\n(offline, not mirrored)"]


def test_a_refused_line_on_a_drawn_panel_is_named(drawn):
    recs = [record("s1", "su2016.lloyd", None, [0.01, 0.02]), record("s1", "su2016.dplloyd", 0.1, [0.05, 0.06]),
            record("s1", "su2016.dplloyd", 1.0, [0.02, 0.03]),
            record("s1", "su2016.eugkm", 0.1, status="refused", reason=eugkm_refusal())]
    table = su_common.aggregate_nicv(recs, {"table": {"labels": {}}})
    su_common.nicv_panels(table, {"options": {"panels": ["s1"]}, "names": NAMES}, "unused",
                          ["su2016.dplloyd", "su2016.eugkm"])
    assert "refused: EUGkM" in texts(drawn[-1])
    # without a refusal the panel carries no such note
    table = su_common.aggregate_nicv(recs[:3], {"table": {"labels": {}}})
    su_common.nicv_panels(table, {"options": {"panels": ["s1"]}, "names": NAMES}, "unused", ["su2016.dplloyd"])
    assert "refused" not in texts(drawn[-1])


def test_a_refused_heatmap_cell_is_marked_and_a_wholly_refused_panel_says_so(drawn):
    reason = eugkm_refusal()
    recs = [record(f"su_synth_k{k}_d{d}", "su2016.lloyd", None, [0.01], k=k) for k in (2, 3) for d in (2, 3)]
    recs += [record(f"su_synth_k{k}_d{d}", "su2016.dplloyd", 1.0, [0.02], k=k) for k in (2, 3) for d in (2, 3)]
    recs += [record(f"su_synth_k{k}_d{d}", "su2016.eugkm", 1.0, [0.03], k=k) for k, d in ((2, 2), (2, 3), (3, 2))]
    recs.append(record("su_synth_k3_d3", "su2016.eugkm", 1.0, status="refused", reason=reason, k=3))
    table = su_common.aggregate_nicv(recs, {"table": {"labels": {}}})
    su_common.heatmaps(table, {"figure": {"panels": ["su2016.eugkm", "su2016.dplloyd"]}, "names": NAMES}, "unused")
    eugkm, dplloyd = [ax for ax in drawn[-1].axes if ax.get_xlabel() == "d"]
    assert [(t.get_text(), t.get_position()) for t in eugkm.texts] == [("×", (3, 3))]
    assert eugkm.get_title().endswith("(×: refused)") and "refused" not in dplloyd.get_title()
    only_refused = [r for r in recs if r["algorithm"] != "su2016.eugkm" or r["status"] == "refused"]
    table = su_common.aggregate_nicv(only_refused, {"table": {"labels": {}}})
    su_common.heatmaps(table, {"figure": {"panels": ["su2016.eugkm", "su2016.dplloyd"]}, "names": NAMES}, "unused")
    first = drawn[-1].axes[0]
    assert [t.get_text() for t in first.texts][0].startswith("refused\n(EUGkM grid")


def test_status_helpers():
    rows = pd.DataFrame({"dataset": ["s1", "s1", "skin"], "algorithm": ["a", "b", "a"],
                         "status": ["ok", "refused", "data_unavailable"], "reason": ["", "too big", "offline"]})
    assert plotting.panel_status(rows) == ("refused", "too big")
    assert plotting.panel_status(rows[rows["status"] == "ok"]) == ("no_runs", "")
    item = {"names": {"algorithms": {"b": "Bee"}, "datasets": {"skin": "Skin"}}}
    assert plotting.status_note(rows, item) == "refused: Bee on s1; data unavailable: Skin"
    assert plotting.status_note(rows[rows["status"] == "ok"], item) == ""


@pytest.mark.parametrize("status, reason, expected", [
    ("data_unavailable", "https://x unreachable (gaierror)", "data unavailable\n(offline, not mirrored)"),
    ("refused", "the authors' sampler on N = 245,057 records exceeds authors_max_n = 150,000",
     "refused\n(the authors'"),
    ("no_runs", "", "no runs"),
    ("ok", "", "no runs"),
    ("absent", "not run in this preset", "not run in this preset"),
])
def test_mark_unavailable_text_follows_the_status(status, reason, expected):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    plotting.mark_unavailable(ax, "t", reason, status)
    assert ax.texts[0].get_text().startswith(expected)
    plt.close(fig)


def test_lushen_status_rows_keep_a_refused_algorithm_apart_from_missing_data():
    from dpclust.pipeline.items.lushen2020.common import status_rows

    df = pd.DataFrame({"dataset": ["s1", "s1", "skin", "skin"], "algorithm": ["a", "b", "a", "b"],
                       "status": ["ok", "refused", "data_unavailable", "data_unavailable"],
                       "reason": ["", "too big", "offline", "offline"], "eps_step": np.nan})
    assert status_rows(df) == [{"dataset": "s1", "algorithm": "b", "status": "refused", "reason": "too big"},
                               {"dataset": "skin", "status": "data_unavailable", "reason": "offline"}]


def test_a_claim_that_holds_beside_refused_cells_is_not_evaluable(tmp_path, monkeypatch):
    """A paper's claim is about every cell of its protocol; the leaderboard ranks refused cells itself."""
    from dpclust.pipeline import steps as pipeline
    from dpclust.pipeline.aggregate import Check

    table = pd.DataFrame({"dataset": ["s1", "s1", "s1"],
                          "algorithm": ["su2016.dplloyd", "su2016.eugkm", "su2016.eugkm"],
                          "status": ["ok", "ok", "refused"], "reason": ["", "", eugkm_refusal()]})
    table.to_csv(tmp_path / "t.csv", index=False)

    def claims(_table, _spec):
        return [Check("holds on the rest", True, "3 cells", rule="r"),
                Check("fails", False, "x", why="genuine", rule="r"),
                Check("undecided", None, "y", undecided=True, rule="r")]

    monkeypatch.setattr(pipeline, "step_function", lambda spec, step, default=None: claims)
    spec = {"paper": "p", "item": "i", "names": NAMES}
    frame = pipeline.check_item(spec, tmp_path / "t.csv", tmp_path / "checks")
    assert list(frame["result"]) == ["not evaluable", "does not hold", "not decidable"]
    assert frame["detail"].iloc[0] == ("not evaluable: cells refused by their algorithm (EUGkM on S1); "
                                       "on the other cells: 3 cells")
    claims.handles_refused = True
    frame = pipeline.check_item({"paper": "p", "item": "i"}, tmp_path / "t.csv", tmp_path / "checks")
    assert list(frame["result"]) == ["holds", "does not hold", "not decidable"]
    ok = table[table["status"] == "ok"]
    ok.to_csv(tmp_path / "t.csv", index=False)
    del claims.handles_refused
    assert list(pipeline.check_item({"paper": "p", "item": "i"}, tmp_path / "t.csv", tmp_path / "checks")["result"]) \
        == ["holds", "does not hold", "not decidable"]


def test_a_replicated_items_checks_say_they_are_one_look(tmp_path, monkeypatch):
    """An item with replication looks decides its claims on each look's runs: its per-item pages say so
    and send the reader to the final verdicts (checks/summary.csv, the results page)."""
    from dpclust.pipeline import steps as pipeline
    from dpclust.pipeline.aggregate import Check

    pd.DataFrame({"dataset": ["s1"], "algorithm": ["su2016.dplloyd"], "status": ["ok"], "reason": [""]}).to_csv(
        tmp_path / "t.csv", index=False)
    def claims(_table, _spec):
        return [Check("undecided", None, "y", undecided=True, rule="r")]

    claims.handles_refused = True
    monkeypatch.setattr(pipeline, "step_function", lambda spec, step, default=None: claims)
    pipeline.check_item({"paper": "p", "item": "i", "alpha": 0.025}, tmp_path / "t.csv", tmp_path / "look")
    assert "one replication look (one-sided α = 0.025 per look)" in (tmp_path / "look.md").read_text()
    assert "checks/summary.csv" in (tmp_path / "look.html").read_text()
    pipeline.check_item({"paper": "p", "item": "i"}, tmp_path / "t.csv", tmp_path / "plain")
    assert "replication look" not in (tmp_path / "plain.md").read_text()


def test_the_leaderboard_ranks_refused_cells_itself():
    from dpclust.pipeline.items.leaderboard.table import checks

    assert checks.handles_refused is True
