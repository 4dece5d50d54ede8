"""Items of the foundation: the non-private baselines table and its figure.

Table: mean ± sd k-means cost of Lloyd (random data points) and k-means++ (+ Lloyd) per dataset
and k. Figure: the k-means++ / Lloyd cost ratio per dataset. Checks: sanity properties that must
hold for any correct Lloyd implementation (cost falls with k; k-means++ is not worse on average
by more than a small margin), decided by the claims engine (`dpclust.pipeline.verdicts`,
docs/VERDICTS.md) on intervals of the mean costs over seeds; the pipeline tallies them as "sanity".
A check over every dataset with a planned dataset unavailable is not evaluable (n of N datasets).
"""

from __future__ import annotations

import math

import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.claims import Interval, ratio_ci
from dpclust.pipeline.itemkit import dataset_name, name
from dpclust.pipeline.plotting import mark_unavailable, panel_grid, panel_status, save_figure, style_for, write_table
from dpclust.pipeline.verdicts import Cell, Directional, check, every_dataset

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


def _stats(r) -> tuple[float, float, int]:
    return float(r["mean"]), float(r["std"]) if r["std"] == r["std"] else float("nan"), int(r["n"])


def _geomean_cell(label: str, pairs) -> Cell:
    """The geometric mean over cells of mean_a / mean_b, from (a, b) pairs of (mean, sd, n): the mean
    of the log ratios (each by the delta method, var ≈ (sd/mean)²/n per term) with a
    Welch–Satterthwaite t interval, exponentiated."""
    from scipy import stats

    m = len(pairs)
    logs = [math.log(a[0]) - math.log(b[0]) for a, b in pairs]
    est = sum(logs) / m
    if any(a[2] < 2 or b[2] < 2 or a[1] != a[1] or b[1] != b[1] for a, b in pairs):
        return Cell(label, lambda level: Interval(math.exp(est), 0.0, math.inf))
    terms = [((s / mu) ** 2 / n / m ** 2, n) for pair in pairs for (mu, s, n) in pair]
    var = sum(v for v, _ in terms)
    if var == 0:
        return Cell(label, lambda level: Interval(math.exp(est), math.exp(est), math.exp(est)))
    df = var ** 2 / sum(v * v / (n - 1) for v, n in terms if v > 0)

    def interval(level: float) -> Interval:
        half = float(stats.t.ppf(0.5 + level / 2, df)) * math.sqrt(var)
        return Interval(math.exp(est), math.exp(est - half), math.exp(est + half))

    return Cell(label, interval)


def _over_datasets(c: Check, table: pd.DataFrame) -> Check:
    """docs/VERDICTS.md: a claim over every dataset with datasets missing is not evaluable (n of N)."""
    cost = _cost_rows(table)
    every = sorted(cost["dataset"].unique())
    missing = sorted(set(cost.loc[cost["status"] == "data_unavailable", "dataset"])
                     - set(cost.loc[cost["status"] == "ok", "dataset"]))
    return every_dataset(c, every, missing)


def check_table(table: pd.DataFrame, item: dict) -> list[Check]:
    claims = item["claims"]
    rows = _cost_rows(table)
    rows = rows[rows["status"] == "ok"]
    tol = float(claims["decrease_rel_tol"])
    checks = []
    for alg in ALGORITHMS:
        # a cell: the ratio of mean costs at consecutive k (later / earlier; delta-method interval),
        # "decreases": ≤ 1 + tol (floating-point slack), one-sided, the rubric's 1 % null margin
        cells = []
        for dataset, cell in rows[rows["algorithm"] == alg].groupby("dataset"):
            ordered = [r for _, r in cell.sort_values("k").iterrows()]
            for lo, hi in zip(ordered, ordered[1:]):
                a, b = _stats(hi), _stats(lo)
                cells.append(Cell(f"{dataset_name(item, dataset)} k={int(lo['k'])}→{int(hi['k'])}",
                                  lambda level, a=a, b=b: ratio_ci(a, b, level)))
        checks.append(_over_datasets(check(
            f"{name(item, alg)}: mean k-means cost decreases as k grows, on every dataset", cells,
            Directional("<=", 1 + tol), "every",
            detail="cells: mean cost at the larger k / at the smaller (over seeds)" if cells
            else "no dataset with two values of k"), table))
    pivot = rows.pivot_table(index=["dataset", "k"], columns="algorithm", values="mean")
    if set(ALGORITHMS) <= set(pivot.columns) and len(pivot):
        ratio = (pivot["baselines.kmeanspp"] / pivot["baselines.lloyd"])
        worst = float(ratio.max())
        limit = float(claims["max_geomean_ratio"])
        stat = {(r["dataset"], r["k"], r["algorithm"]): _stats(r) for _, r in rows.iterrows()}
        pairs = [(stat[(d, k, "baselines.kmeanspp")], stat[(d, k, "baselines.lloyd")]) for d, k in pivot.index
                 if (d, k, "baselines.kmeanspp") in stat and (d, k, "baselines.lloyd") in stat]
        cell = _geomean_cell(f"geometric mean over {len(pairs)} (dataset, k) cells", pairs)
        checks.append(_over_datasets(check(
            "k-means++ seeding is on average at least as good as random seeding "
            f"(geometric mean of cost ratios ≤ {limit:g})", [cell], Directional("<=", limit), "every",
            detail=f"cell: geometric mean of the per-cell ratios of mean costs k-means++ / Lloyd; worst cell "
                   f"{fmt(worst)}"), table))
    return checks
