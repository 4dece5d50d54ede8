"""Figure 2 (a–c) of Balcan et al. 2017 — k-means objective against k at ε = 1 — and the items
that share its runs and functions: the single panels fig2a, fig2b, fig2c and the fig2_table item
(the numbers behind the figure, with sample and aggregate, which the paper ran but did not plot).

Step options (config/papers/balcan2017.yaml):
* `options.datasets` — the datasets, in order: the rows of the table (aggregate), the panels
  (render) and the datasets whose claims are checked (checks);
* `figure.plotted`, `figure.panels` — the algorithms drawn and the paper's panel letters;
  `figure.columns`, `figure.labels` (fig2_table) — the table's algorithm columns and the paper's
  own method labels as their headers;
* `claims` — which algorithm plays which role in §7's claims, and every threshold; `authors` names the
  authors' calibration of Algorithm 4 (not DP), used only as evidence in the claims' `why`, never
  compared as a private method.
Legends, titles and claim texts take display names from the names table (`dpclust.pipeline.itemkit.name`);
a variant whose run records say "not DP as published" is labelled so in the legend and drawn dashed.

Claims are decided on intervals (`dpclust.pipeline.claims`): per cell (dataset × k) a Welch interval of
ours − SuLQ, delta-method intervals of S&A/ours and ours/k-means++, and for "the gap grows with d"
the ratio of the geometric-mean gaps SuLQ/ours of the two datasets (delta method, `log_linear_ci`).
"""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.claims import decide, diff_ci, every, ratio_ci, side_of
from dpclust.pipeline.itemkit import availability, dataset_name, name, step_options
from dpclust.pipeline.items.balcan2017.common import (
    NOT_DP,
    available,
    cells,
    evidence,
    guarantee_of,
    legend_label,
    log_linear_ci,
    require_dp,
    spent_check,
    summary,
    triple,
)
from dpclust.pipeline.plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure, style_for, write_table


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
            mark_unavailable(ax, title, reason, status)
            continue
        for i, alg in enumerate(plotted):
            cell = table[(table["dataset"] == ds) & (table["algorithm"] == alg)
                         & (table["status"] == "ok")].sort_values("k")
            if cell.empty:
                continue
            mean_sd_line(ax, cell["k"], cell["mean"], cell["std"], label=legend_label(table, item, alg), lw=1.2,
                         ms=4, **variant_style(table, alg, i))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k")
        ax.set_ylabel("k-means objective")
        ax.set_title(title)
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:  # one legend for all panels, below them (never over the data)
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8, frameon=False)
    fig.suptitle(item["title"], fontsize=10)
    save_figure(fig, stem)


def variant_style(table: pd.DataFrame, alg: str, index: int) -> dict:
    """The algorithm's stable style; dashed for a variant that is not DP as published."""
    style = dict(style_for(alg, index))
    if guarantee_of(table, alg) == NOT_DP:
        style["linestyle"] = "--"
    return style


def render_fig2_table(table: pd.DataFrame, item: dict, stem: str) -> None:
    """One row per dataset and k; one column per algorithm (`figure.columns`), headed by the paper's
    own method labels (`figure.labels`; a not-DP variant's header says so), then, for the algorithms
    of `figure.diagnostics`, the mean cost right after the recovery and the non-empty clusters
    (after recovery → final, out of k)."""
    opts = step_options(item, "figure")
    labels = dict(opts["labels"])
    for alg in labels:
        if guarantee_of(table, alg) == NOT_DP and NOT_DP not in labels[alg]:
            labels[alg] = f"{labels[alg]} ({NOT_DP}, no ε guarantee)"
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
        for alg in opts.get("diagnostics") or []:
            r = cell[(cell["algorithm"] == alg) & (cell["status"] == "ok")]
            if r.empty:
                continue
            r = r.iloc[0]
            base = labels.get(alg, name(item, alg))
            row[f"{base}: cost after recovery"] = "" if pd.isna(r["recovery_cost"]) else f"{r['recovery_cost']:.4g}"
            if not pd.isna(r["nonempty"]):
                rec = "" if pd.isna(r["recovery_nonempty"]) else f"{r['recovery_nonempty']:.3g} → "
                row[f"{base}: non-empty clusters (recovery → final)"] = f"{rec}{r['nonempty']:.3g} of {int(k)}"
        out.append(row)
    df = pd.DataFrame(out)
    note = ("ε = 1 for the private algorithms; every DP run spent exactly ε (see checks). A variant marked "
            f"'{NOT_DP}' runs the same nominal ε but has no privacy guarantee and is never compared as private. "
            "Costs after recovery and non-empty clusters are non-private diagnostics of the runs.")
    write_table(df, stem, title=item["title"], note=note)


def _cell_detail(label: str, interval) -> str:
    return f"{label}: {interval}"


def check_fig2(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7's claims on Figure 2 (a–c), decided on intervals, with the roles and thresholds of `claims`."""
    claims = step_options(item, "claims")
    ours, sulq, sa, base = claims["ours"], claims["sulq"], claims["sa"], claims["nonprivate"]
    authors = claims.get("authors")
    n_ours, n_sulq, n_sa, n_base = (name(item, a) for a in (ours, sulq, sa, base))
    wanted = panel_datasets(table, item)
    datasets = [ds for ds in wanted if available(table, ds)]
    unavailable = [dataset_name(item, ds) for ds in wanted if not available(table, ds)]
    suffix = f" (not evaluable: {', '.join(unavailable)} unavailable)" if unavailable else ""
    shown = [a for a in (ours, sulq, authors) if a]
    checks = []

    def why_collapse(failing_ds: list[str], first: str) -> str:
        ev = []
        for ds in dict.fromkeys(failing_ds):
            ks = sorted(cells(table, ds, ours))
            ev.append(f"{dataset_name(item, ds)} (d={fmt(table.loc[table['dataset'] == ds, 'd'].dropna().iloc[0])}) "
                      + " | ".join(f"k={k}: " + evidence(table, item, ds, "k", k, shown) for k in ks))
        return f"genuine: {first}; " + "; ".join(ev)

    # 1. ours beats SuLQ at every k on every available dataset (Welch interval of ours − SuLQ < 0)
    claim = f"{n_ours} has a lower mean k-means objective than {n_sulq} at every k on every available dataset"
    refused = require_dp(table, item, [ours, sulq], claim)
    if refused:
        checks.append(refused)
    else:
        per, failing = [], []
        for ds in datasets:
            o, s = cells(table, ds, ours), cells(table, ds, sulq)
            for k in sorted(set(o) & set(s)):
                ci = diff_ci(triple(o[k]), triple(s[k]))
                d = side_of(ci, 0.0, "<")
                per.append((f"{dataset_name(item, ds)} k={k}: Δ = {ci}", d))
                if d is False:
                    failing.append(ds)
        chk = every(claim, per, detail="Δ = mean(ours) − mean(SuLQ), 95 % Welch interval" + suffix)
        if chk.holds is False:
            chk.why = why_collapse(failing, f"with correctly calibrated noise {n_ours} is not below {n_sulq}")
        checks.append(chk)

    # 2. the gap grows with the dimension: G(ds) = geometric mean over k of SuLQ/ours; G(higher d) / G(lower d) > 1
    claim = (f"the gap between {n_ours} and {n_sulq} (geometric-mean cost ratio {n_sulq}/{n_ours} over k) "
             "grows with the dimension")
    refused = require_dp(table, item, [ours, sulq], claim)
    gaps = []
    for ds in datasets:
        d = table.loc[table["dataset"] == ds, "d"].dropna()
        o, s = cells(table, ds, ours), cells(table, ds, sulq)
        ks = sorted(set(o) & set(s))
        if len(d) and ks:
            terms = [(1.0 / len(ks), *triple(s[k])) for k in ks] + [(-1.0 / len(ks), *triple(o[k])) for k in ks]
            gaps.append((float(d.iloc[0]), ds, terms))
    gaps.sort(key=lambda g: g[0])
    if refused:
        checks.append(refused)
    elif len(gaps) < 2:
        checks.append(Check(claim, None, "needs at least two available datasets of different dimension" + suffix))
    else:
        per = []
        for (d_lo, ds_lo, t_lo), (d_hi, ds_hi, t_hi) in zip(gaps, gaps[1:]):
            ci = log_linear_ci(t_hi + [(-c, m, sd, n) for c, m, sd, n in t_lo])
            per.append((f"{dataset_name(item, ds_hi)} (d={int(d_hi)}) vs {dataset_name(item, ds_lo)} (d={int(d_lo)})",
                        ci, side_of(ci, 1.0, ">")))
        gap_text = ", ".join(f"{dataset_name(item, ds)} (d={int(d)}): {n_sulq}/{n_ours} = {log_linear_ci(t)}"
                             for d, ds, t in gaps)
        if len(per) == 1:
            label, ci, _ = per[0]
            chk = decide(claim, ci, 1.0, ">", detail=f"ratio of gaps {label}; {gap_text}{suffix}")
        else:
            chk = every(claim, [(f"{label}: {ci}", dec) for label, ci, dec in per], detail=gap_text + suffix)
        if chk.holds is False:
            chk.why = why_collapse([gaps[-1][1]], f"the gap does not grow with d ({gap_text})")
        checks.append(chk)

    # 3. sample and aggregate is orders of magnitude worse than ours: S&A/ours ≥ factor at every k
    factor = float(claims["orders_of_magnitude"])
    claim = f"{n_sa} is orders of magnitude worse than {n_ours} (≥ {factor:g}× at every k)"
    refused = require_dp(table, item, [ours, sa], claim)
    if refused:
        checks.append(refused)
    else:
        per, low = [], []
        for ds in datasets:
            o, a, b = cells(table, ds, ours), cells(table, ds, sa), cells(table, ds, base)
            for k in sorted(set(o) & set(a)):
                ci = ratio_ci(triple(a[k]), triple(o[k]))
                d = side_of(ci, factor, ">=")
                per.append((f"{dataset_name(item, ds)} k={k}: {ci}", d))
                if d is False:
                    vs_base = f", {n_sa}/{n_base} = {fmt(a[k].mean / b[k].mean)}" if k in b else ""
                    low.append(f"{dataset_name(item, ds)} k={k}: {n_sa}/{n_ours} = {ci}{vs_base}, "
                               + evidence(table, item, ds, "k", k, [ours]))
        chk = every(claim, per, detail=f"{n_sa}/{n_ours}, 95 % delta-method interval" + suffix)
        if chk.holds is False:
            chk.why = ("depends on a lost parameter: the paper's sample-and-aggregate (aggregator, number of blocks) "
                       "is MISSING (ours: GUPT noisy mean, ℓ = n^0.4); below the factor where " + "; ".join(low[:4])
                       + f" — a ratio bounded by {n_sa}'s own cost over {n_ours}'s")
        checks.append(chk)

    # 4. ours is competitive with non-private k-means++: ours/k-means++ ≤ ratio at every k
    cr = float(claims["competitive_ratio"])
    claim = f"{n_ours} is competitive with the non-private {n_base} (≤ {cr:g}× its objective at every k)"
    refused = require_dp(table, item, [ours], claim)
    if refused:
        checks.append(refused)
    else:
        per, bad = [], []
        for ds in datasets:
            o, b = cells(table, ds, ours), cells(table, ds, base)
            for k in sorted(set(o) & set(b)):
                ci = ratio_ci(triple(o[k]), triple(b[k]))
                d = side_of(ci, cr, "<=")
                per.append((f"{dataset_name(item, ds)} k={k}: {ci}", d))
                if d is False:
                    bad.append(ds)
        chk = every(claim, per, detail=f"{n_ours}/{n_base}, 95 % delta-method interval" + suffix)
        if chk.holds is False:
            chk.why = why_collapse(bad, f"{n_ours} is more than {cr:g}× {n_base}")
        checks.append(chk)
    checks.append(spent_check(table, [ours, sulq, sa], float(claims["spent_rel_tol"])))
    return checks
