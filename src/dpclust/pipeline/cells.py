"""The one summary of a cell that the items' tables are built on.

A cell is a (group, dataset, algorithm, k, ε) of the run records. `cell_summary` gives one row per
cell for one metric, with the schema `CELL_COLUMNS`: the metric's mean, standard deviation (ddof 1;
NaN for one run), n, min and max over the cell's runs, the Student-t interval of the mean
(`claims.mean_ci`, level `claims.LEVEL`), the algorithm's declared guarantee kind, the ε its runs
spent (min and max), the non-empty clusters of its released centres on the data (mean, min, max: a
non-private diagnostic, for the rubric's degenerate guard), and the cell's status and reason (the
record's, for data that could not be had or a run an algorithm refused; its statistics are then
NaN). The items add their own columns to it (normalised costs, baselines, diagnostics), never
another mean, sd or n.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dpclust.pipeline.aggregate import KEYS, Context, add_normalized, runs_frame, sort_key
from dpclust.pipeline.claims import mean_ci

STATS = ["mean", "std", "n", "min", "max", "ci_low", "ci_high"]
CELL_COLUMNS = [*KEYS, "metric", *STATS, "guarantee", "eps_spent_min", "eps_spent_max",
                "nonempty", "nonempty_min", "nonempty_max", "status", "reason"]


def guarantee_kinds(records: Iterable[Mapping]) -> dict[str, str]:
    """algorithm -> the guarantee kind its run records declare ('ε-DP', 'not DP as published', ...);
    'non-private' for one without a guarantee and without ε (a baseline), '' for one with ε but no
    declared guarantee (never assumed DP)."""
    out: dict[str, str] = {}
    for rec in records:
        kind = (rec.get("guarantee") or {}).get("kind")
        out.setdefault(rec.get("algorithm"), kind or ("non-private" if rec.get("epsilon") is None else ""))
    return out


def cell_frame(records: Sequence[Mapping], metric: str, info_keys: Sequence[str] = ()) -> pd.DataFrame:
    """`aggregate.runs_frame` with the metric (one of `aggregate.RUN_METRICS`) as `value` and the
    cell keys, metric, ε spent, non-empty clusters and `info_keys` numeric."""
    df = runs_frame(list(records), info_keys)
    df["value"] = df[metric]
    for col in ("epsilon", "value", "epsilon_spent", "nonempty", *info_keys):
        df[col] = pd.to_numeric(df[col], errors="coerce") if col in df else np.nan   # no run: no column
    return df


def cell_summary(records: Sequence[Mapping], metric: str, keys: Sequence[str] = tuple(KEYS),
                 frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """`CELL_COLUMNS` per cell (`keys`, by default every key of a cell) of `metric` (a run metric:
    cost_kmeans, nicv, cost_kmedian, ...), in the order of the keys (NaN last, as pandas' groupby);
    `frame`: `cell_frame(records, metric, ...)` when the caller has built it for its own columns."""
    keys = list(keys)
    columns = [*keys, *[c for c in CELL_COLUMNS if c not in keys]]
    df = cell_frame(records, metric) if frame is None else frame
    ok = df[df["status"] == "ok"]
    by = ok.groupby(keys, dropna=False, sort=True)
    table = pd.concat([by["value"].agg(mean="mean", std="std", n="count", min="min", max="max"),
                       by["epsilon_spent"].agg(eps_spent_min="min", eps_spent_max="max"),
                       by["nonempty"].agg(nonempty="mean", nonempty_min="min", nonempty_max="max")],
                      axis=1).reset_index()
    intervals = [mean_ci(m, s, n) for m, s, n in zip(table["mean"], table["std"], table["n"])]
    table["ci_low"] = [i.low for i in intervals]
    table["ci_high"] = [i.high for i in intervals]
    table["status"], table["reason"] = "ok", ""
    bad = df[df["status"] != "ok"].drop_duplicates(subset=keys)
    if not table.empty:
        bad = bad[~bad.set_index(keys).index.isin(table.set_index(keys).index)]
    table = pd.concat([t for t in (table, bad.assign(n=0)[[*keys, "n", "status", "reason"]]) if not t.empty],
                      ignore_index=True) if len(table) or len(bad) else pd.DataFrame(columns=columns)
    table["metric"] = metric
    table["guarantee"] = table["algorithm"].map(guarantee_kinds(records)) if "algorithm" in table else ""
    table["n"] = table["n"].fillna(0).astype(int)
    table = table.sort_values(keys, na_position="last", kind="stable").reset_index(drop=True)
    return table.reindex(columns=columns)


#: the run metrics the default aggregator summarises (the run record's scalar outcomes)
TIDY_METRICS = ("cost_kmeans", "nicv", "cost_kmedian", "iterations", "epsilon_spent", "wall_time_s")


def tidy(records: list[dict], item: dict, ctx: Context | None = None) -> pd.DataFrame:
    """Default aggregator: the cell summary (`dpclust.pipeline.cells.cell_summary`) of every run
    metric the runs report (`TIDY_METRICS`), one row per (group, dataset, algorithm, k, ε, metric).

    Datasets whose records say `data_unavailable` appear with status `data_unavailable` and NaN
    statistics, so renderers can draw a "data unavailable" panel.
    """
    frames = []
    for metric in TIDY_METRICS:
        cells = cell_summary(records, metric)
        if not (cells["status"] == "ok").any() or not cells.loc[cells["status"] == "ok", "n"].any():
            cells = cells[cells["status"] != "ok"]           # a metric no run reports: only the status rows
        frames.append(cells)
    table = pd.concat([f for f in frames if not f.empty], ignore_index=True) if any(not f.empty for f in frames) \
        else pd.DataFrame(columns=CELL_COLUMNS)
    norm = item.get("normalize")
    if norm:
        table = add_normalized(table, norm["to"], norm.get("metric", "cost_kmeans"), norm.get("stat", "mean"))
    return table.sort_values(KEYS + ["metric"], key=sort_key, na_position="first").reset_index(drop=True)
