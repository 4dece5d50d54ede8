"""dpclust.pipeline.cells: the one cell summary the items' tables are built on."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust.pipeline import cells
from dpclust.pipeline.claims import mean_ci


def _rec(alg, eps, costs, *, dataset="s1", k=3, group="g", kind="ε-DP", sizes=None, info=None, status="ok"):
    rec = {"dataset": dataset, "algorithm": alg, "k": k, "epsilon": eps, "group": group, "status": status,
           "reason": "" if status == "ok" else "offline"}
    if kind:
        rec["guarantee"] = {"kind": kind}
    rec["runs"] = [] if status != "ok" else [
        {"seed": i, "cost_kmeans": c, "epsilon_spent": eps, "cluster_sizes": None if sizes is None else sizes[i],
         "info": info or {}} for i, c in enumerate(costs)]
    return rec


def test_a_cell_has_the_schema_its_statistics_and_its_interval():
    t = cells.cell_summary([_rec("a", 1.0, [1.0, 2.0, 3.0], sizes=[[5, 0, 1], [2, 2, 2], [6, 0, 0]])], "cost_kmeans")
    assert list(t.columns) == cells.CELL_COLUMNS and len(t) == 1
    row = t.iloc[0]
    assert (row["mean"], row["std"], row["n"], row["min"], row["max"]) == (2.0, 1.0, 3, 1.0, 3.0)
    ci = mean_ci(2.0, 1.0, 3)
    assert (row["ci_low"], row["ci_high"]) == (ci.low, ci.high)
    assert (row["eps_spent_min"], row["eps_spent_max"], row["guarantee"], row["status"]) == (1.0, 1.0, "ε-DP", "ok")
    assert (row["nonempty"], row["nonempty_min"], row["nonempty_max"]) == (2.0, 1.0, 3.0)   # from the cluster sizes


def test_one_run_has_no_sd_and_an_open_interval():
    row = cells.cell_summary([_rec("a", 1.0, [4.0])], "cost_kmeans").iloc[0]
    assert row["n"] == 1 and math.isnan(row["std"]) and row["ci_low"] == -math.inf and row["ci_high"] == math.inf


def test_nonempty_clusters_fall_back_to_what_the_algorithm_reports():
    row = cells.cell_summary([_rec("a", 1.0, [1.0, 2.0], info={"nonempty_clusters": 2})], "cost_kmeans").iloc[0]
    assert row["nonempty"] == 2.0


def test_guarantee_is_declared_never_assumed():
    kinds = cells.guarantee_kinds([_rec("dp", 1.0, [1.0]), _rec("base", None, [1.0], kind=None),
                                   _rec("undeclared", 1.0, [1.0], kind=None),
                                   _rec("notdp", 1.0, [1.0], kind="not DP as published")])
    assert kinds == {"dp": "ε-DP", "base": "non-private", "undeclared": "", "notdp": "not DP as published"}


def test_unavailable_cells_keep_their_status_and_no_statistics():
    t = cells.cell_summary([_rec("a", 1.0, [], dataset="gone", status="data_unavailable"),
                            _rec("a", 1.0, [1.0, 1.5])], "cost_kmeans")
    gone = t[t["dataset"] == "gone"].iloc[0]
    assert gone["status"] == "data_unavailable" and gone["reason"] == "offline" and gone["n"] == 0
    assert np.isnan(gone["mean"]) and t[t["dataset"] == "s1"].iloc[0]["n"] == 2


@pytest.mark.parametrize("keys", [None, ["dataset", "algorithm", "k", "epsilon", "group"]])
def test_cells_come_in_the_order_of_their_keys_non_private_last(keys):
    recs = [_rec("b", 1.0, [1.0]), _rec("a", 0.5, [1.0]), _rec("a", None, [1.0], kind=None), _rec("a", 1.0, [2.0])]
    t = cells.cell_summary(recs, "cost_kmeans", *([keys] if keys else []))
    assert list(t.columns[:5]) == (keys or cells.KEYS)
    assert [(a, e) for a, e in zip(t["algorithm"], t["epsilon"].fillna(-1))] == [("a", 0.5), ("a", 1.0), ("a", -1),
                                                                                  ("b", 1.0)]


def test_records_of_unavailable_data_only_give_status_rows_with_every_column():
    """Offline without a mirror every record is `data_unavailable`: no run, so no run column; the
    summary (and an item asking for run `info`) still has every column."""
    recs = [_rec("a", 1.0, [], dataset="gone", status="data_unavailable")]
    frame = cells.cell_frame(recs, "cost_kmeans", ("recovery_cost",))
    assert {"value", "epsilon_spent", "nonempty", "recovery_cost"} <= set(frame.columns)
    t = cells.cell_summary(recs, "cost_kmeans")
    assert list(t.columns) == cells.CELL_COLUMNS and t.iloc[0]["status"] == "data_unavailable"
    assert set(cells.tidy(recs, {})["metric"]) == set(cells.TIDY_METRICS)
