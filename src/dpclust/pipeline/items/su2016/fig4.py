"""Figure 4 of Su et al. (2016): convergence of non-private Lloyd (over the 30 sphere-packing
sets) and of Gene, PGkM's genetic algorithm without privacy (§5.3).

Aggregate: mean NICV after each iteration per (dataset, method); `method` is the paper's label of
the algorithm (`table.labels`); a Lloyd run that converged early keeps its last value up to the
longest trace; `nicv_sd` is the sd over runs (Lloyd: over the 30 sets). Gene's runs may be grouped
by a swept setting (`group`: the `mutation_decay` sensitivity runs, one group per value); the main
curve is the group named in `figure.main_group` / `claims.main_group`. The table has no algorithm
column, so render and checks find an algorithm's rows through the same map (`figure.methods`,
`claims.methods`: algorithm → the table's label) and name it from the display-name table.

Checks (Welch intervals over runs, relative to the comparator's mean NICV, decided by the claims
engine over the datasets): §5.3's "Lloyd improves faster in the first iterations" (NICV after
`claims.early_iterations`; unqualified: every dataset) and "Generally, Gene overtakes Lloyd as the
number of iterations increases" ("generally": more than half of the decided datasets) — decided at
the figure's horizon (`claims.horizon`, MISSING→REC 100 iterations, the x-range of Figure 4), never
at a shorter run: a Gene trace shorter than the horizon makes the claim not evaluable. The
sensitivity of that claim to Gene's mutation decay (MISSING in the paper) is a separate table row
per decay value (`sensitivity` rows, same horizon).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.items.su2016.common import (
    available,
    claim_check,
    coverage,
    mark_panel,
    method_label,
    no_cell,
    over_datasets,
    plain_bools,
    relative_cell,
    tight,
)
from dpclust.pipeline.plotting import mean_sd_line, panel_grid, save_figure, style_for
from dpclust.pipeline.verdicts import Directional

LLOYD, GENE = "su2016.lloyd", "su2016.gene"
COLUMNS = ["group", "dataset", "k", "method", "decay", "iteration", "nicv_mean", "nicv_sd", "n_runs", "status",
           "reason"]


def aggregate_fig4(records, item, ctx=None) -> pd.DataFrame:
    """Mean NICV after each iteration for Lloyd (over the 30 sets) and Gene (over runs)."""
    labels = (item.get("table") or {}).get("labels") or {}
    rows = []
    decays = {}
    run_id = 0
    for rec in records:
        method = method_label(labels, rec.get("group", ""), rec["algorithm"])
        decay = (rec.get("settings") or {}).get("mutation_decay")
        decay = np.nan if decay is None else float(decay)
        if rec.get("status") != "ok":
            rows.append({"group": rec.get("group", ""), "dataset": rec["dataset"], "k": rec["k"], "method": method,
                         "decay": decay, "iteration": np.nan, "nicv_mean": np.nan, "nicv_sd": np.nan, "n_runs": 0,
                         "status": rec.get("status"), "reason": rec.get("reason", "")})
            continue
        traces = [run["info"].get("trace_nicv") or [] for run in rec["runs"]]
        decays[(rec.get("group", ""), rec["dataset"], method)] = decay
        for tr in traces:
            run_id += 1
            for i, v in enumerate(tr, start=1):
                rows.append({"group": rec.get("group", ""), "dataset": rec["dataset"], "k": rec["k"], "method": method,
                             "iteration": i, "nicv": v, "status": "ok", "reason": "", "run": run_id})
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    bad = df[df["status"] != "ok"].drop_duplicates(subset=["group", "dataset", "method"])
    ok = df[df["status"] == "ok"]
    out = [bad[COLUMNS]] if not bad.empty else []
    if not ok.empty:
        # Lloyd stops when converged: carry each run's last value forward to the longest trace
        full = []
        for (group, ds, k, method), part in ok.groupby(["group", "dataset", "k", "method"]):
            last = part.groupby("run")["iteration"].max()
            horizon = int(last.max())
            for run, sub in part.groupby("run"):
                vals = sub.sort_values("iteration")["nicv"].to_numpy()
                vals = np.concatenate([vals, np.full(horizon - vals.size, vals[-1])])
                full.append(pd.DataFrame({"group": group, "dataset": ds, "k": k, "method": method,
                                          "iteration": np.arange(1, horizon + 1), "nicv": vals}))
        full = pd.concat(full)
        stats = (full.groupby(["group", "dataset", "k", "method", "iteration"])["nicv"]
                 .agg(nicv_mean="mean", nicv_sd="std", n_runs="size").reset_index())
        stats["status"], stats["reason"] = "ok", ""
        stats["decay"] = [decays.get(key, np.nan) for key in zip(stats["group"], stats["dataset"], stats["method"])]
        out.append(stats)
    return (pd.concat(out, ignore_index=True).reindex(columns=COLUMNS)
            .sort_values(["dataset", "method", "group", "iteration"]).reset_index(drop=True))


def _main(part, methods: dict, main_group: str, alg: str):
    """Rows of one method: Lloyd's (one group) or Gene's main group (the declared decay)."""
    rows = part[part["method"] == methods[alg]]
    if alg == GENE and main_group:
        rows = rows[rows["group"] == main_group]
    return rows.sort_values("iteration")


def render_fig4(table, item, stem):
    figure = item["figure"]
    methods, main_group = figure["methods"], figure.get("main_group", "")
    panels = item["options"]["panels"]
    sens = [g for g in figure.get("sensitivity") or [] if g in set(table["group"])]
    fig, axes = panel_grid(len(panels) + (1 if len(sens) > 1 else 0), ncols=3)
    if len(sens) > 1:
        _sensitivity_panel(axes[len(panels)], table, item, sens)
    handles, labels = [], []
    for ax, ds in zip(axes, panels):
        title = dataset_name(item, ds)
        status, reason = availability(table, ds)
        if status != "ok":
            mark_panel(ax, title, status, reason)
            continue
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        for i, alg in enumerate(methods):
            line = _main(part, methods, main_group, alg)
            if not line.empty:
                mean_sd_line(ax, line["iteration"], line["nicv_mean"], line["nicv_sd"],
                             label=f"{name(item, alg)} (non-private)", band=True, **style_for(alg, i))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("iterations")
        ax.set_ylabel("NICV")
        if not handles:
            handles, labels = ax.get_legend_handles_labels()
    tight(fig)
    if handles:   # one legend, in the grid's free bottom-right space (never over a curve)
        fig.legend(handles, labels, loc="center", bbox_to_anchor=(0.67, 0.17), fontsize=9)
    save_figure(fig, stem)


def _sensitivity_panel(ax, table, item, groups):
    """Gene's NICV after the last generation over Lloyd's (converged, mean over the 30 sets), per
    mutation decay (each run group's setting, the table's `decay`) and dataset."""
    figure = item["figure"]
    methods = figure["methods"]
    ok = table[table["status"] == "ok"]
    for i, ds in enumerate(sorted(set(ok["dataset"]))):
        part = ok[ok["dataset"] == ds]
        lloyd = part[part["method"] == methods[LLOYD]]
        if lloyd.empty:
            continue
        l_last = float(lloyd.sort_values("iteration")["nicv_mean"].iloc[-1])
        xs, ys = [], []
        for g in groups:
            gene = part[(part["method"] == methods[GENE]) & (part["group"] == g)]
            if gene.empty:
                continue
            xs.append(float(gene["decay"].iloc[0]))
            ys.append(float(gene.sort_values("iteration")["nicv_mean"].iloc[-1]) / l_last)
        order = np.argsort(xs)
        ax.plot(np.asarray(xs)[order], np.asarray(ys)[order], marker="o", label=dataset_name(item, ds), color=f"C{i}")
    ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
    ax.set_title("Gene / Lloyd after the last iteration")
    ax.set_xlabel("mutation decay per generation")
    ax.set_ylabel("NICV ratio (< 1: Gene ahead)")
    ax.legend(fontsize=7, loc="upper right")


def _after(part, methods, main_group, alg, iteration):
    """(mean, sd, n) of a method after `iteration` iterations (its last value before, if its trace
    is shorter) and the length of its trace; None without rows."""
    s = _main(part, methods, main_group, alg)
    if s.empty:
        return None, 0
    upto = s[s["iteration"] <= iteration]
    if upto.empty:
        return None, int(s["iteration"].max())
    r = upto.iloc[-1]
    return (float(r["nicv_mean"]), float(r["nicv_sd"]), int(r["n_runs"])), int(s["iteration"].max())


@plain_bools
def check_fig4(table, item) -> list[Check]:
    claims = item["claims"]
    methods, main_group = claims["methods"], claims.get("main_group", "")
    early, horizon = int(claims["early_iterations"]), int(claims["horizon"])
    n_lloyd, n_gene = name(item, LLOYD), name(item, GENE)
    panels = item["options"]["panels"]
    planned, missing = coverage(table, panels)
    names = {ds: dataset_name(item, ds) for ds in panels}
    avail = available(table, panels)
    if not avail:
        return [no_cell("Figure 4 claims", "no dataset available")]
    early_cells, late_cells, no_trace, short = [], [], [], []
    for ds in avail:
        title = dataset_name(item, ds)
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        (l_early, _), (g_early, _) = (_after(part, methods, main_group, alg, early) for alg in (LLOYD, GENE))
        if l_early is None or g_early is None:
            no_trace.append(title)
        else:
            early_cells.append(relative_cell(f"{title} ({n_lloyd} {fmt(l_early[0])}, {n_gene} {fmt(g_early[0])})",
                                             l_early, g_early))
        (lf, _), (gf, g_len) = (_after(part, methods, main_group, alg, horizon) for alg in (LLOYD, GENE))
        if gf is None or lf is None:
            no_trace.append(title)
        elif g_len < horizon:
            short.append(f"{title}: {n_gene} ran {g_len} generations, fewer than the horizon {horizon}")
        else:
            late_cells.append(relative_cell(f"{title} ({n_gene} {fmt(gf[0])} over {gf[2]} runs, {n_lloyd} "
                                            f"{fmt(lf[0])} over {lf[2]} sets)", gf, lf))
    gone = f"; no trace: {', '.join(sorted(set(no_trace)))}" if no_trace else ""
    # §5.3 "Lloyd improves faster in the first iterations" — unqualified: every dataset
    first = claim_check(f"{n_lloyd} improves faster than {n_gene} in the first iterations (§5.3)", early_cells,
                        Directional("<", 0.0), "every", why=(claims.get("why") or {}).get("faster", ""),
                        detail=f"cells: NICV after {early} iterations, ({n_lloyd} − {n_gene})/{n_gene}{gone}")
    # §5.3 "Generally, Gene overtakes Lloyd as the number of iterations increases" — "generally":
    # more than half of the decided datasets
    claim = f"{n_gene} overtakes {n_lloyd} by iteration {horizon}, the figure's horizon (§5.3 'Generally')"
    if short:
        second = no_cell(claim, "; ".join(short) + ": not evaluable at this preset")
    else:
        second = claim_check(claim, late_cells, Directional("<", 0.0), "most",
                             why=(claims.get("why") or {}).get("overtakes", ""),
                             detail=f"cells: NICV after {horizon} iterations, ({n_gene} − {n_lloyd})/{n_lloyd}{gone}")
    return [over_datasets(c, planned, missing, names) for c in (first, second)]
