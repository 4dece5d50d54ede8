"""Items of the foundation: the non-private baselines table and its figure.

Table: mean ± sd k-means cost of Lloyd (random data points) and k-means++ (+ Lloyd) per dataset
and k. Figure: the k-means++ / Lloyd cost ratio per dataset. Checks: sanity properties that must
hold for any correct Lloyd implementation (cost falls with k; k-means++ is not worse on average
by more than a small margin).
"""

from __future__ import annotations

import math

import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.itemkit import dataset_name, name
from dpclust.pipeline.plotting import mark_unavailable, panel_grid, panel_status, save_figure, style_for, write_table

ALGORITHMS = ("baselines.lloyd", "baselines.kmeanspp")


def _cost_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["metric"] == "cost_kmeans"]


def render_table(table: pd.DataFrame, item: dict, stem: str) -> None:
    rows = _cost_rows(table)
    out = []
    names = [name(item, alg) for alg in ALGORITHMS]
    for (dataset, k), cell in rows.groupby(["dataset", "k"], sort=True):
        row = {"dataset": dataset_name(item, dataset), "k": int(k)}
        for alg, label in zip(ALGORITHMS, names):
            r = cell[cell["algorithm"] == alg]
            if r.empty or r["status"].iloc[0] != "ok":
                row[label] = "data unavailable"
            else:
                row[label] = f"{fmt(r['mean'].iloc[0])} ± {fmt(r['std'].iloc[0], 2)} (n={int(r['n'].iloc[0])})"
        out.append(row)
    df = pd.DataFrame(out, columns=["dataset", "k", *names])
    unavailable = sorted(rows.loc[rows["status"] != "ok", "dataset"].unique())
    note = (("Datasets unavailable here (no network and no mirror file): " + ", ".join(unavailable))
            if unavailable else "")
    write_table(df, stem, title=item["title"], note=note)


def render_figure(table: pd.DataFrame, item: dict, stem: str) -> None:
    rows = _cost_rows(table)
    datasets = sorted(rows["dataset"].unique())
    fig, axes = panel_grid(max(len(datasets), 1), ncols=4, panel_size=(3.0, 2.4))
    for ax, dataset in zip(axes, datasets):
        cell = rows[rows["dataset"] == dataset]
        if (cell["status"] != "ok").all():
            status, reason = panel_status(cell)
            mark_unavailable(ax, dataset_name(item, dataset), reason, status)
            continue
        for i, alg in enumerate(ALGORITHMS):
            r = cell[cell["algorithm"] == alg].sort_values("k")
            ax.plot(r["k"], r["ratio"], label=name(item, alg), **style_for(alg, i))
        ax.axhline(1.0, color="0.6", lw=0.8, ls="--")
        ax.set_title(dataset_name(item, dataset))
        ax.set_xlabel("k")
        ax.set_ylabel("cost / Lloyd's cost")
    if datasets:
        axes[0].legend(loc="best")
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def check_table(table: pd.DataFrame, item: dict) -> list[Check]:
    claims = item["claims"]
    rows = _cost_rows(table)
    rows = rows[rows["status"] == "ok"]
    checks = []
    for alg in ALGORITHMS:
        falls, detail = True, []
        evaluable = False
        for dataset, cell in rows[rows["algorithm"] == alg].groupby("dataset"):
            means = cell.sort_values("k")["mean"].to_numpy()
            if len(means) > 1:
                evaluable = True
                ok = bool((means[1:] <= means[:-1] * (1 + float(claims["decrease_rel_tol"]))).all())
                falls &= ok
                if not ok:
                    detail.append(dataset)
        checks.append(Check(f"{name(item, alg)}: mean k-means cost decreases as k grows, on every dataset",
                            falls if evaluable else None,
                            "violated on " + ", ".join(detail) if detail else "checked on every available dataset"))
    pivot = rows.pivot_table(index=["dataset", "k"], columns="algorithm", values="mean")
    if set(ALGORITHMS) <= set(pivot.columns) and len(pivot):
        ratio = (pivot["baselines.kmeanspp"] / pivot["baselines.lloyd"])
        worst = float(ratio.max())
        gm = float(math.exp(ratio.apply(math.log).mean()))
        limit = float(claims["max_geomean_ratio"])
        checks.append(Check("k-means++ seeding is on average at least as good as random seeding "
                            f"(geometric mean of cost ratios ≤ {limit:g})", gm <= limit,
                            f"geometric mean ratio {gm:.4f}, worst cell {worst:.4f}"))
    return checks
