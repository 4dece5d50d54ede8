"""Figure 2 (d) of Balcan et al. 2017: k-means objective against ε on MNIST, k = 10.

`figure.plotted` lists the algorithms drawn; one without ε (the non-private reference) is drawn
as a flat line with its ± sd band over the ε grid; a variant whose run records say "not DP as
published" (the authors' calibration of Algorithm 4) is drawn dashed and labelled so, against its
NOMINAL ε (no guarantee). `claims` names the roles of §7's claims (ours, SuLQ, the non-private
reference; `authors` only as evidence in a `why`) and the thresholds. Names come from the names
table.

Claims are decided on intervals (`dpclust.pipeline.claims`): per ε a Welch interval of ours − SuLQ and a
delta-method interval of ours/k-means++; "SuLQ deteriorates faster" is the ratio of the two methods'
deteriorations, (SuLQ(ε_min)/SuLQ(ε_max)) / (ours(ε_min)/ours(ε_max)) > 1 (delta method,
`log_linear_ci`).
"""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.claims import decide, diff_ci, every, ratio_ci, side_of
from dpclust.pipeline.itemkit import availability, dataset_name, name, step_options
from dpclust.pipeline.items.balcan2017.common import (
    cells,
    evidence,
    legend_label,
    log_linear_ci,
    require_dp,
    spent_check,
    summary,
    triple,
)
from dpclust.pipeline.items.balcan2017.fig2 import variant_style
from dpclust.pipeline.plotting import mark_unavailable, mean_sd_line, panel_grid, save_figure


def aggregate_fig2d(records, item, ctx=None) -> pd.DataFrame:
    return summary(records)


def render_fig2d(table: pd.DataFrame, item: dict, stem: str) -> None:
    plotted = step_options(item, "figure")["plotted"]
    fig, axes = panel_grid(1, ncols=1, panel_size=(4.6, 3.4))
    ax = axes[0]
    datasets = sorted(table["dataset"].unique())
    ds = datasets[0] if datasets else "mnist70k"
    status, reason = availability(table, ds)
    if status != "ok":
        mark_unavailable(ax, item["title"], reason, status)
        save_figure(fig, stem)
        return
    eps_grid = sorted(table.loc[table["epsilon"].notna(), "epsilon"].unique())
    for i, alg in enumerate(plotted):
        cell = table[(table["algorithm"] == alg) & (table["status"] == "ok")]
        if cell.empty:
            continue
        label = legend_label(table, item, alg)
        if cell["epsilon"].isna().all():  # non-private: one value, flat over the ε grid
            m, s = float(cell["mean"].iloc[0]), float(cell["std"].fillna(0).iloc[0])
            mean_sd_line(ax, eps_grid, [m] * len(eps_grid), [s] * len(eps_grid), label=label, band=True,
                         **variant_style(table, alg, i))
        else:
            cell = cell.sort_values("epsilon")
            mean_sd_line(ax, cell["epsilon"], cell["mean"], cell["std"], label=label, **variant_style(table, alg, i))
    ax.set_xlabel("ε (nominal ε for a variant that is not DP)")
    ax.set_ylabel("k-means objective")
    ax.set_title(f"{item['title']}\n({dataset_name(item, ds)}, k = {int(table['k'].iloc[0])})", fontsize=9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, fontsize=8, frameon=False)
    save_figure(fig, stem)


def check_fig2d(table: pd.DataFrame, item: dict) -> list[Check]:
    """§7's claims on Figure 2 (d), decided on intervals, with the roles and thresholds of `claims`."""
    claims = step_options(item, "claims")
    ours, sulq, base = claims["ours"], claims["sulq"], claims["nonprivate"]
    authors = claims.get("authors")
    n_ours, n_sulq, n_base = name(item, ours), name(item, sulq), name(item, base)
    ok = table[table["status"] == "ok"]
    if ok.empty:
        return [Check("Figure 2(d) claims", None, "data unavailable")]
    ds = str(ok["dataset"].iloc[0])
    o, s = cells(table, ds, ours, "epsilon"), cells(table, ds, sulq, "epsilon")
    b = next(iter(cells(table, ds, base, "epsilon").values()), None)
    shown = [a for a in (ours, sulq, authors) if a]

    def ev(eps_values) -> str:
        return " | ".join(f"ε={e:g}: " + evidence(table, item, ds, "epsilon", e, shown) for e in eps_values)

    checks = []
    common = sorted(set(o) & set(s))
    claim = f"{n_ours} has a lower mean objective than {n_sulq} at every ε"
    refused = require_dp(table, item, [ours, sulq], claim)
    if refused:
        checks.append(refused)
    else:
        per, failing = [], []
        for e in common:
            ci = diff_ci(triple(o[e]), triple(s[e]))
            d = side_of(ci, 0.0, "<")
            per.append((f"ε={e:g}: Δ = {ci}", d))
            if d is False:
                failing.append(e)
        chk = every(claim, per, detail="Δ = mean(ours) − mean(SuLQ), 95 % Welch interval")
        if chk.holds is False:
            chk.why = f"genuine: with correctly calibrated noise {n_ours} is not below {n_sulq}; " + ev(failing)
        checks.append(chk)

    cr = float(claims["competitive_ratio"])
    claim = f"{n_ours} is competitive with the non-private {n_base} even for small ε (≤ {cr:g}× at every ε)"
    refused = require_dp(table, item, [ours], claim)
    if refused:
        checks.append(refused)
    elif b is not None and o:
        per, failing = [], []
        for e in sorted(o):
            ci = ratio_ci(triple(o[e]), triple(b))
            d = side_of(ci, cr, "<=")
            per.append((f"ε={e:g}: {n_ours}/{n_base} = {ci}", d))
            if d is False:
                failing.append(e)
        chk = every(claim, per, detail=f"{n_ours}/{n_base}, 95 % delta-method interval")
        if chk.holds is False:
            chk.why = f"genuine: {n_ours} exceeds {cr:g}× {n_base} at small ε; " + ev(failing)
        checks.append(chk)

    claim = (f"{n_sulq} deteriorates quickly as ε decreases (its cost grows more from the largest to the smallest "
             f"ε than {n_ours}'s does)")
    refused = require_dp(table, item, [ours, sulq], claim)
    if refused:
        checks.append(refused)
    elif len(common) >= 2:
        lo, hi = common[0], common[-1]
        q = log_linear_ci([(1.0, *triple(s[lo])), (-1.0, *triple(s[hi])),
                           (-1.0, *triple(o[lo])), (1.0, *triple(o[hi]))])
        s_det = log_linear_ci([(1.0, *triple(s[lo])), (-1.0, *triple(s[hi]))])
        o_det = log_linear_ci([(1.0, *triple(o[lo])), (-1.0, *triple(o[hi]))])
        chk = decide(claim, q, 1.0, ">",
                     detail=(f"(SuLQ deterioration)/(ours' deterioration); cost(ε={lo:g})/cost(ε={hi:g}): "
                             f"{n_sulq} {s_det}, {n_ours} {o_det}"))
        if chk.holds is False:
            chk.why = (f"genuine: {n_ours} deteriorates at least as fast as {n_sulq} ({n_ours} {o_det}, {n_sulq} "
                       f"{s_det}); " + ev([lo, hi]))
        checks.append(chk)
    else:
        checks.append(Check(claim, None, "needs at least two ε values"))
    checks.append(spent_check(table, [ours, sulq], float(claims["spent_rel_tol"])))
    return checks
