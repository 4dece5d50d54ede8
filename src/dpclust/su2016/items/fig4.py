"""Figure 4 of Su et al. (2016): convergence of non-private Lloyd (over the 30 sphere-packing
sets) and of Gene, PGkM's genetic algorithm without privacy (§5.3).

Aggregate: mean NICV after each iteration per (dataset, method); `method` is the paper's label of
the algorithm (`table.labels`); a Lloyd run that converged early keeps its last value up to the
longest trace. The table has no algorithm column, so render and checks find an algorithm's rows
through the same map (`figure.methods`, `claims.methods`: algorithm → the table's label) and name it
from the display-name table. Checks: §5.3's "Lloyd improves faster in the first iterations" (after
`claims.early_iterations`) and "Gene eventually overtakes Lloyd".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import availability, dataset_name, name
from ...plotting import panel_grid, save_figure, style_for
from .common import available, mark_panel, method_label, plain_bools, tight

LLOYD, GENE = "su2016.lloyd", "su2016.gene"
COLUMNS = ["dataset", "k", "method", "iteration", "nicv_mean", "n_runs", "status", "reason"]


def aggregate_fig4(records, item, ctx=None) -> pd.DataFrame:
    """Mean NICV after each iteration for Lloyd (over the 30 sets) and Gene (over runs)."""
    labels = (item.get("table") or {}).get("labels") or {}
    rows = []
    run_id = 0
    for rec in records:
        method = method_label(labels, rec.get("group", ""), rec["algorithm"])
        if rec.get("status") != "ok":
            rows.append({"dataset": rec["dataset"], "k": rec["k"], "method": method, "iteration": np.nan,
                         "nicv_mean": np.nan, "n_runs": 0, "status": rec.get("status"), "reason": rec.get("reason", "")})
            continue
        traces = [run["info"].get("trace_nicv") or [] for run in rec["runs"]]
        for tr in traces:
            run_id += 1
            for i, v in enumerate(tr, start=1):
                rows.append({"dataset": rec["dataset"], "k": rec["k"], "method": method, "iteration": i,
                             "nicv": v, "status": "ok", "reason": "", "run": run_id})
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    bad = df[df["status"] != "ok"].drop_duplicates(subset=["dataset", "method"])
    ok = df[df["status"] == "ok"]
    out = [bad[COLUMNS]] if not bad.empty else []
    if not ok.empty:
        # Lloyd stops when converged: carry each run's last value forward to the longest trace
        full = []
        for (ds, k, method), part in ok.groupby(["dataset", "k", "method"]):
            last = part.groupby("run")["iteration"].max()
            horizon = int(last.max())
            for run, sub in part.groupby("run"):
                vals = sub.sort_values("iteration")["nicv"].to_numpy()
                vals = np.concatenate([vals, np.full(horizon - vals.size, vals[-1])])
                full.append(pd.DataFrame({"dataset": ds, "k": k, "method": method,
                                          "iteration": np.arange(1, horizon + 1), "nicv": vals}))
        full = pd.concat(full)
        stats = (full.groupby(["dataset", "k", "method", "iteration"])["nicv"]
                 .agg(nicv_mean="mean", n_runs="size").reset_index())
        stats["status"], stats["reason"] = "ok", ""
        out.append(stats)
    return pd.concat(out, ignore_index=True).sort_values(["dataset", "method", "iteration"]).reset_index(drop=True)


def render_fig4(table, item, stem):
    methods = item["figure"]["methods"]
    panels = item["options"]["panels"]
    fig, axes = panel_grid(len(panels), ncols=3)
    for ax, ds in zip(axes, panels):
        title = dataset_name(item, ds)
        status, reason = availability(table, ds)
        if status != "ok":
            mark_panel(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        for i, (alg, label) in enumerate(methods.items()):
            line = part[part["method"] == label].sort_values("iteration")
            if not line.empty:
                ax.plot(line["iteration"], line["nicv_mean"], label=name(item, alg), **style_for(alg, i))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("iterations")
        ax.set_ylabel("NICV")
        ax.legend()
    tight(fig)
    save_figure(fig, stem)


def _nicv_after(part, label: str, iteration) -> float:
    """Mean NICV of the method labelled `label` after `iteration` iterations (its last value
    before, if its trace is shorter); NaN without rows."""
    s = part[(part["method"] == label) & (part["iteration"] <= iteration)].sort_values("iteration")
    return float(s["nicv_mean"].iloc[-1]) if not s.empty else float("nan")


@plain_bools
def check_fig4(table, item) -> list[Check]:
    claims = item["claims"]
    methods = claims["methods"]
    early = int(claims["early_iterations"])
    n_lloyd, n_gene = name(item, LLOYD), name(item, GENE)
    out = []
    for ds in available(table, item["options"]["panels"]):
        title = dataset_name(item, ds)
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        l_early, g_early = _nicv_after(part, methods[LLOYD], early), _nicv_after(part, methods[GENE], early)
        out.append(Check(f"{title}: {n_lloyd} improves faster than {n_gene} in the first iterations (§5.3)",
                         None if (l_early != l_early or g_early != g_early) else l_early < g_early,
                         f"NICV after {early} iterations: {n_lloyd} {fmt(l_early)}, {n_gene} {fmt(g_early)}"))
        gl = part[part["method"] == methods[GENE]]["iteration"].max()
        if gl == gl:
            lf, gf = _nicv_after(part, methods[LLOYD], gl), _nicv_after(part, methods[GENE], gl)
            out.append(Check(f"{title}: {n_gene} eventually overtakes {n_lloyd} (§5.3 'Generally')",
                             None if (lf != lf or gf != gf) else gf <= lf,
                             f"after {int(gl)} iterations: {n_gene} {fmt(gf)}, {n_lloyd} {fmt(lf)}"))
    return out or [Check("Figure 4 claims", None, "no dataset available")]
