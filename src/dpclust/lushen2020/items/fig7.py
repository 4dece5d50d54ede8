"""Figure 7 of Lu & Shen, "Clustering Quality Comparisons": the mean k-means cost (Eq. 2) of each
private method divided by the mean cost of Lloyd's algorithm from the same initial centroids
(paired by seed; Lloyd = 1, §7.1), log scale, against the per-atom-step budget ε_step; the table
also stores the gap (ratio − 1). Checks: §7.2's "Algorithm 1 is best everywhere" and "the gap
grows with ε", and that no run spent more than its cap."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import dataset_name, name, step_options
from ...plotting import mark_unavailable, panel_grid, save_figure, style_for
from .common import ALG1, BASELINES, LLOYD, ORDER, dataset_order, runs_table, unavailable

#: Violations listed in a failing claim's detail (the count is always given).
SHOWN = 6

COLUMNS = ["dataset", "k", "algorithm", "epsilon", "eps_step", "n", "cost_mean", "cost_std", "lloyd_cost_mean",
           "ratio", "gap", "eps_spent_mean", "eps_spent_min", "eps_spent_max", "status", "reason"]


def aggregate_fig7(records, item, ctx=None) -> pd.DataFrame:
    """One row per (dataset, k, algorithm, ε) of the private methods: mean cost, mean cost of the
    Lloyd runs of the same seeds, their ratio and gap, and the ε spent; one row per unavailable
    dataset."""
    df = runs_table(records)
    out = []
    for dataset, reason in unavailable(df).items():
        out.append({"dataset": dataset, "status": "data_unavailable", "reason": reason})
    ok = df[df["status"] == "ok"]
    lloyd = ok[ok["algorithm"] == LLOYD][["dataset", "k", "seed", "cost"]].rename(columns={"cost": "lloyd_run_cost"})
    priv = ok[ok["algorithm"] != LLOYD].merge(lloyd, on=["dataset", "k", "seed"], how="left")
    for (dataset, k, alg, eps), cell in priv.groupby(["dataset", "k", "algorithm", "epsilon"], sort=True):
        lc = cell["lloyd_run_cost"]
        lmean = float(lc.mean()) if lc.notna().all() else np.nan
        cmean = float(cell["cost"].mean())
        ratio = cmean / lmean if lmean and not math.isnan(lmean) else np.nan
        out.append({"dataset": dataset, "k": k, "algorithm": alg, "epsilon": eps,
                    "eps_step": float(cell["eps_step"].iloc[0]), "n": len(cell), "cost_mean": cmean,
                    "cost_std": float(cell["cost"].std(ddof=1)) if len(cell) > 1 else np.nan,
                    "lloyd_cost_mean": lmean, "ratio": ratio, "gap": ratio - 1.0,
                    "eps_spent_mean": float(cell["epsilon_spent"].mean()),
                    "eps_spent_min": float(cell["epsilon_spent"].min()),
                    "eps_spent_max": float(cell["epsilon_spent"].max()), "status": "ok", "reason": ""})
    return pd.DataFrame(out, columns=COLUMNS)


def render_fig7(table, item, stem) -> None:
    """One panel per dataset (`figure.dataset_order`), one line per method; data unavailable
    panels say so."""
    opts = step_options(item, "figure")
    datasets = dataset_order(table["dataset"], opts.get("dataset_order", ()))
    fig, axes = panel_grid(max(len(datasets), 1), ncols=3, panel_size=(3.6, 2.8))
    for ax, dataset in zip(axes, datasets):
        cell = table[table["dataset"] == dataset]
        title = dataset_name(item, dataset)
        if (cell["status"] != "ok").all():
            mark_unavailable(ax, title, str(cell["reason"].iloc[0]))
            continue
        for i, alg in enumerate(a for a in ORDER if a in set(cell["algorithm"])):
            r = cell[cell["algorithm"] == alg].sort_values("eps_step")
            ax.plot(r["eps_step"], r["ratio"], label=name(item, alg), ms=4, **style_for(alg, i))
        ax.axhline(1.0, color="0.6", lw=0.8, ls="--")
        ax.set_yscale("log")
        ax.set_title(f"{title} (k={int(cell['k'].dropna().iloc[0])})")
        ax.set_xlabel("per-step ε")
        ax.set_ylabel("cost / Lloyd's cost")
    handles, labels = [], []
    for ax in axes:
        h, lab = ax.get_legend_handles_labels()
        if h:
            handles, labels = h, lab
            break
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.07))
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def check_fig7(table, item) -> list[Check]:
    """§7.2: each strategy of Algorithm 1 has a lower normalised cost than every baseline in every
    (dataset, ε) cell, and its advantage grows from the smallest to the largest ε; every run spent
    at most its cap (`claims.cap_slack`: floating-point slack)."""
    claims = step_options(item, "claims")
    ok = table[table["status"] == "ok"]
    checks = []
    if ok.empty:
        return [Check("Algorithm 1 beats every private baseline", None, "no available dataset")]
    for alg in ALG1:
        worse = []
        n_cells = 0
        for (dataset, eps), cell in ok.groupby(["dataset", "eps_step"]):
            mine = cell[cell["algorithm"] == alg]["ratio"]
            others = cell[cell["algorithm"].isin(BASELINES)]
            if mine.empty or others.empty:
                continue
            n_cells += 1
            for r in others.itertuples():
                if not float(mine.iloc[0]) < r.ratio:
                    worse.append(f"{dataset} ε={fmt(eps)}: {name(item, r.algorithm)} {fmt(r.ratio)} ≤ "
                                 f"{fmt(float(mine.iloc[0]))}")
        checks.append(Check(f"{name(item, alg)} has a lower normalised cost than every private baseline on every "
                            "available dataset and ε (§7.2)", (not worse) if n_cells else None,
                            f"{len(worse)} violations in {n_cells} cells" +
                            (": " + "; ".join(worse[:SHOWN]) if worse else "")))
    for alg in ALG1:
        grows, detail, evaluable = True, [], False
        for dataset, cell in ok.groupby("dataset"):
            eps = sorted(cell["eps_step"].dropna().unique())
            if len(eps) < 2:
                continue
            gaps = []
            for e in (eps[0], eps[-1]):
                c = cell[cell["eps_step"] == e]
                mine = c[c["algorithm"] == alg]["ratio"]
                best = c[c["algorithm"].isin(BASELINES)]["ratio"].min()
                if mine.empty or not np.isfinite(best):
                    break
                gaps.append(math.log10(best / float(mine.iloc[0])))
            if len(gaps) == 2:
                evaluable = True
                grows &= gaps[1] > gaps[0]
                detail.append(f"{dataset}: {gaps[0]:.3f}→{gaps[1]:.3f}")
        checks.append(Check(f"the gap (log10 best-baseline ratio / {name(item, alg)} ratio) grows from the smallest "
                            "to the largest ε on every available dataset (§7.2)", grows if evaluable else None,
                            "; ".join(detail)))
    alg1 = ok[ok["algorithm"].isin(ALG1)]
    base = ok[ok["algorithm"].isin(BASELINES)]
    if not alg1.empty:
        over = base[base["eps_spent_max"] > base["epsilon"] + float(claims["cap_slack"])]
        checks.append(Check("every run spent at most its cap; Algorithm 1's totals are ε₀ + Î·ε_step (≤ cap)",
                            over.empty, f"Alg. 1 mean total {fmt(float(alg1['eps_spent_mean'].mean()))} "
                            f"(range {fmt(float(alg1['eps_spent_min'].min()))}–{fmt(float(alg1['eps_spent_max'].max()))})"))
    return checks
