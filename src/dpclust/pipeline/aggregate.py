"""Aggregation of run records into tidy tables, and the claim checks shown in the report.

`runs_frame(records)` gives one row per run; `cells.tidy(records, item, ctx)` (the default aggregator)
gives one row per (group, dataset, algorithm, k, epsilon, metric) with mean, std, n and, when the
item asks for it, the ratio to a baseline algorithm (`normalize: {to: ALG, stat: mean|min,
metric: ...}`), which is how the papers normalise (Su et al. §5.1 baseline = min NICV of Lloyd
over 30 initialisations; Lu & Shen §7.1 cost / Lloyd's cost).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpclust.pipeline.records import load_records  # noqa: F401 (re-exported: records are read with flattened runs)

#: Scalar metrics every run record carries.
RUN_METRICS = ("cost_kmeans", "nicv", "cost_kmedian", "iterations", "epsilon_spent", "delta_spent", "wall_time_s")
KEYS = ["group", "dataset", "algorithm", "k", "epsilon"]


#: a `why` that names its root cause starts "cause: <tag>", then " (" or ": "; the claims that fail for
#: one reason carry the same tag (the summary's `cause` column, the results page groups them by it)
_CAUSE = re.compile(r"cause: ([^(:;]+?)\s*(?:[(:;]|$)")


def cause_of(why: str) -> str:
    """The root-cause tag of a check's `why` ("" when it names none)."""
    found = _CAUSE.match(why or "")
    return found.group(1) if found else ""


@dataclass
class Check:
    """One claim of a paper, checked on our runs (decided by `dpclust.pipeline.verdicts`).

    `holds` is True / False, or None: *not decidable at this sample size* when `undecided` (the
    interval straddles the threshold), else *not evaluable* (no data). `quantity` and `ci` are the
    measured quantity and its confidence interval, `threshold` what holding means, and `why` the
    reason a claim does not hold (defect fixed / genuine: evidence / depends on a lost parameter)."""

    claim: str
    holds: bool | None
    detail: str = ""
    quantity: float | None = None
    ci: tuple[float, float] | None = None
    threshold: str = ""
    why: str = ""
    undecided: bool = False
    kind: str = "paper"      # one of CHECK_KINDS: only "paper" counts in the papers' tallies
    cells: int | None = None  # how many cells the verdict was decided over
    rule: str = ""           # the rubric's rule that decided it (docs/VERDICTS.md)
    sensitivity: str = ""    # robust / setting-dependent over the settings we chose (dpclust.pipeline.sensitivity)
    #: the states of its cells that name their runs (`verdicts.Cell.key` → `CellVerdict.as_record`): what a
    #: replication look settles cell by cell (dpclust.pipeline.replication); not a column of the tables
    cell_states: dict | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.holds is False and not self.why:
            # a failing claim is never shown without a reason: until one is written (the item's
            # claims.why), the summary says so and points at the evidence
            self.why = "not yet explained: the failing cells and their intervals are in the detail"

    @property
    def result(self) -> str:
        if self.holds is True:
            return "holds"
        if self.holds is False:
            return "does not hold"
        return "not decidable" if self.undecided else "not evaluable"


@dataclass
class Context:
    """What an aggregator may read besides the run records: the processed files of the datasets
    listed under the item's `datasets:` (planned inputs of the job)."""

    dataset_paths: dict[str, str]
    dataset_entries: dict[str, dict] | None = None

    def dataset_path(self, name: str) -> str:
        if name not in self.dataset_paths:
            raise KeyError(f"dataset {name!r} is not an input of this item; list it under the item's `datasets:`")
        return self.dataset_paths[name]

    def entry(self, name: str) -> dict:
        """The registry entry of an input dataset (planned with the job, never re-read)."""
        if name not in (self.dataset_entries or {}):
            raise KeyError(f"dataset {name!r} is not an input of this item; list it under the item's `datasets:`")
        return self.dataset_entries[name]




def nonempty_clusters(run: dict) -> float:
    """Non-empty clusters of a run's released centres on the data (a non-private diagnostic): its
    cluster sizes, else the count the algorithm reports (`info.nonempty_clusters`), else NaN."""
    sizes = run.get("cluster_sizes")
    if sizes is not None:
        return float(np.count_nonzero(np.asarray(sizes, dtype=float) > 0))
    count = (run.get("info") or {}).get("nonempty_clusters")
    return np.nan if count is None else float(count)


def runs_frame(records: list[dict], info_keys: Iterable[str] = ()) -> pd.DataFrame:
    """One row per run: keys, seed, init_seed, status, scalar metrics, non-empty clusters
    (`nonempty_clusters`) and the chosen `info` entries; one row per record that is not ok."""
    rows = []
    for rec in records:
        base = {key: rec.get(key) for key in KEYS}
        base["status"] = rec.get("status", "ok")
        base["reason"] = rec.get("reason", "")
        if base["status"] != "ok":
            rows.append(base)
            continue
        for run in rec["runs"]:
            row = dict(base)
            row["seed"] = run["seed"]
            row["init_seed"] = run.get("init_seed")
            for m in RUN_METRICS:
                row[m] = run.get(m)
            row["nonempty"] = nonempty_clusters(run)
            for key in info_keys:
                row[key] = run.get("info", {}).get(key)
            rows.append(row)
    df = pd.DataFrame(rows)
    for col in ["seed", "init_seed", *RUN_METRICS, "nonempty"]:
        if col not in df:
            df[col] = pd.NA
    return df


def sort_key(col: pd.Series) -> pd.Series:
    """Sort key of a table column: ε numeric (None as NaN), text as text."""
    if col.name == "epsilon":
        return pd.to_numeric(col, errors="coerce")
    return col.astype(str) if col.dtype == object else col


def add_normalized(table: pd.DataFrame, baseline: str, metric: str, stat: str = "mean") -> pd.DataFrame:
    """Add `baseline` and `ratio` columns: each (dataset, k) row's mean of `metric` divided by the
    baseline algorithm's `stat` (mean or min) of the same metric at the same (dataset, k)."""
    base = table[(table["algorithm"] == baseline) & (table["metric"] == metric) & (table["status"] == "ok")]
    base = base.groupby(["dataset", "k"])[stat].min().rename("baseline").reset_index()
    out = table.merge(base, on=["dataset", "k"], how="left")
    is_metric = out["metric"] == metric
    out["ratio"] = (out["mean"] / out["baseline"]).where(is_metric)
    out["gap"] = (out["mean"] - out["baseline"]).where(is_metric)
    out.loc[~is_metric, "baseline"] = float("nan")
    return out


CHECK_COLUMNS = ["claim", "result", "quantity", "ci_low", "ci_high", "threshold", "detail", "why",
                 "kind", "cells", "rule", "sensitivity"]
#: what a check is about: a claim of the paper, or our own bookkeeping (ε spent, row counts), sanity
#: checks of the non-private baselines, the privacy audit, the leaderboard (tallied apart)
CHECK_KINDS = ("paper", "alternative", "bookkeeping", "sanity", "audit", "leaderboard")
#: a check whose claim starts with this is our alternative reading of a paper's claim: shown beside
#: the paper's own reading, never counted in the paper's tallies (docs/VERDICTS.md)
ALTERNATIVE_PREFIX = "alternative reading"
#: the kinds whose checks are not claims decided by the rubric: their rule column names the kind
UNRULED_KINDS = ("audit", "leaderboard")
#: the pseudo-papers of config/papers/ whose every check is of one of our own kinds
PAPER_KINDS = {"audit": "audit", "leaderboard": "leaderboard", "baselines": "sanity", "examples": "sanity"}


def checks_frame(checks: list[Check]) -> pd.DataFrame:
    for c in checks:
        if c.kind == "paper" and c.claim.lower().startswith(ALTERNATIVE_PREFIX):
            c.kind = "alternative"
        if c.kind not in CHECK_KINDS:
            raise ValueError(f"check {c.claim!r}: kind must be one of {CHECK_KINDS}, got {c.kind!r}")
        if not c.rule and c.kind not in UNRULED_KINDS:
            raise ValueError(f"check {c.claim!r} ({c.kind}) names no rule: decide it with "
                             "dpclust.pipeline.verdicts, whose verdict sets the rule (docs/VERDICTS.md)")
    return pd.DataFrame([
        {"claim": c.claim, "result": c.result, "quantity": c.quantity,
         "ci_low": None if c.ci is None else c.ci[0], "ci_high": None if c.ci is None else c.ci[1],
         "threshold": c.threshold, "detail": c.detail, "why": c.why, "kind": c.kind,
         "cells": c.cells, "rule": c.rule or c.kind, "sensitivity": c.sensitivity}
        for c in checks
    ], columns=CHECK_COLUMNS)


def fmt(x: Any, digits: int = 4) -> str:
    """Compact number formatting for tables and check details."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, (int,)) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e6):
        return str(int(x))
    return f"{x:.{digits}g}"
