"""What Figures 2 and 3 of Cohen-Addad et al. 2022 share: the normalised k-median cost table, its
figure (one panel per dataset, normalised cost vs k), and the helpers of their claim checks.

Normalisation (STATED §6 "normalized by the best clustering objective"): at each (dataset, k), every
method's mean k-median cost is divided by the smallest mean cost of any method run there (kmed++ is
one of them), so the best method has ratio 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...aggregate import Check, runs_frame, tidy
from ...itemkit import availability, dataset_name, name, runs_note, short_reason
from ...plotting import mark_unavailable, panel_grid, save_figure, style_for

COLUMNS = ["dataset", "algorithm", "k", "epsilon", "mean", "std", "n", "best", "ratio", "eps_exact", "status", "reason"]


# ---------------------------------------------------------------------------------------------
# table
# ---------------------------------------------------------------------------------------------
def aggregate_normalised(records, item, ctx) -> pd.DataFrame:
    """Tidy k-median cost per (dataset, algorithm, k) with `ratio` = mean / best mean at (dataset, k).

    Also carries the per-run spent-ε check as a column `eps_exact`: every run of the cell spent its
    ε within the relative tolerance `table.spent_rel_tol`."""
    rel_tol = float(item["table"]["spent_rel_tol"])
    table = tidy(records, item, ctx)
    t = table[table["metric"] == "cost_kmedian"].copy() if not table.empty else table
    unavailable = table[table["status"] != "ok"].drop_duplicates(subset=["dataset", "algorithm"]) if not table.empty else table
    if not t.empty:
        ok = t[t["status"] == "ok"]
        best = ok.groupby(["dataset", "k"])["mean"].min().rename("best").reset_index()
        t = t.merge(best, on=["dataset", "k"], how="left")
        t["ratio"] = t["mean"] / t["best"]
    # spent-ε per (dataset, algorithm, k)
    df = runs_frame(records)
    if not df.empty and "epsilon_spent" in df:
        ok_runs = df[(df["status"] == "ok") & df["epsilon"].notna()]
        exact = (ok_runs.assign(exact=np.isclose(ok_runs["epsilon_spent"].astype(float), ok_runs["epsilon"].astype(float),
                                                 rtol=rel_tol))
                 .groupby(["dataset", "algorithm", "k"])["exact"].all().reset_index())
        if not t.empty:
            t = t.merge(exact, on=["dataset", "algorithm", "k"], how="left")
    if "exact" not in t:
        t["exact"] = pd.NA
    t = t.rename(columns={"exact": "eps_exact"})
    t = t.reindex(columns=COLUMNS)
    if not unavailable.empty:
        extra = unavailable[~unavailable.set_index(["dataset", "algorithm"]).index.isin(
            t.set_index(["dataset", "algorithm"]).index)].reindex(columns=COLUMNS)
        t = pd.concat([t, extra], ignore_index=True)
    return t.sort_values(["dataset", "algorithm", "k"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# figure
# ---------------------------------------------------------------------------------------------
def _planned(item, key: str) -> list[str]:
    """Datasets or algorithms of the runs planned under the preset (render spec `runs`), in order."""
    out: list[str] = []
    for group in (item.get("runs") or {}).values():
        for value in group[key]:
            if value not in out:
                out.append(value)
    return out


def render_normalised(table: pd.DataFrame, item, stem) -> None:
    """One panel per planned dataset: mean k-median cost / best mean cost vs k, one line per method
    (log scale, legend in the order of `figure.methods`, then any other method run); datasets that
    could not be obtained are "data unavailable" panels."""
    datasets = _planned(item, "datasets") or sorted(table["dataset"].dropna().unique())
    fig, axes = panel_grid(len(datasets), ncols=2, panel_size=(4.2, 3.2))
    ran = set(table["algorithm"].dropna())
    order = list(item["figure"]["methods"])
    algs = [a for a in order if a in ran] + sorted(ran - set(order))
    for ax, ds, tag in zip(axes, datasets, "abcdefgh"):
        title = f"({tag}) {dataset_name(item, ds)}"
        sub = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        if sub.empty:
            reason = table.loc[table["dataset"] == ds, "reason"]
            mark_unavailable(ax, title, str(reason.iloc[0]) if len(reason) else "no runs")
            continue
        for i, alg in enumerate(algs):
            s = sub[sub["algorithm"] == alg].sort_values("k")
            if s.empty:
                continue
            ax.plot(s["k"], s["ratio"], label=name(item, alg), **style_for(alg, i), markersize=4)
        ax.set_title(title)
        ax.set_xlabel("k")
        ax.set_ylabel("k-median cost / best")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    handles, labels = [], []
    for ax in axes:
        h, l_ = ax.get_legend_handles_labels()
        for hh, ll in zip(h, l_):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), bbox_to_anchor=(0.5, -0.12))
    note = runs_note(item)
    if note:
        fig.suptitle(note, fontsize=7, color="0.3")
    save_figure(fig, stem)


# ---------------------------------------------------------------------------------------------
# claim helpers
# ---------------------------------------------------------------------------------------------
def mean_by_k(table: pd.DataFrame, dataset: str, algorithm: str) -> pd.Series:
    """Mean k-median cost per k of one method on one dataset (available cells only)."""
    rows = table[(table["dataset"] == dataset) & (table["algorithm"] == algorithm) & (table["status"] == "ok")]
    return rows.set_index("k")["mean"]


def why_not_evaluable(table: pd.DataFrame, item, dataset: str) -> str:
    """Why a claim on `dataset` cannot be evaluated: not run, data unavailable, or no common runs."""
    status, reason = availability(table, dataset)
    label = dataset_name(item, dataset)
    if status == "absent":
        return f"{label}: not run in this preset"
    if status == "data_unavailable":
        return f"{label}: data unavailable ({short_reason(reason)})"
    return f"{label}: no common k"


def beats(table: pd.DataFrame, item, dataset: str, a: str, b: str) -> tuple[bool | None, str]:
    """(holds, detail): a's mean cost is below b's at every common k on `dataset` (None: no common k)."""
    A, B = mean_by_k(table, dataset, a), mean_by_k(table, dataset, b)
    common = sorted(set(A.index) & set(B.index))
    if not common:
        return None, why_not_evaluable(table, item, dataset)
    wins = [k for k in common if A[k] < B[k]]
    return (len(wins) == len(common),
            f"{dataset_name(item, dataset)}: {name(item, a)} below {name(item, b)} at {len(wins)}/{len(common)} k")


def ratios(table: pd.DataFrame, dataset: str, a: str, b: str) -> dict:
    """{k: mean cost of a / mean cost of b} at every common k on `dataset`."""
    A, B = mean_by_k(table, dataset, a), mean_by_k(table, dataset, b)
    return {k: A[k] / B[k] for k in sorted(set(A.index) & set(B.index))}


def spent_cells(table: pd.DataFrame) -> Check:
    """Every private (dataset, method, k) cell spent exactly its ε (column `eps_exact` of the table)."""
    col = table["eps_exact"].dropna() if "eps_exact" in table else pd.Series([], dtype=object)
    return Check("each private run spends exactly its epsilon setting", None if col.empty else bool(col.astype(bool).all()),
                 f"{len(col)} (dataset, method, k) cells")
