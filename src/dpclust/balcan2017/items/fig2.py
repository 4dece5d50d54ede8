"""Figure 2 (a–c) of Balcan et al. 2017 — k-means objective against k at ε = 1 — and the items
that share its runs and functions: the single panels fig2a, fig2b, fig2c and the fig2_table item
(the numbers behind the figure, with sample and aggregate, which the paper ran but did not plot).

Step options (config/papers/balcan2017.yaml):
* `options.datasets` — the datasets, in order: the rows of the table (aggregate), the panels
  (render) and the datasets whose claims are checked (checks);
* `figure.plotted`, `figure.panels` — the algorithms drawn and the paper's panel letters;
  `figure.columns`, `figure.labels` (fig2_table) — the table's algorithm columns and the paper's
  own method labels as their headers;
* `claims` — which algorithm plays which role in §7's claims, and every threshold.
Legends, titles and claim texts take display names from the names table (`dpclust.itemkit.name`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import availability, dataset_name, name, step_options
from ...plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure, style_for, write_table
from .common import available, means, spent_check, summary


def aggregate_fig2(records, item, ctx=None) -> pd.DataFrame:
    table = summary(records)
    wanted = step_options(item, "table").get("datasets")
    if wanted:
        table = table[table["dataset"].isin(wanted)]
    return table.reset_index(drop=True)


def panel_datasets(table: pd.DataFrame, item: dict) -> list[str]:
    """The item's datasets in their configured order (default: every dataset of the table)."""
    return list((item.get("options") or {}).get("datasets") or sorted(table["dataset"].unique()))


def panel_title(table: pd.DataFrame, item: dict, dataset: str) -> str:
    """'(a) Synthetic (100k × 100), d = 100': the paper's panel letter, the display name, d."""
    letter = (step_options(item, "figure").get("panels") or {}).get(dataset)
    d = table.loc[table["dataset"] == dataset, "d"].dropna()
    text = dataset_name(item, dataset) + (f", d = {int(d.iloc[0])}" if len(d) else "")
    return f"({letter}) {text}" if letter else text


def render_fig2(table: pd.DataFrame, item: dict, stem: str) -> None:
    plotted = step_options(item, "figure")["plotted"]
    datasets = panel_datasets(table, item)
    fig, axes = panel_grid(max(len(datasets), 1), ncols=min(max(len(datasets), 1), 3), panel_size=(3.6, 2.9))
    for ax, ds in zip(axes, datasets):
        title = panel_title(table, item, ds)
        status, reason = availability(table, ds)
        if status != "ok":
            mark_unavailable(ax, title, reason)
            continue
        for i, alg in enumerate(plotted):
            cell = table[(table["dataset"] == ds) & (table["algorithm"] == alg) & (table["status"] == "ok")].sort_values("k")
            if cell.empty:
                continue
            mean_sd_line(ax, cell["k"], cell["mean"], cell["std"], label=name(item, alg), lw=1.2, ms=4,
                         **style_for(alg, i))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k")
        ax.set_ylabel("k-means objective")
        ax.set_title(title)
        ax.legend(loc="best")
    fig.suptitle(item["title"], fontsize=10)
    save_figure(fig, stem)


def render_fig2_table(table: pd.DataFrame, item: dict, stem: str) -> None:
    """One row per dataset and k; one column per algorithm (`figure.columns`), headed by the paper's
    own method labels (`figure.labels`)."""
    opts = step_options(item, "figure")
    labels = opts["labels"]
    out = []
    for (ds, k), cell in table.groupby(["dataset", "k"], sort=True):
        row = {"dataset": ds, "d": cell["d"].iloc[0], "k": int(k)}
        for alg in opts["columns"]:
            r = cell[cell["algorithm"] == alg]
            if r.empty:
                row[labels[alg]] = ""
            elif r["status"].iloc[0] != "ok":
                row[labels[alg]] = "data unavailable"
            else:
                r = r.iloc[0]
                row[labels[alg]] = f"{r['mean']:.4g} ± {r['std']:.2g} (n={int(r['n'])})"
        out.append(row)
    df = pd.DataFrame(out)
    note = "ε = 1 for private algorithms; every private run spent exactly ε (see checks)."
    write_table(df, stem, title=item["title"], note=note)


def gmean_ratio(a: pd.Series, b: pd.Series) -> float:
    """Geometric mean of a/b over their common index (NaN if none)."""
    common = a.index.intersection(b.index)
    if len(common) == 0:
        return float("nan")
    return float(np.exp(np.mean(np.log(a[common].to_numpy() / b[common].to_numpy()))))


def check_fig2(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7's claims on Figure 2 (a–c), with the roles and thresholds of `claims`."""
    claims = step_options(item, "claims")
    ours, sulq, sa, base = claims["ours"], claims["sulq"], claims["sa"], claims["nonprivate"]
    n_ours, n_sulq, n_sa, n_base = (name(item, a) for a in (ours, sulq, sa, base))
    wanted = panel_datasets(table, item)
    datasets = [ds for ds in wanted if available(table, ds)]
    unavailable = [dataset_name(item, ds) for ds in wanted if not available(table, ds)]
    suffix = f" (not evaluable: {', '.join(unavailable)} unavailable)" if unavailable else ""
    checks = []
    # 1. ours beats SuLQ at every k on every available dataset
    viol, cells = [], 0
    for ds in datasets:
        o, s = means(table, ds, ours), means(table, ds, sulq)
        for k in o.index.intersection(s.index):
            cells += 1
            if not o[k] < s[k]:
                viol.append(f"{dataset_name(item, ds)} k={k}: {n_ours} {fmt(o[k])} vs {n_sulq} {fmt(s[k])}")
    checks.append(Check(f"{n_ours} has a lower mean k-means objective than {n_sulq} at every k on every "
                        "available dataset", (not viol) if cells else None,
                        (f"{cells} cells; " + ("; ".join(viol) if viol else "all hold")) + suffix))
    # 2. the gap grows with the dimension
    gaps = []
    for ds in datasets:
        d = table.loc[table["dataset"] == ds, "d"].dropna()
        g = gmean_ratio(means(table, ds, sulq), means(table, ds, ours))
        if len(d) and math.isfinite(g):
            gaps.append((float(d.iloc[0]), ds, g))
    gaps.sort()
    if len(gaps) >= 2:
        holds = all(b[2] > a[2] for a, b in zip(gaps, gaps[1:]))
        detail = ", ".join(f"{dataset_name(item, ds)} (d={int(d)}): {n_sulq}/{n_ours} = {g:.3g}" for d, ds, g in gaps)
    else:
        holds, detail = None, "needs at least two available datasets of different dimension"
    checks.append(Check(f"the gap between {n_ours} and {n_sulq} (geometric-mean cost ratio {n_sulq}/{n_ours} over k) "
                        "grows with the dimension", holds, detail + suffix))
    # 3. sample and aggregate is orders of magnitude worse
    factor = float(claims["orders_of_magnitude"])
    viol, cells, ratios = [], 0, []
    for ds in datasets:
        o, a = means(table, ds, ours), means(table, ds, sa)
        for k in o.index.intersection(a.index):
            cells += 1
            ratios.append(a[k] / o[k])
            if not a[k] >= factor * o[k]:
                viol.append(f"{dataset_name(item, ds)} k={k}: {n_sa}/{n_ours} = {a[k] / o[k]:.3g}")
    checks.append(Check(f"{n_sa} is orders of magnitude worse than {n_ours} (≥ {factor:g}× at every k)",
                        (not viol) if cells else None,
                        (f"{cells} cells, {n_sa}/{n_ours} from {fmt(min(ratios))} to {fmt(max(ratios))}; "
                         if ratios else "") + ("; ".join(viol[:6]) if viol else "all hold") + suffix))
    # 4. ours is competitive with non-private k-means++
    cr = float(claims["competitive_ratio"])
    viol, cells = [], 0
    for ds in datasets:
        o, b = means(table, ds, ours), means(table, ds, base)
        for k in o.index.intersection(b.index):
            cells += 1
            if not o[k] <= cr * b[k]:
                viol.append(f"{dataset_name(item, ds)} k={k}: {n_ours}/{n_base} = {o[k] / b[k]:.3g}")
    checks.append(Check(f"{n_ours} is competitive with the non-private {n_base} (≤ {cr:g}× its objective at every k)",
                        (not viol) if cells else None,
                        f"{cells} cells; " + ("; ".join(viol[:8]) if viol else "all hold") + suffix))
    checks.append(spent_check(table, [ours, sulq, sa], float(claims["spent_rel_tol"])))
    return checks
