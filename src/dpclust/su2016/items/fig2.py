"""Figure 2 of Su et al. (2016): NICV minus the §5.1 baseline over the 81 synthetic datasets
(k, d = 2..10), ε = 1, for DPLloyd, EUGkM at θ ∈ {5, 10, 15, 20}, GkM, GkM-3K and PGkM.

Aggregate: `aggregate_nicv` (items/common.py). Render: one k × d heatmap per `figure.panels`
selector (`heatmaps`). Checks: the trends of §5.1/§6.1-§6.2 and "θ = 10 works well", with the
reference run group (θ = 10) and the thresholds from `claims`.
"""

from __future__ import annotations

import pandas as pd

from ...aggregate import Check, fmt
from .common import aggregate_nicv, gap_grid, heatmaps, plain_bools, trend, variant_name

__all__ = ["aggregate_nicv", "check_fig2", "render_fig2"]

DPLLOYD, EUGKM = "su2016.dplloyd", "su2016.eugkm"


def render_fig2(table, item, stem):
    heatmaps(table, item, stem)


@plain_bools
def check_fig2(table, item) -> list[Check]:
    claims = item["claims"]
    ref, variants = claims["reference"], claims.get("variants") or {}
    n_eug, n_dpl = variant_name(item, EUGKM, ref, variants), variant_name(item, DPLLOYD, None, variants)
    min_rho, majority = float(claims["trend_min_spearman"]), float(claims["majority"])
    out = []
    eug, dpl = gap_grid(table, EUGKM, ref), gap_grid(table, DPLLOYD)
    r_eug_d, r_dpl_k = trend(eug, "D"), trend(dpl, "K")
    out.append(Check(f"{variant_name(item, EUGKM, None, variants)} degrades as d grows (§5.1, Figure 2)",
                     None if r_eug_d != r_eug_d else r_eug_d > min_rho,
                     f"Spearman(d, {n_eug} − baseline) = {fmt(r_eug_d, 3)} over {len(eug)} datasets "
                     f"(holds if > {min_rho:g})"))
    out.append(Check(f"{n_dpl} degrades as k grows (§5.1, §6.1, Figure 2)",
                     None if r_dpl_k != r_dpl_k else r_dpl_k > min_rho,
                     f"Spearman(k, {n_dpl} − baseline) = {fmt(r_dpl_k, 3)} over {len(dpl)} datasets "
                     f"(holds if > {min_rho:g})"))
    merged = eug.merge(dpl, on=["K", "D"], suffixes=("_eug", "_dpl"))
    hi_d = merged[merged["D"] == merged["D"].max()] if not merged.empty else merged
    res = (hi_d["gap_dpl"] < hi_d["gap_eug"]).tolist() if not hi_d.empty else []
    out.append(Check(f"{n_dpl} is more scalable in d than {variant_name(item, EUGKM, None, variants)}: "
                     f"{n_dpl} wins at the largest d (§6.2)",
                     None if not res else sum(res) > majority * len(res),
                     f"{n_dpl} < {n_eug} in {sum(res)}/{len(res)} datasets at d = "
                     f"{fmt(hi_d['D'].max()) if len(hi_d) else 'n/a'}"))
    groups = table.loc[table["algorithm"] == EUGKM, "group"].unique()
    if len(groups) > 1:
        t = table[(table["status"] == "ok") & (table["algorithm"] == EUGKM)]
        piv = t.pivot_table(index="dataset", columns="group", values="nicv_mean", aggfunc="mean").dropna()
        if not piv.empty:
            slack = float(claims["theta_slack"])
            good = (piv[ref] <= (1 + slack) * piv.min(axis=1)) if ref in piv else pd.Series(dtype=bool)
            reference = variants.get(ref, ref)
            out.append(Check(f"{reference} works well for "
                             f"{variant_name(item, EUGKM, None, variants)} in most cases (§5.1)",
                             bool(good.mean() > majority) if len(good) else None,
                             f"{reference} within {slack:.0%} of the best θ on {int(good.sum())}/{len(good)} "
                             f"datasets (holds if > {majority:.0%})"))
    return out
