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
number of iterations increases" ("generally": more than half of the datasets) — decided at
the figure's horizon (`claims.horizon`, MISSING→REC 100 iterations, the x-range of Figure 4), never
at a shorter run: a Gene trace shorter than the horizon makes the claim not evaluable.

Gene's mutation decay is MISSING in the paper; the declared value (the curves' run group,
`claims.main_group`) was chosen by looking at "Gene overtakes Lloyd" (docs/VERDICTS.md "tuned";
`claims.tuned`). That claim is therefore decided on the run group at the value fixed beforehand
(`claims.fixed_beforehand`; not evaluable, naming the group, where a preset did not run it), its
verdict at every decay that already runs (`claims.sweep_groups`) is summarised as "setting-dependent:
mutation_decay (holds at …; does not hold at …)" or "robust over mutation_decay (…)", and its verdict
at the tuned value is a row of its own, an "alternative reading (tuned mutation_decay …)". "Lloyd
improves faster" (the decay was not chosen by looking at it) is decided at the declared decay, its
verdict over the sweep reported beside it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.items.su2016.common import (
    available,
    coverage,
    mark_panel,
    method_label,
    plain_bools,
    sweep_label,
    tight,
    with_setting,
)
from dpclust.pipeline.plotting import mean_sd_line, panel_grid, save_figure, style_for
from dpclust.pipeline.verdicts import Directional, claim_check, every_dataset, no_cell, relative_cell

LLOYD, GENE = "su2016.lloyd", "su2016.gene"
DECAY = "mutation_decay"
COLUMNS = ["group", "dataset", "k", "method", "decay", "iteration", "nicv_mean", "nicv_sd", "n_runs", "status",
           "reason"]


def aggregate(records, item, ctx=None) -> pd.DataFrame:
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
    """Rows of one method: Lloyd's (one group) or Gene's in run group `main_group` (the figure's curve:
    the declared decay; a checked claim may ask for another decay's group)."""
    rows = part[part["method"] == methods[alg]]
    if alg == GENE and main_group:
        rows = rows[rows["group"] == main_group]
    return rows.sort_values("iteration")


def render(table, item, stem):
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


def _decay(table, methods, group, fallback=None):
    """Gene's mutation decay in a run group (the table's `decay`), as text; `fallback` without rows."""
    rows = table[(table["method"] == methods[GENE]) & (table["group"] == group)]["decay"].dropna()
    value = float(rows.iloc[0]) if len(rows) else fallback
    return "?" if value is None else f"{float(value):g}"


def _cells(table, item, datasets, group, iteration, overtake: bool):
    """The cells of one Figure 4 claim with Gene's runs of run group `group`, one per dataset:
    "overtakes" (`overtake`): (Gene − Lloyd)/Lloyd after `iteration` (the horizon); else "Lloyd faster":
    (Lloyd − Gene)/Gene after `iteration` (the first iterations). Returns (cells, no_trace, short,
    absent): datasets without a trace of either, Gene traces shorter than the horizon, and datasets
    with a Lloyd trace but no Gene run of this group (not run at this setting in this preset)."""
    claims = item["claims"]
    methods = claims["methods"]
    n_lloyd, n_gene = name(item, LLOYD), name(item, GENE)
    cells, no_trace, short, absent = [], [], [], []
    for ds in datasets:
        title = dataset_name(item, ds)
        part = table[(table["dataset"] == ds) & (table["status"] == "ok")]
        (lv, _), (gv, g_len) = (_after(part, methods, group, alg, iteration) for alg in (LLOYD, GENE))
        if gv is None and g_len == 0 and lv is not None:
            absent.append(title)
        elif gv is None or lv is None:
            no_trace.append(title)
        elif not overtake:
            cells.append(relative_cell(f"{title} ({n_lloyd} {fmt(lv[0])}, {n_gene} {fmt(gv[0])})", lv, gv))
        elif g_len < iteration:
            short.append(f"{title}: {n_gene} ran {g_len} generations, fewer than the horizon {iteration}")
        else:
            cells.append(relative_cell(f"{title} ({n_gene} {fmt(gv[0])} over {gv[2]} runs, {n_lloyd} "
                                       f"{fmt(lv[0])} over {lv[2]} sets)", gv, lv))
    return cells, no_trace, short, absent


def _decided(claim, table, item, datasets, group, iteration, overtake: bool, quantifier: str, decay: str,
             why: str = "") -> Check:
    """One Figure 4 claim decided with Gene's runs of `group` (at mutation_decay `decay`)."""
    n_lloyd, n_gene = name(item, LLOYD), name(item, GENE)
    cells, no_trace, short, absent = _cells(table, item, datasets, group, iteration, overtake)
    notes = []
    if no_trace:
        notes.append(f"no trace: {', '.join(sorted(set(no_trace)))}")
    if absent:
        notes.append(f"no {n_gene} run at {DECAY} {decay} (run group {group}) in this preset: "
                     f"{', '.join(absent)}")
    gone = "".join(f"; {n}" for n in notes)
    if short:
        return no_cell(claim, "; ".join(short) + ": not evaluable at this preset" + gone)
    if not cells:
        return no_cell(claim, f"not evaluable: no {n_gene} run at {DECAY} {decay} (run group {group}) in this "
                              f"preset{gone}")
    quantity = (f"({n_gene} − {n_lloyd})/{n_lloyd}" if overtake else f"({n_lloyd} − {n_gene})/{n_gene}")
    detail = f"cells: NICV after {iteration} iterations, {quantity}, {n_gene} at {DECAY} {decay}{gone}"
    return claim_check(claim, cells, Directional("<", 0.0), quantifier, why=why, detail=detail)


def _sweep(item, table, datasets, groups, iteration, overtake, quantifier, claim, marks):
    """The claim at every decay of the sweep that ran (`groups`, the declared one among them): the
    (value text, Check) pairs of `sweep_label` and a one-line summary of each value's verdict."""
    methods = item["claims"]["methods"]
    out, parts = [], []
    for g in groups:
        if not (table["group"] == g).any():
            continue
        v = _decay(table, methods, g)
        c = _decided(claim, table, item, datasets, g, iteration, overtake, quantifier, v)
        text = v + (f" ({marks[g]})" if g in marks else "")
        out.append((text, c))
        ci = "" if c.ci is None else f" [{fmt(c.ci[0])}, {fmt(c.ci[1])}]"
        parts.append(f"{text}: {c.result} ({c.cells} dataset{'s' if c.cells != 1 else ''}"
                     + (f"; worst {fmt(c.quantity)}{ci}" if c.cells else "") + ")")
    return out, "; ".join(parts)


@plain_bools
def checks(table, item) -> list[Check]:
    claims = item["claims"]
    methods, main_group = claims["methods"], claims.get("main_group", "")
    early, horizon = int(claims["early_iterations"]), int(claims["horizon"])
    n_lloyd, n_gene = name(item, LLOYD), name(item, GENE)
    whys = claims.get("why") or {}
    panels = item["options"]["panels"]
    planned, missing = coverage(table, panels)
    names = {ds: dataset_name(item, ds) for ds in panels}
    avail = available(table, panels)
    if not avail:
        return [no_cell("Figure 4 claims", "no dataset available")]
    # docs/VERDICTS.md "tuned": Gene's declared mutation_decay (main_group) was chosen by looking at "Gene
    # overtakes Lloyd" (claims.tuned); that claim is decided at the value fixed beforehand (the run group of
    # claims.fixed_beforehand) and over the sweep that already runs (claims.sweep_groups); its verdict at
    # the tuned value is an alternative reading
    tuned = (claims.get("tuned") or {}).get(DECAY)
    fixed = claims.get("fixed_beforehand") or {}
    sweep = list(claims.get("sweep_groups") or [])
    declared = _decay(table, methods, main_group)
    marks = {main_group: "declared, tuned"} if tuned else {main_group: "declared"}
    if tuned:
        if not fixed.get("group"):
            raise ValueError("Figure 4: claims.tuned names mutation_decay but claims.fixed_beforehand gives no run "
                             "group at the value fixed beforehand")
        marks[fixed["group"]] = "fixed beforehand"
    out = []
    # §5.3 "Lloyd improves faster in the first iterations" — unqualified: every dataset; decided at the
    # declared decay (not chosen by looking at this claim), its dependence on the decay reported beside it
    claim = f"{n_lloyd} improves faster than {n_gene} in the first iterations (§5.3)"
    first = _decided(claim, table, item, avail, main_group, early, False, "every", declared,
                     why=whys.get("faster", ""))
    if sweep:
        results, summary = _sweep(item, table, avail, sweep, early, False, "every", claim, marks)
        first = with_setting(first, sweep_label(DECAY, results), f"over the decay sweep: {summary}")
    out.append(first)
    # §5.3 "Generally, Gene overtakes Lloyd as the number of iterations increases" — "generally": more
    # than half of the datasets, at the figure's horizon
    claim = f"{n_gene} overtakes {n_lloyd} by iteration {horizon}, the figure's horizon (§5.3 'Generally')"
    if not tuned:
        out.append(_decided(claim, table, item, avail, main_group, horizon, True, "most", declared,
                            why=whys.get("overtakes", "")))
    else:
        at = _decay(table, methods, fixed["group"], fixed.get(DECAY))
        head = _decided(claim, table, item, avail, fixed["group"], horizon, True, "most", at,
                        why=whys.get("overtakes", ""))
        results, summary = _sweep(item, table, avail, sweep, horizon, True, "most", claim, marks)
        label = sweep_label(DECAY, results)
        out.append(with_setting(head, label, f"over the decay sweep: {summary}",
                                rule=f"decided at {DECAY} {at} (fixed beforehand, run group {fixed['group']}); the "
                                     f"declared {declared} was chosen by looking at this claim (claims.tuned): an "
                                     f"alternative reading; {label}"))
        alt = _decided(f"alternative reading (tuned {DECAY} {declared}): {claim}", table, item, avail, main_group,
                       horizon, True, "most", declared, why=whys.get("overtakes_tuned", ""))
        out.append(dataclasses.replace(alt, rule=f"{alt.rule}; {DECAY} {declared} chosen by looking at this claim"
                                       if alt.rule else alt.rule))
    return [every_dataset(c, planned, missing, names) for c in out]
