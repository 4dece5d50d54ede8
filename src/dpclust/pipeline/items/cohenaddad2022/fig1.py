"""Figure 1 of Cohen-Addad et al. 2022: the centres HST k-median returns on the 2-D SYNTHETIC set
(SIPU S1), drawn over the data, for a small and a large ε (Figure 1 (a), (b)).

Table: rows `kind=point` (the scaled data of the item's dataset), `kind=centre` (the centres of
seed 0 per ε), `kind=cost` (mean k-median cost per ε in `x`, number of runs in `y`, sd in `sd`) and
`kind=spent` (ε spent per run in `x`, its seed in `y`); one `kind=unavailable` row (with the
reason) if the data could not be obtained. Checks, decided by the claims engine
(`dpclust.pipeline.verdicts`, rubric docs/VERDICTS.md): every run spends exactly its ε (bookkeeping), and
(§6, Figure 1) the solution fits the data better at the larger ε: the mean k-median cost at the larger
ε of `claims.epsilons` (default: the table's largest and smallest) over the mean cost at the smaller, a
delta-method interval (`claims.ratio_ci`), is below 1. Only runs that store centres are drawn.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.claims import ratio_ci
from dpclust.pipeline.itemkit import dataset_name, name, runs_note
from dpclust.pipeline.plotting import mark_unavailable, panel_grid, save_figure


def aggregate(records, item, ctx) -> pd.DataFrame:
    """The table of the module docstring from the run records and the item's dataset (`datasets:`)."""
    from dpclust.data import apply_transform, load_processed

    rows = []
    recs = [r for r in records if r.get("status", "ok") == "ok"]
    unavailable = [r for r in records if r.get("status", "ok") != "ok"]
    if unavailable:
        return pd.DataFrame([{"kind": "unavailable", "reason": unavailable[0].get("reason", "")}])
    dataset = item["datasets"][0]
    ds = load_processed(ctx.dataset_path(dataset))
    X, _ = apply_transform(recs[0]["transform"] if recs else "minmax_01", ds.X, ctx.entry(dataset))
    for x, y in X[:, :2]:
        rows.append({"kind": "point", "epsilon": None, "x": float(x), "y": float(y)})
    for rec in sorted(recs, key=lambda r: r["epsilon"]):
        runs = sorted(rec["runs"], key=lambda r: r["seed"])
        first = runs[0]
        for c in first.get("centers") or []:
            rows.append({"kind": "centre", "epsilon": rec["epsilon"], "x": c[0], "y": c[1]})
        costs = [r["cost_kmedian"] for r in runs]
        rows.append({"kind": "cost", "epsilon": rec["epsilon"], "x": float(np.mean(costs)), "y": float(len(costs)),
                     "sd": float(np.std(costs, ddof=1)) if len(costs) > 1 else float("nan")})
        for r in runs:
            rows.append({"kind": "spent", "epsilon": rec["epsilon"], "x": r["epsilon_spent"], "y": float(r["seed"])})
    return pd.DataFrame(rows, columns=["kind", "epsilon", "x", "y", "sd"])


def _planned(item) -> tuple[str, str]:
    """(dataset, algorithm) of the item's planned run group (render spec `runs`: one group)."""
    group = next(iter(item["runs"].values()))
    return group["datasets"][0], group["algorithms"][0]


def render(table: pd.DataFrame, item, stem) -> None:
    """One panel per ε: the data in grey, the centres of seed 0 on top (Figure 1 (a), (b))."""
    dataset, algorithm = _planned(item)
    unavailable = "unavailable" in set(table["kind"])
    eps_values = [] if unavailable else sorted(table.loc[table["kind"] == "centre", "epsilon"].dropna().unique())
    n = max(1, len(eps_values))
    fig, axes = panel_grid(n, ncols=2, panel_size=(3.8, 3.6))
    if unavailable or not eps_values:
        reason = table["reason"].iloc[0] if "reason" in table else ""
        mark_unavailable(axes[0], dataset_name(item, dataset), str(reason))
        save_figure(fig, stem)
        return
    pts = table[table["kind"] == "point"]
    for ax, eps, tag in zip(axes, eps_values, "abcdefgh"):
        ax.scatter(pts["x"], pts["y"], s=1, c="0.7", rasterized=True, label="data")
        C = table[(table["kind"] == "centre") & (table["epsilon"] == eps)]
        ax.scatter(C["x"], C["y"], s=40, marker="X", c="C3", edgecolors="k", linewidths=0.5,
                   label=f"{name(item, algorithm)} centres")
        cost = table[(table["kind"] == "cost") & (table["epsilon"] == eps)]
        text = ""
        if len(cost):
            row = cost.iloc[0]
            sd = f" ± {row['sd']:.3g}" if "sd" in row and pd.notna(row["sd"]) else ""
            text = f", cost {row['x']:.4g}{sd} (n = {int(row['y'])})"
        ax.set_title(f"({tag}) ε = {eps:g}{text}", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, markerscale=2)   # never over the data
    fig.suptitle(f"{name(item, algorithm)} on {dataset_name(item, dataset)}")
    note = runs_note(item)
    if note:
        fig.suptitle(f"{name(item, algorithm)} on {dataset_name(item, dataset)}\n{note}; cost: mean k-median cost ± sd",
                     fontsize=9)
    save_figure(fig, stem)


def checks(table: pd.DataFrame, item) -> list[Check]:
    """Every run spent exactly its ε (bookkeeping); the mean k-median cost is lower at the largest ε
    than at the smallest — both decided by the claims engine (`dpclust.pipeline.verdicts`)."""
    claims = item["claims"]
    hst = name(item, claims["hst"])
    if "unavailable" in set(table["kind"]):
        return [Check(f"{hst} captures the geometry better as ε grows", None, "data unavailable", cells=0,
                      rule="no cell")]
    cost = table[table["kind"] == "cost"].sort_values("epsilon")
    spent = table[table["kind"] == "spent"]
    tol = float(claims["spent_rel_tol"])
    # bookkeeping: one exact cell per ε, the largest relative deviation of a run's ε spent from its ε
    cells = [(f"ε={float(eps):g} ({len(runs)} runs)", float((runs["x"].astype(float) - float(eps)).abs().max()
                                                             / float(eps))) for eps, runs in spent.groupby("epsilon")]
    checks = [verdicts.exact_spend("each private run spends exactly its epsilon setting", cells, tol,
                                   detail=f"{len(spent)} runs; quantity: max |ε spent − ε| / ε over the runs")]
    pair = claims.get("epsilons")   # the (small, large) ε the claim compares; default the table's ends
    if pair:   # the sensitivity's other pairs run in a group of their own (not drawn: no centres stored)
        cost = cost[cost["epsilon"].astype(float).isin([float(e) for e in pair])]
    if len(cost) >= 2:
        # Figure 1 (STATED): "as epsilon increases the HST solution captures the geometry better" — one cell:
        # mean cost at the largest ε / at the smallest < 1, one-sided with the rubric's 1 % null margin
        lo, hi = cost.iloc[0], cost.iloc[-1]
        a, b = (hi["x"], hi["sd"], int(hi["y"])), (lo["x"], lo["sd"], int(lo["y"]))
        cell = verdicts.Cell(f"ε={fmt(hi['epsilon'])} / ε={fmt(lo['epsilon'])}", lambda level: ratio_ci(a, b, level))
        checks.append(verdicts.check(
            f"as ε increases the {hst} solution fits the data better (mean k-median cost at the "
            f"larger ε / at the smaller < 1)", [cell], verdicts.Directional("<", 1.0), "every",
            why=f"genuine: the mean cost ratio is {cell.interval(0.9)} with {int(lo['y'])} and {int(hi['y'])} runs",
            detail=f"mean cost {fmt(lo['x'])} (n = {int(lo['y'])}) at ε = {fmt(lo['epsilon'])} vs {fmt(hi['x'])} "
                   f"(n = {int(hi['y'])}) at ε = {fmt(hi['epsilon'])}; delta-method interval"))
    return checks
