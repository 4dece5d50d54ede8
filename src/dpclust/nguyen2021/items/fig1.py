"""Figure 1 of Nguyen, Chaturvedi & Xu (AAAI 2021): k-means objective (mean ± sd over the seeds) vs
k, one panel per dataset (synthetic 50k × 100 and MNIST 60k), for Algorithm 1, Balcan et al. (run
with NoisyAVG recovery, the group's params) and non-private Lloyd.

Checks: the paper's claims (§Experiments, "Results"): (1) ours has a lower objective than Balcan et
al. on both datasets at every k; (2) Lloyd's cost falls with k while both private costs plateau
(`claims.plateau_ratio`); plus (3) every private run spent exactly its (ε, δ) setting
(`claims.budget_rel_tol`).

Spec read: `names` (legends, titles, claim texts), `title` (render), `claims` (checks).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...aggregate import Check, fmt, tidy
from ...itemkit import dataset_name, name
from ...plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure, style_for

OURS, BALCAN, LLOYD = "nguyen2021.ours", "balcan2017.balcan", "nguyen2021.lloyd"
ORDER = [OURS, BALCAN, LLOYD]


def aggregate_fig1(records: list[dict], item: dict, ctx=None) -> pd.DataFrame:
    """The default tidy table plus, per (dataset, algorithm, k), the largest deviation of the
    spent (ε, δ) from the run's (ε, δ) setting (column `budget_error`, for the privacy check)."""
    table = tidy(records, item, ctx)
    rows = []
    for rec in records:
        if rec.get("status", "ok") != "ok" or rec.get("epsilon") is None:
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
    return table


def _cost(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["metric"] == "cost_kmeans"]


def render_fig1(table: pd.DataFrame, item: dict, stem: str) -> None:
    rows = _cost(table)
    datasets = list(dict.fromkeys(rows["dataset"]))  # table order
    fig, axes = panel_grid(max(len(datasets), 1), ncols=2, panel_size=(4.2, 3.2))
    for ax, dataset in zip(axes, datasets):
        cell = rows[rows["dataset"] == dataset]
        ok = cell[cell["status"] == "ok"]
        if ok.empty:
            reason = cell["reason"].dropna()
            mark_unavailable(ax, dataset_name(item, dataset), str(reason.iloc[0]) if len(reason) else "")
            continue
        for i, alg in enumerate(ORDER):
            r = ok[ok["algorithm"] == alg].sort_values("k")
            if r.empty:
                continue
            mean_sd_line(ax, r["k"], r["mean"], r["std"], label=name(item, alg), **style_for(alg, i))
        missing = [name(item, a) for a in ORDER if (cell["algorithm"] == a).any() and ok[ok["algorithm"] == a].empty]
        ax.set_title(dataset_name(item, dataset) + (f" ({', '.join(missing)}: unavailable)" if missing else ""))
        ax.set_xlabel("k")
        ax.set_ylabel("k-means objective")
        ax.set_xticks(sorted(ok["k"].unique()))
        ax.legend(loc="best")
    if not datasets:
        mark_unavailable(axes[0], item["title"], "no runs")
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def _pivot(rows: pd.DataFrame) -> pd.DataFrame:
    ok = rows[rows["status"] == "ok"]
    return ok.pivot_table(index=["dataset", "k"], columns="algorithm", values="mean")


def _ours_beats_balcan(item: dict, piv: pd.DataFrame, unavailable: list[str]) -> Check:
    """Claim (1): ours has the lower mean objective on every dataset at every k."""
    ours, balcan = name(item, OURS), name(item, BALCAN)
    claim = f"{ours} has a lower mean k-means objective than {balcan} on every dataset at every k"
    if not ({OURS, BALCAN} <= set(piv.columns) and piv[[OURS, BALCAN]].dropna().shape[0]):
        return Check(claim, None, f"needs runs of both algorithms ({balcan}'s algorithm or data missing)")
    both = piv[[OURS, BALCAN]].dropna()
    lose = both[both[OURS] >= both[BALCAN]]
    detail = (f"{len(both) - len(lose)}/{len(both)} (dataset, k) cells hold"
              + ("; fails at " + ", ".join(f"{dataset_name(item, d)} k={k} ({fmt(r[OURS])} vs {fmt(r[BALCAN])})"
                                          for (d, k), r in lose.iterrows()) if len(lose) else ""))
    if unavailable:
        detail += "; not evaluable on " + ", ".join(dataset_name(item, d) for d in unavailable) + " (data unavailable)"
    return Check(claim, bool(lose.empty) if not unavailable else (False if len(lose) else None), detail)


def _private_costs_plateau(item: dict, piv: pd.DataFrame, datasets: list[str]) -> Check:
    """Claim (2): Lloyd's cost falls with k while both private costs plateau, i.e. their relative
    drop from the smallest to the largest k is below `claims.plateau_ratio` × Lloyd's."""
    frac = float(item["claims"]["plateau_ratio"])
    claim = (f"{name(item, LLOYD)}: the cost falls with k, while both private costs plateau (their relative drop "
             f"from the smallest to the largest k is < {frac:g} × Lloyd's)")
    verdicts, details = [], []
    for dataset in datasets:
        if dataset not in piv.index.get_level_values(0):
            continue
        sub = piv.loc[dataset].sort_index()
        if LLOYD not in sub or sub[LLOYD].dropna().shape[0] < 2:
            continue
        ll = sub[LLOYD].dropna()
        falls = bool((np.diff(ll.to_numpy()) < 0).all())
        ll_drop = float(1.0 - ll.iloc[-1] / ll.iloc[0])
        parts = [f"{dataset_name(item, dataset)}: {name(item, LLOYD)} "
                 f"{'falls' if falls else 'does not fall monotonically'} (drop {ll_drop:.1%})"]
        ok = falls
        for alg in (OURS, BALCAN):
            if alg not in sub or sub[alg].dropna().shape[0] < 2:
                parts.append(f"{name(item, alg)} n/a")
                ok = None if ok is not False else False
                continue
            s = sub[alg].dropna()
            drop = 1.0 - s.iloc[-1] / s.iloc[0]
            plateau = bool(drop < frac * ll_drop)
            parts.append(f"{name(item, alg)} drop {drop:.1%} ({'plateau' if plateau else 'no plateau'})")
            if ok is not None:
                ok = ok and plateau
        verdicts.append(ok)
        details.append("; ".join(parts))
    holds = None
    if verdicts:
        holds = False if any(v is False for v in verdicts) else (True if all(v is True for v in verdicts) else None)
    return Check(claim, holds, " | ".join(details) if details else "not evaluable (need ≥ 2 values of k)")


def _spent_exactly(item: dict, rows: pd.DataFrame) -> list[Check]:
    """Claim (3): every private run spent exactly its (ε, δ) (`budget_error` from the aggregate)."""
    if "budget_error" not in rows:
        return []
    priv = rows[(rows["status"] == "ok") & rows["algorithm"].isin([OURS, BALCAN]) & rows["budget_error"].notna()]
    if not len(priv):
        return []
    tol = float(item["claims"]["budget_rel_tol"])
    worst = float(priv["budget_error"].max())
    settings = "; ".join(f"{dataset_name(item, d)}: ε = {', '.join(f'{e:g}' for e in sorted(cell['epsilon'].dropna().unique()))}"
                         + (f", δ = {cell['delta_setting'].iloc[0]:.3g}" if "delta_setting" in cell else "")
                         for d, cell in priv.groupby("dataset", sort=False))
    return [Check(f"Every private run spent exactly its (ε, δ) setting (relative error ≤ {tol:g})", worst <= tol,
                  f"largest relative deviation {worst:.3g} over {len(priv)} cells ({settings})")]


def check_fig1(table: pd.DataFrame, item: dict) -> list[Check]:
    rows = _cost(table)
    piv = _pivot(rows)
    datasets = list(dict.fromkeys(rows["dataset"]))
    ok_sets = set(rows.loc[rows["status"] == "ok", "dataset"])
    unavailable = sorted(set(rows.loc[rows["status"] != "ok", "dataset"]) - ok_sets)
    return [_ours_beats_balcan(item, piv, unavailable), _private_costs_plateau(item, piv, datasets),
            *_spent_exactly(item, rows)]
