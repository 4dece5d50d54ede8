"""Shared by the items of Balcan et al. 2017: the tidy summary table and table lookups.

`summary` gives one row per dataset × algorithm × k × ε with mean/std/n of the k-means objective,
the ε the runs actually spent (max and min) and the data dimension; rows of unavailable data keep
their status and reason. Renderers and checks read only such tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...aggregate import Check, runs_frame
from ...itemkit import availability

COLUMNS = ["dataset", "d", "algorithm", "k", "epsilon", "status", "reason", "mean", "std", "n",
           "eps_spent_max", "eps_spent_min"]

SPENT_CLAIM = "every private run spent exactly its ε (run records)"


def summary(records: list[dict]) -> pd.DataFrame:
    """Mean/std/n of the k-means objective per (dataset, algorithm, k, ε), unavailable rows kept."""
    dims = {r["dataset"]: r.get("d") for r in records if r.get("status", "ok") == "ok"}
    df = runs_frame(records)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    df["epsilon"] = pd.to_numeric(df["epsilon"], errors="coerce")
    rows = []
    keys = ["dataset", "algorithm", "k", "epsilon"]
    for key, cell in df.groupby(keys, dropna=False, sort=True):
        row = dict(zip(keys, key))
        ok = cell[cell["status"] == "ok"]
        row["d"] = dims.get(row["dataset"])
        if ok.empty:
            row.update(status=str(cell["status"].iloc[0]), reason=str(cell["reason"].iloc[0]),
                       mean=np.nan, std=np.nan, n=0, eps_spent_max=np.nan, eps_spent_min=np.nan)
        else:
            cost = pd.to_numeric(ok["cost_kmeans"], errors="coerce")
            spent = pd.to_numeric(ok["epsilon_spent"], errors="coerce")
            row.update(status="ok", reason="", mean=float(cost.mean()),
                       std=float(cost.std(ddof=1)) if len(cost) > 1 else 0.0, n=int(len(cost)),
                       eps_spent_max=float(spent.max()), eps_spent_min=float(spent.min()))
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def available(table: pd.DataFrame, dataset: str) -> bool:
    """Some run of `dataset` succeeded (see `dpclust.itemkit.availability`)."""
    return availability(table, dataset)[0] == "ok"


def means(table: pd.DataFrame, dataset: str, alg: str, by: str = "k") -> pd.Series:
    """Mean objective of `alg` on `dataset`, indexed by `by` (k or epsilon), successful cells only."""
    cell = table[(table["dataset"] == dataset) & (table["algorithm"] == alg) & (table["status"] == "ok")]
    return cell.set_index(by)["mean"].sort_index()


def spent_check(table: pd.DataFrame, private: list[str], rel_tol: float) -> Check:
    """Every private cell's runs spent exactly its ε (max and min of ε spent within `rel_tol`).

    The table form of `dpclust.itemkit.spent_exactly` (the checks step reads the table, and the
    table keeps each cell's max and min ε spent)."""
    rows = table[(table["status"] == "ok") & table["algorithm"].isin(private)]
    if rows.empty:
        return Check(SPENT_CLAIM, None, "no private runs available")
    eps = rows["epsilon"].astype(float)
    bad = rows[((rows["eps_spent_max"] - eps).abs() > rel_tol * eps) | ((rows["eps_spent_min"] - eps).abs() > rel_tol * eps)]
    return Check(SPENT_CLAIM, bad.empty,
                 f"{len(rows)} cells checked" + ("" if bad.empty else f"; mismatch in {len(bad)} cells: "
                                                  + ", ".join(f"{r.dataset}/{r.algorithm}/k={r.k}" for r in bad.itertuples())))
