"""Figure 1 of Nguyen, Chaturvedi & Xu (AAAI 2021): k-means objective (mean ± sd over the seeds) vs
k, one panel per dataset (synthetic 50k × 100 and MNIST 60k), for Algorithm 1, Balcan et al. (run
with NoisyAVG recovery, the group's params) and non-private Lloyd; beside them, dashed, Algorithm 1
with the authors' code's sampler (`nguyen2021.ours_authors`, NOT DP as published: labelled so from
its run records' guarantee, never compared as private, no ε shown).

Checks: the paper's claims (§Experiments, "Results"), decided by the claims engine
(`dpclust.pipeline.verdicts`, docs/VERDICTS.md: one-sided cells, Holm to fail), both unqualified in the
paper and so over every cell: (1) ours has a lower objective than Balcan et al. on both datasets at
every k (per cell Welch's interval of ours − Balcan, relative to Balcan's mean cost, < 0); (2) Lloyd's
cost falls with k while both private costs plateau: per dataset, Lloyd's cost at the largest k is below
its cost at the smallest (Welch, relative to the smallest k's cost, < 0) and each private method's
relative drop 1 − cost(k_max)/cost(k_min) is below `claims.plateau_ratio` × Lloyd's (the interval of
drop − ratio × Lloyd's drop from the two delta-method intervals at the same level: held when the
method's whole interval lies below the ratio times Lloyd's whole interval); a claim with one of the
figure's datasets missing is not evaluable (n of N datasets); plus (3), our bookkeeping, every DP run
spent exactly its (ε, δ) setting (`claims.budget_rel_tol`). A claim naming a method whose records are
not DP is refused ("claims compare DP methods only"). The evidence of a "does not hold" (the `why`)
gives the mean number of non-empty clusters of each private method (run diagnostics) and the authors'
variant's cost and clusters at the same cell.

Spec read: `names` (legends, titles, claim texts), `title` (render), `claims` (checks).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from dpclust.pipeline import declared, verdicts
from dpclust.pipeline.aggregate import Check, fmt, runs_frame
from dpclust.pipeline.cells import tidy
from dpclust.pipeline.claims import Interval, ratio_ci
from dpclust.pipeline.itemkit import (
    DP_OR_UNDECLARED,
    NOT_DP,
    dataset_name,
    labelled_name,
    name,
    over_datasets,
    require_dp,
    table_guarantee,
)
from dpclust.pipeline.plotting import (
    STATUS_TEXT,
    legend_entries,
    mark_unavailable,
    mean_sd_line,
    panel_grid,
    panel_status,
    save_figure,
    style_for,
)

OURS, BALCAN, LLOYD = "nguyen2021.ours", "balcan2017.balcan", "nguyen2021.lloyd"
AUTHORS = "nguyen2021.ours_authors"   # NOT DP as published: shown beside, never compared
ORDER = [OURS, BALCAN, LLOYD, AUTHORS]
#: run diagnostics (`info`) summarised per cell as extra metrics of the table
DIAGNOSTICS = ("nonempty_clusters", "empty_picks")


def aggregate(records: list[dict], item: dict, ctx=None) -> pd.DataFrame:
    """The default tidy table plus, per (dataset, algorithm, k): the largest deviation of the spent
    (ε, δ) from the run's (ε, δ) setting (column `budget_error`, DP runs only: a variant that is not
    DP reports no ε), the algorithm's declared guarantee (column `guarantee`, from the records) and
    the mean/sd/n of the diagnostics `DIAGNOSTICS` as metrics."""
    table = tidy(records, item, ctx)
    kinds = {}
    for rec in records:
        kind = (rec.get("guarantee") or {}).get("kind")
        kinds.setdefault(rec["algorithm"], kind or ("non-private" if rec.get("epsilon") is None else ""))
    runs = runs_frame(records, info_keys=DIAGNOSTICS)
    if not runs.empty:
        ok = runs[runs["status"] == "ok"]
        extra = []
        for metric in DIAGNOSTICS:
            if metric not in ok:  # no run reported it (e.g. every record unavailable offline)
                continue
            vals = ok[["group", "dataset", "algorithm", "k", "epsilon", metric]].copy()
            vals[metric] = pd.to_numeric(vals[metric], errors="coerce")
            vals = vals.dropna(subset=[metric])
            if vals.empty:
                continue
            vals["epsilon"] = pd.to_numeric(vals["epsilon"], errors="coerce")
            st = vals.groupby(["group", "dataset", "algorithm", "k", "epsilon"], dropna=False)[metric].agg(
                ["mean", "std", "min", "max", "count"]).reset_index().rename(columns={"count": "n"})
            st["metric"], st["status"], st["reason"] = metric, "ok", ""
            extra.append(st)
        if extra:
            table = pd.concat([table, *extra], ignore_index=True)
    rows = []
    for rec in records:
        if rec.get("status", "ok") != "ok" or rec.get("epsilon") is None or kinds.get(rec["algorithm"]) == NOT_DP:
            continue
        eps, delta = float(rec["epsilon"]), float(rec.get("delta") or 0.0)
        for run in rec["runs"]:
            err_e = abs(float(run["epsilon_spent"]) - eps) / eps
            err_d = abs(float(run["delta_spent"]) - delta) / delta if delta > 0 else float(run["delta_spent"])
            rows.append({"dataset": rec["dataset"], "algorithm": rec["algorithm"], "k": rec["k"],
                         "budget_error": max(err_e, err_d), "delta_setting": delta})
    if rows:
        be = pd.DataFrame(rows).groupby(["dataset", "algorithm", "k"], as_index=False).agg(
            budget_error=("budget_error", "max"), delta_setting=("delta_setting", "first"))
        table = table.merge(be, on=["dataset", "algorithm", "k"], how="left")
    else:
        table["budget_error"] = np.nan
        table["delta_setting"] = np.nan
    table["guarantee"] = table["algorithm"].map(kinds).fillna("")
    return table


def _cost(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["metric"] == "cost_kmeans"]


def render(table: pd.DataFrame, item: dict, stem: str) -> None:
    rows = _cost(table)
    datasets = list(dict.fromkeys(rows["dataset"]))  # table order
    fig, axes = panel_grid(max(len(datasets), 1), ncols=2, panel_size=(4.2, 3.2))
    for ax, dataset in zip(axes, datasets):
        cell = rows[rows["dataset"] == dataset]
        ok = cell[cell["status"] == "ok"]
        if ok.empty:
            status, reason = panel_status(cell)
            mark_unavailable(ax, dataset_name(item, dataset), reason, status)
            continue
        for i, alg in enumerate(ORDER):
            r = ok[ok["algorithm"] == alg].sort_values("k")
            if r.empty:
                continue
            style = dict(style_for(alg, i))
            if table_guarantee(table, alg) == NOT_DP:
                style["linestyle"] = "--"
            mean_sd_line(ax, r["k"], r["mean"], r["std"], label=labelled_name(item, table, alg), **style)
        missing = [f"{name(item, a)}: {STATUS_TEXT.get(panel_status(cell[cell['algorithm'] == a])[0], 'unavailable')}"
                   for a in ORDER if (cell["algorithm"] == a).any() and ok[ok["algorithm"] == a].empty]
        ax.set_title(dataset_name(item, dataset) + (f" ({'; '.join(missing)})" if missing else ""))
        ax.set_xlabel("k")
        ax.set_ylabel("k-means objective")
        ax.set_xticks(sorted(ok["k"].unique()))
    handles, labels = legend_entries(axes)
    if handles:  # one legend below the panels, never over the data
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8, frameon=False)
    if not datasets:
        mark_unavailable(axes[0], item["title"], status="no_runs")
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def _cells(rows: pd.DataFrame, dataset: str, alg: str) -> dict:
    """{k: (mean, sd, n)} of the successful cells of `alg` on `dataset`."""
    part = rows[(rows["dataset"] == dataset) & (rows["algorithm"] == alg) & (rows["status"] == "ok")]
    return {int(r.k): (float(r.mean), float(0.0 if pd.isna(r.std) else r.std), int(r.n)) for r in part.itertuples()}


def _diag(table: pd.DataFrame, dataset: str, alg: str, k: int, metric: str):
    r = table[(table["metric"] == metric) & (table["dataset"] == dataset) & (table["algorithm"] == alg)
              & (table["k"] == k) & (table["status"] == "ok")]
    return float(r["mean"].iloc[0]) if len(r) else None


def _evidence(table: pd.DataFrame, item: dict, dataset: str, k: int) -> str:
    """At one cell: each private method's cost and non-empty clusters, and the authors' variant's."""
    rows = _cost(table)
    parts = []
    for alg in (OURS, BALCAN, AUTHORS):
        c = _cells(rows, dataset, alg).get(k)
        if c is None:
            continue
        text = f"{labelled_name(item, table, alg)} {fmt(c[0])}"
        ne = _diag(table, dataset, alg, k, "nonempty_clusters")
        if ne is not None:
            text += f" ({ne:.3g}/{k} non-empty clusters"
            ep = _diag(table, dataset, alg, k, "empty_picks")
            text += f", {ep:.3g} candidate picks covering nothing)" if ep is not None else ")"
        parts.append(text)
    return f"{dataset_name(item, dataset)} k={k}: " + ", ".join(parts)


def _open_cell(label: str) -> verdicts.Cell:
    """A cell without data: never decided."""
    return verdicts.Cell(label, lambda level: Interval(float("nan"), -math.inf, math.inf))


def _source(table: pd.DataFrame, item: dict, datasets: list[str], unavailable: list[str]) -> declared.Source:
    """The cells dataset × k of the declared claims (`dpclust.pipeline.declared`): (mean, sd, n) of the
    cost; a claim naming a method that is not DP refused; a failure explained by the evidence of its first
    four failing cells (`_evidence`). Its datasets: those where both private methods ran a common k, and
    the unavailable ones (not evaluable, n of N)."""
    rows = _cost(table)
    covered = sorted(d for d in datasets if set(_cells(rows, d, OURS)) & set(_cells(rows, d, BALCAN)))
    detail = "Δ = (mean(ours) − mean(Balcan)) / mean(Balcan), Welch"
    by_status: dict[str, list[str]] = {}
    for d in unavailable:
        by_status.setdefault(panel_status(rows[rows["dataset"] == d])[0], []).append(dataset_name(item, d))
    for status, names in by_status.items():
        detail += f"; not evaluable on {', '.join(names)} ({STATUS_TEXT.get(status, status)})"

    def explain(failing, text):
        return f"{text}; " + "; ".join(_evidence(table, item, f.dataset, f.point) for f in failing[:4]) \
            if failing else ""

    return declared.Source(
        available=datasets, planned=[*covered, *unavailable], missing={d: "no runs" for d in unavailable},
        points=sorted(set(rows.loc[rows["status"] == "ok", "k"].dropna().astype(int))),
        stats=lambda ds, alg, k: _cells(rows, ds, alg).get(k),
        names={d: dataset_name(item, d) for d in rows["dataset"]},
        cell_text=detail, cell_label=lambda ds, k: f"{dataset_name(item, ds)} k={k}",
        refuse=lambda compare, against, claim: require_dp(table, item, [*compare, *against], claim), explain=explain,
        axis=("k",))


def _rel_drop(ci: Interval) -> tuple[float, float, float]:
    """(estimate, low, high) of 1 − ratio from the ratio's interval."""
    return 1.0 - ci.estimate, 1.0 - ci.high, 1.0 - ci.low


def _plateau_cell(label: str, alg: tuple, alg0: tuple, ll: tuple, ll0: tuple, frac: float) -> verdicts.Cell:
    """drop_alg − frac · drop_Lloyd, the drops 1 − cost(k_max)/cost(k_min) from their delta-method
    intervals at the same level (the interval's ends pair the method's ends with Lloyd's opposite ones)."""

    def interval(level: float) -> Interval:
        d_a = _rel_drop(ratio_ci(alg, alg0, level))
        d_ll = _rel_drop(ratio_ci(ll, ll0, level))
        return Interval(d_a[0] - frac * d_ll[0], d_a[1] - frac * d_ll[2], d_a[2] - frac * d_ll[1])

    return verdicts.Cell(label, interval)


def _private_costs_plateau(table: pd.DataFrame, item: dict, datasets: list[str], unavailable: list[str]) -> Check:
    """Claim (2): Lloyd's cost falls with k while both private costs plateau (see module docstring).
    "Similar to the experimental results in Balcan et al. (2017), increasing the number of centers results
    in a decrease in the cost in the non-private algorithm but did not result in a concomitant decrease in
    the cost of the private algorithms." Unqualified: every cell."""
    frac = float(item["claims"]["plateau_ratio"])
    claim = (f"{name(item, LLOYD)}: the cost falls with k, while both private costs plateau (their relative drop "
             f"from the smallest to the largest k is < {frac:g} × Lloyd's)")
    refused = require_dp(table, item, [OURS, BALCAN], claim)
    if refused:
        return refused
    rows = _cost(table)
    cells, details, covered = [], [], []
    for dataset in datasets:
        ll = _cells(rows, dataset, LLOYD)
        if len(ll) < 2:
            continue
        covered.append(dataset)
        k0, k1 = min(ll), max(ll)
        ds = dataset_name(item, dataset)
        # Lloyd falls: Welch's interval of cost(k_max) − cost(k_min), relative to cost(k_min)
        # each cell names its runs (the methods at k_min and k_max): a replication look settles it alone
        falls = dataclasses.replace(
            verdicts.relative_cell(f"{ds}: {name(item, LLOYD)} cost(k={k1}) < cost(k={k0})", ll[k1], ll[k0]),
            key=declared.run_key(dataset, {"k": [k0, k1]}, LLOYD, []))
        cells.append(falls)
        with verdicts.deciding(claim):      # a cell an earlier look settled keeps that look's verdict
            verdict = verdicts.judge([falls], verdicts.Directional("<", 0.0)).result
        verb = {True: "falls", False: "does not fall", None: "may fall (interval straddles 0)"}[verdict]
        d_ll = _rel_drop(ratio_ci(ll[k1], ll[k0]))
        parts = [f"{ds}: {name(item, LLOYD)} {verb}, drop {d_ll[0]:.1%} [{d_ll[1]:.1%}, {d_ll[2]:.1%}]"]
        for alg in (OURS, BALCAN):
            c = _cells(rows, dataset, alg)
            if k0 not in c or k1 not in c:
                cells.append(_open_cell(f"{ds}: {name(item, alg)} n/a"))
                continue
            d_a = _rel_drop(ratio_ci(c[k1], c[k0]))
            rel = d_a[0] / d_ll[0] if d_ll[0] else float("nan")
            cells.append(dataclasses.replace(
                _plateau_cell(f"{ds}: {name(item, alg)} drop − {frac:g} × Lloyd's (drop/Lloyd's = {rel:.3g})",
                              c[k1], c[k0], ll[k1], ll[k0], frac),
                key=declared.run_key(dataset, {"k": [k0, k1]}, alg, [LLOYD])))
            parts.append(f"{name(item, alg)} drop {d_a[0]:.1%} [{d_a[1]:.1%}, {d_a[2]:.1%}]")
        details.append(", ".join(parts))
    detail = ("relative drops 1 − cost(k_max)/cost(k_min), 95 % delta-method intervals; " + " | ".join(details)
              if details else "not evaluable (need ≥ 2 values of k)")
    why = "genuine: " + " | ".join(details)
    test = verdicts.Directional("<", 0.0)
    chk = verdicts.check(claim, cells, test, "every", why=why if cells else "", detail=detail)
    return over_datasets(chk, covered, [*covered, *unavailable], item)


def _spent_exactly(table: pd.DataFrame, item: dict, rows: pd.DataFrame) -> list[Check]:
    """Claim (3), our bookkeeping: every DP run spent exactly its (ε, δ) (`budget_error` from the
    aggregate), decided on the largest deviation (exact); a variant that is not DP reports no ε and is
    left out."""
    if "budget_error" not in rows:
        return []
    dp = [a for a in (OURS, BALCAN) if table_guarantee(table, a) in DP_OR_UNDECLARED]
    priv = rows[(rows["status"] == "ok") & rows["algorithm"].isin(dp) & rows["budget_error"].notna()]
    if not len(priv):
        return []
    tol = float(item["claims"]["budget_rel_tol"])
    worst = float(priv["budget_error"].max())
    settings = "; ".join(f"{dataset_name(item, d)}: ε = "
                         f"{', '.join(f'{e:g}' for e in sorted(cell['epsilon'].dropna().unique()))}"
                         + (f", δ = {cell['delta_setting'].iloc[0]:.3g}" if "delta_setting" in cell else "")
                         for d, cell in priv.groupby("dataset", sort=False))
    return [verdicts.exact_spend(f"Every private run spent exactly its (ε, δ) setting (relative error ≤ {tol:g})",
                                 [("largest relative deviation", worst)], tol,
                                 detail=f"largest relative deviation {worst:.3g} over {len(priv)} cells ({settings})")]


def _datasets(table: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(the datasets with successful runs in table order, the others sorted)."""
    rows = _cost(table)
    ok_sets = set(rows.loc[rows["status"] == "ok", "dataset"])
    return ([d for d in dict.fromkeys(rows["dataset"]) if d in ok_sets],
            sorted(set(rows.loc[rows["status"] != "ok", "dataset"]) - ok_sets))


#: the claim no declaration expresses (config/papers/nguyen2021.yaml, fig1 `claims.declared`)
HOOKS = {"private_costs_plateau": lambda table, item: [_private_costs_plateau(table, item, *_datasets(table))]}


def checks(table: pd.DataFrame, item: dict) -> list[Check]:
    """The declared claims of "Results" (config/papers/nguyen2021.yaml, fig1 `claims.declared`), then our
    bookkeeping of the (ε, δ) spent."""
    src = _source(table, item, *_datasets(table))
    return [*declared.decide_all(table, item, src, HOOKS), *_spent_exactly(table, item, _cost(table))]
