"""Items of Nguyen, Chaturvedi & Xu (AAAI 2021): Figure 1 and Table 1.

* Figure 1: k-means objective (mean ± sd over the seeds) vs k, one panel per dataset (synthetic
  50k × 100 and MNIST 60k), for Algorithm 1, Balcan et al. with NoisyAVG recovery and non-private
  Lloyd. Checks: the paper's claims (§Experiments, "Results"): (1) ours has a lower objective than
  Balcan et al. on both datasets at every k; (2) Lloyd's cost falls with k while both private costs
  plateau; plus (3) every private run spent exactly (ε, δ) = (1, n^-1.5).
* Table 1: the theory comparison, static (rendered from the config).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..aggregate import Check, fmt, tidy
from ..plotting import mark_unavailable, panel_grid, save_figure, style_for, write_table

OURS, BALCAN, LLOYD = "nguyen2021.ours", "balcan2017.balcan", "nguyen2021.lloyd"
ORDER = [OURS, BALCAN, LLOYD]


def _names(item: dict) -> dict:
    return {**{a: a for a in ORDER}, **((item.get("options") or {}).get("names") or {})}


# ---------------------------------------------------------------------------------------------
# Figure 1
# ---------------------------------------------------------------------------------------------
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
    names = _names(item)
    datasets = list(dict.fromkeys(rows["dataset"]))  # config order
    fig, axes = panel_grid(max(len(datasets), 1), ncols=2, panel_size=(4.2, 3.2))
    for ax, dataset in zip(axes, datasets):
        cell = rows[rows["dataset"] == dataset]
        ok = cell[cell["status"] == "ok"]
        if ok.empty:
            reason = cell["reason"].dropna()
            mark_unavailable(ax, dataset, str(reason.iloc[0]) if len(reason) else "")
            continue
        for i, alg in enumerate(ORDER):
            r = ok[ok["algorithm"] == alg].sort_values("k")
            if r.empty:
                continue
            ax.errorbar(r["k"], r["mean"], yerr=r["std"].fillna(0.0), label=names[alg], capsize=3,
                        **style_for(alg, i))
        missing = [names[a] for a in ORDER if (cell["algorithm"] == a).any() and ok[ok["algorithm"] == a].empty]
        title = dataset + (f" ({', '.join(missing)}: unavailable)" if missing else "")
        ax.set_title(title)
        ax.set_xlabel("k")
        ax.set_ylabel("k-means objective")
        ax.set_xticks(sorted(ok["k"].unique()))
        ax.legend(loc="best")
    if not datasets:
        mark_unavailable(axes[0], "Figure 1", "no runs")
    fig.suptitle(item["title"])
    save_figure(fig, stem)


def _pivot(rows: pd.DataFrame) -> pd.DataFrame:
    ok = rows[rows["status"] == "ok"]
    return ok.pivot_table(index=["dataset", "k"], columns="algorithm", values="mean")


def check_fig1(table: pd.DataFrame, item: dict) -> list[Check]:
    rows = _cost(table)
    names = _names(item)
    piv = _pivot(rows)
    checks = []
    datasets = list(dict.fromkeys(rows["dataset"]))
    unavailable = sorted(set(rows.loc[rows["status"] != "ok", "dataset"]) - set(rows.loc[rows["status"] == "ok", "dataset"]))

    # (1) ours beats Balcan et al. on both datasets at every k
    claim = "Ours has a lower mean k-means objective than Balcan et al. (NoisyAVG) on every dataset at every k"
    if {OURS, BALCAN} <= set(piv.columns) and piv[[OURS, BALCAN]].dropna().shape[0]:
        both = piv[[OURS, BALCAN]].dropna()
        lose = both[both[OURS] >= both[BALCAN]]
        detail = (f"{len(both) - len(lose)}/{len(both)} (dataset, k) cells hold"
                  + ("; fails at " + ", ".join(f"{d} k={k} ({fmt(r[OURS])} vs {fmt(r[BALCAN])})"
                                              for (d, k), r in lose.iterrows()) if len(lose) else ""))
        if unavailable:
            detail += "; not evaluable on " + ", ".join(unavailable) + " (data unavailable)"
        checks.append(Check(claim, bool(lose.empty) if not unavailable else (False if len(lose) else None), detail))
    else:
        checks.append(Check(claim, None, "needs runs of both algorithms (Balcan et al.'s algorithm or data missing)"))

    # (2) Lloyd's cost falls with k while both private costs plateau
    frac = float((item.get("options") or {}).get("plateau_ratio", 0.5))
    claim = ("Lloyd's cost falls with k, while both private costs plateau (their relative drop from the "
             f"smallest to the largest k is < {frac:g} × Lloyd's)")
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
        parts = [f"{dataset}: Lloyd {'falls' if falls else 'does not fall monotonically'} (drop {ll_drop:.1%})"]
        ok = falls
        for alg in (OURS, BALCAN):
            if alg not in sub or sub[alg].dropna().shape[0] < 2:
                parts.append(f"{names[alg]} n/a")
                ok = None if ok is not False else False
                continue
            s = sub[alg].dropna()
            drop = 1.0 - s.iloc[-1] / s.iloc[0]
            plateau = bool(drop < frac * ll_drop)
            parts.append(f"{names[alg]} drop {drop:.1%} ({'plateau' if plateau else 'no plateau'})")
            if ok is not None:
                ok = ok and plateau
        verdicts.append(ok)
        details.append("; ".join(parts))
    holds = None
    if verdicts:
        holds = False if any(v is False for v in verdicts) else (True if all(v is True for v in verdicts) else None)
    checks.append(Check(claim, holds, " | ".join(details) if details else "not evaluable (need ≥ 2 values of k)"))

    # (3) privacy bookkeeping
    if "budget_error" in rows:
        priv = rows[(rows["status"] == "ok") & rows["algorithm"].isin([OURS, BALCAN]) & rows["budget_error"].notna()]
        if len(priv):
            worst = float(priv["budget_error"].max())
            checks.append(Check("Every private run spent exactly (ε, δ) = (1, n^-1.5) (relative error ≤ 1e-9)",
                                worst <= 1e-9, f"largest relative deviation {worst:.3g} over {len(priv)} cells"))
    return checks


# ---------------------------------------------------------------------------------------------
# Table 1 (static)
# ---------------------------------------------------------------------------------------------
def aggregate_table1(records: list[dict], item: dict, ctx=None) -> pd.DataFrame:
    rows = item.get("static") or []
    if not rows or any(len(r) != 3 for r in rows):
        from ..api import DPClustError

        raise DPClustError("nguyen2021 table1: `static` must be a list of [reference, mult., add.] rows")
    return pd.DataFrame(rows, columns=["Reference", "Mult. Approx.", "Add. Approx."])


def render_table1(table: pd.DataFrame, item: dict, stem: str) -> None:
    write_table(table, stem, title=item["title"],
                note="Log terms, the common Δ² factor of the additive error and the dependence on the privacy "
                     "parameters are omitted; δ_p = 1/n^1.5 (Nguyen et al. 2021, Table 1 caption).")
