"""Shared by the items of Balcan et al. 2017: the tidy summary table, table lookups, privacy labels
and the helpers the claim checks use to build the cells of the claims engine
(`dpclust.pipeline.verdicts`, rubric docs/VERDICTS.md).

`summary` gives one row per dataset × algorithm × k × ε: the cell summary of the k-means objective
(`dpclust.pipeline.cells`: mean, std, n, interval, declared guarantee, ε spent, non-empty clusters,
status and reason), the data dimension and the means of the non-private diagnostics of Algorithm 4
and SuLQ (cost and non-empty clusters right after the recovery). Renderers and checks read only such
tables.

Claims compare differentially private methods only, by the guarantee the records carry (a kind in
`itemkit.DP_OR_UNDECLARED`), and `itemkit.require_dp` refuses a claim whose roles name a variant that
is not DP (e.g. the authors' calibration of Algorithm 4), which is shown beside the DP methods but
never compared as private.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpclust.pipeline import declared, verdicts
from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.cells import CELL_COLUMNS, cell_frame, cell_summary
from dpclust.pipeline.claims import LEVEL, Interval
from dpclust.pipeline.itemkit import (
    DP_OR_UNDECLARED,
    NON_PRIVATE_KIND,
    availability,
    dataset_name,
    labelled_name,
    require_dp,
    table_guarantee,
)

#: Algorithm 4's and SuLQ's non-private diagnostics (run `info`): the cost right after the recovery and
#: its non-empty clusters
RECOVERY = ("recovery_cost", "recovery_nonempty_clusters")
COLUMNS = [*CELL_COLUMNS, "d", "recovery_cost", "recovery_cost_std", "recovery_nonempty"]

SPENT_CLAIM = "every private run spent exactly its ε (run records)"
#: the root cause shared by the verdicts that fail where the DP-calibrated algorithm collapses (MNIST):
#: one finding, tagged alike wherever it makes a claim fail (the published curves come from the
#: authors' calibration, which is not DP; see config/papers/balcan2017.yaml notes)
CAUSE_CALIBRATION = ("cause: authors' calibration not DP (the audit's d = 100 design, high_dim_corner, measures "
                     "it: tables/audit/audit.csv)")


def summary(records: list[dict]) -> pd.DataFrame:
    """The cell summary of the k-means objective (`cells.cell_summary`) per (dataset, algorithm, k,
    ε) and run group (a settings variant of the sensitivity is a group of its own), unavailable rows
    kept, with the data dimension and the means of Algorithm 4's and SuLQ's recovery diagnostics."""
    if not records:
        return pd.DataFrame(columns=COLUMNS)
    keys = ["dataset", "algorithm", "k", "epsilon", "group"]
    runs = cell_frame(records, "cost_kmeans", RECOVERY)
    table = cell_summary(records, "cost_kmeans", keys, runs)
    dims = {r["dataset"]: r.get("d") for r in records if r.get("status", "ok") == "ok"}
    table["d"] = table["dataset"].map(dims)
    runs = runs[runs["status"] == "ok"]
    rec = (runs.groupby(keys, dropna=False, sort=True)
           .agg(recovery_cost=("recovery_cost", "mean"), recovery_cost_sd=("recovery_cost", _sd),
                recovery_nonempty=("recovery_nonempty_clusters", "mean")).reset_index())
    return table.merge(rec, on=keys, how="left").rename(columns={"recovery_cost_sd": "recovery_cost_std"})[COLUMNS]


def _sd(values: pd.Series) -> float:
    v = values.dropna()
    return float(v.std(ddof=1)) if len(v) > 1 else np.nan


def available(table: pd.DataFrame, dataset: str) -> bool:
    """Some run of `dataset` succeeded (see `dpclust.pipeline.itemkit.availability`)."""
    return availability(table, dataset)[0] == "ok"


def means(table: pd.DataFrame, dataset: str, alg: str, by: str = "k") -> pd.Series:
    """Mean objective of `alg` on `dataset`, indexed by `by` (k or epsilon), successful cells only."""
    cell = table[(table["dataset"] == dataset) & (table["algorithm"] == alg) & (table["status"] == "ok")]
    return cell.set_index(by)["mean"].sort_index()


def cells(table: pd.DataFrame, dataset: str | None, alg: str, by: str = "k") -> dict:
    """{k or ε: row} of `alg` (on `dataset`, or on any dataset if None), successful cells only."""
    part = table[(table["algorithm"] == alg) & (table["status"] == "ok")]
    if dataset is not None:
        part = part[part["dataset"] == dataset]
    return {key: row for key, row in zip(part[by], part.itertuples())}


def claim_source(table: pd.DataFrame, item: dict, by: str, wanted: Sequence[str], cell_label,
                 explain=None) -> declared.Source:
    """The summary table's cells for the declared claims (`dpclust.pipeline.declared`): dataset × `by`
    (k or epsilon) over the `wanted` datasets; (mean, sd, n) per method (one without ε, the non-private
    reference, at every ε); the fewest non-empty clusters for the degenerate guard; a claim naming a
    method that is not DP refused (`require_dp`; a non-private comparator is a reference, not refused)."""
    ok = table[table["status"] == "ok"]

    def row(ds, alg, point):
        rows = cells(table, ds, alg, by)
        if by == "epsilon" and rows and all(pd.isna(key) for key in rows):
            return next(iter(rows.values()))
        return rows.get(point)

    def stats(ds, alg, point):
        r = row(ds, alg, point)
        return None if r is None else triple(r)

    def low(ds, alg, point):
        r = row(ds, alg, point)
        return (None, 0) if r is None else (nonempty_low(r), int(r.k))

    def refuse(compare, against, claim):
        return require_dp(table, item, [*compare, *[a for a in against
                                                   if table_guarantee(table, a) != NON_PRIVATE_KIND]], claim)

    missing = {ds: "" for ds in wanted if not available(table, ds)}
    return declared.Source(available=[ds for ds in wanted if ds not in missing], planned=list(wanted),
                           missing=missing, points=sorted(set(ok[by].dropna())), stats=stats,
                           names={ds: dataset_name(item, ds) for ds in wanted}, cell_text="", cell_label=cell_label,
                           nonempty_low=low, refuse=refuse, explain=explain, axis=(by,))


def triple(row) -> tuple[float, float, int]:
    """(mean, sd, n) of a summary row, for `dpclust.pipeline.claims`."""
    return float(row.mean), float(0.0 if pd.isna(row.std) else row.std), int(row.n)


def log_linear_ci(terms: Sequence[tuple[float, float, float, int]], level: float = LEVEL) -> Interval:
    """Interval of exp(Σ c_i·ln mean_i) from independent cell summaries (c_i, mean_i, sd_i, n_i):
    delta method, Var ln mean ≈ (sd/mean)²/n, Student-t with the smallest n − 1 degrees of freedom
    (conservative). Any n < 2 gives (−inf, inf) on the log scale, i.e. [0, inf)."""
    est = 0.0
    var = 0.0
    n_min = min(int(n) for _, _, _, n in terms) if terms else 0
    for c, m, sd, n in terms:
        if not (m > 0):
            return Interval(float("nan"), -math.inf, math.inf)
        est += c * math.log(m)
        if n >= 2:
            var += c * c * (float(sd) / float(m)) ** 2 / n
    if n_min < 2:
        return Interval(math.exp(est), 0.0, math.inf)
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, n_min - 1)) * math.sqrt(var)
    return Interval(math.exp(est), math.exp(est - half), math.exp(est + half))


def spent_check(table: pd.DataFrame, private: list[str], rel_tol: float) -> Check:
    """Every DP cell's runs spent exactly its ε: one exact cell per (dataset, algorithm, k, ε) whose
    quantity is max |ε spent − ε| / ε over its runs (max and min of ε spent), decided by the engine
    against `rel_tol` (bookkeeping: our own check, never a paper's claim). Variants that are not DP
    (no ε guarantee, NaN spent) are left out.
"""
    private = [a for a in private if table_guarantee(table, a) in DP_OR_UNDECLARED]
    rows = table[(table["status"] == "ok") & table["algorithm"].isin(private)]
    cells = [(f"{r.dataset}/{r.algorithm}/k={r.k}/ε={float(r.epsilon):g}",
              max(abs(float(r.eps_spent_max) - float(r.epsilon)), abs(float(r.eps_spent_min) - float(r.epsilon)))
              / float(r.epsilon)) for r in rows.itertuples()]
    return verdicts.exact_spend(SPENT_CLAIM, cells, rel_tol, detail=f"{len(rows)} cells checked; quantity: max "
                                "|ε spent − ε| / ε over the cell's runs" if cells else "")


# ---------------------------------------------------------------------------------------------
# cells of the claims engine
# ---------------------------------------------------------------------------------------------
def log_linear_cell(label: str, terms: Sequence[tuple[float, float, float, int]]) -> verdicts.Cell:
    """exp(Σ c_i·ln mean_i) with its `log_linear_ci` interval at any level."""
    return verdicts.Cell(label, lambda level: log_linear_ci(terms, level))


def nonempty_low(row) -> float | None:
    """The fewest non-empty clusters of any run of a summary row (the mean if the minimum is not
    recorded); None when the algorithm records none."""
    for key in ("nonempty_min", "nonempty"):
        v = getattr(row, key, None)
        if v is not None and not pd.isna(v):
            return float(v)
    return None


def degenerate(row) -> bool:
    """A cell is degenerate when any of its runs is (`verdicts.degenerate`: fewer than k/2 non-empty
    clusters; never "holds" for a competitive / close / within-c× claim)."""
    return verdicts.degenerate(nonempty_low(row), row.k)


def collapsed(row) -> bool:
    """The runs of the cell keep at most half of their k clusters on average (the MNIST collapse of
    the DP-calibrated algorithm: evidence for `CAUSE_CALIBRATION`)."""
    v = getattr(row, "nonempty", None)
    return v is not None and not pd.isna(v) and float(v) <= int(row.k) / 2


def guard_degenerate(cell: verdicts.Cell, row) -> tuple[verdicts.Cell, str | None]:
    """The rubric's degenerate guard on a summary row's cell (`verdicts.degenerate_cell`); returns the
    cell and a note naming it."""
    if not degenerate(row):
        return cell, None
    low, k = nonempty_low(row), int(row.k)
    return verdicts.degenerate_cell(cell, low, k), f"{cell.label.split(':')[0]} ({low:g}/{k} non-empty clusters)"


def states(cells: Sequence[verdicts.Cell], test, quantifier: str = "every") -> list[str]:
    """Each cell's state under the engine (holds / fails / open), in order."""
    return [c.state for c in verdicts.judge(cells, test, quantifier).cells]


def evidence(table: pd.DataFrame, item: dict, dataset: str, by: str, key, algs: Sequence[str]) -> str:
    """One clause per algorithm at one cell: its mean cost, and (where recorded) its cost right after
    the recovery and its non-empty clusters out of k; not-DP variants are marked so."""
    parts = []
    for alg in algs:
        row = cells(table, dataset, alg, by).get(key)
        if row is None:
            continue
        k = int(row.k)
        text = f"{labelled_name(item, table, alg)}: cost {fmt(row.mean)}"
        if not pd.isna(row.recovery_cost):
            text += f", after recovery {fmt(row.recovery_cost)}"
        if not pd.isna(row.nonempty):
            ne = f"{row.nonempty:.3g}" if row.nonempty_min != row.nonempty_max else f"{int(row.nonempty)}"
            text += f", {ne}/{k} non-empty clusters"
        parts.append(text)
    return "; ".join(parts)
