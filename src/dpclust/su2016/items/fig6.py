"""Figure 6 of Su et al. (2016): NICV minus the §5.1 baseline of the hybrid approach and EUGkM
(θ = 10) over the 81 synthetic datasets, ε = 1, on the runs of Figure 2.

Aggregate: `aggregate_nicv` (items/common.py). Render: one k × d heatmap per `figure.panels`
selector (`heatmaps`). Checks: §6.4's "the hybrid is more scalable than EUGkM", against the run
group of EUGkM at θ = 10 (`claims.reference`).
"""

from __future__ import annotations

from ...aggregate import Check, fmt
from .common import aggregate_nicv, gap_grid, heatmaps, plain_bools, variant_name

__all__ = ["aggregate_nicv", "check_fig6", "render_fig6"]

EUGKM, HYBRID = "su2016.eugkm", "su2016.hybrid"


def render_fig6(table, item, stem):
    heatmaps(table, item, stem)


@plain_bools
def check_fig6(table, item) -> list[Check]:
    claims = item["claims"]
    ref, variants, majority = claims["reference"], claims.get("variants") or {}, float(claims["majority"])
    n_hyb, n_eug = variant_name(item, HYBRID, None, variants), variant_name(item, EUGKM, ref, variants)
    n_eug_plain = variant_name(item, EUGKM, None, variants)
    hyb, eug = gap_grid(table, HYBRID), gap_grid(table, EUGKM, ref)
    m = hyb.merge(eug, on=["K", "D"], suffixes=("_h", "_e"))
    if m.empty:
        return [Check(f"{n_hyb} is more scalable than {n_eug_plain} in k and d (§6.4, Figure 6)", None,
                      "no synthetic runs")]
    res = (m["gap_h"] <= m["gap_e"]).tolist()
    corner = m[(m["D"] == m["D"].max())]
    wins = corner["gap_h"] <= corner["gap_e"]
    return [Check(f"{n_hyb} is at least as good as {n_eug_plain} on most synthetic datasets (§6.4, Figure 6)",
                  sum(res) > majority * len(res), f"{n_hyb} ≤ {n_eug} on {sum(res)}/{len(res)} datasets"),
            Check(f"{n_hyb} beats {n_eug_plain} at the largest d (more scalable in d, §6.4)",
                  bool(wins.mean() > majority),
                  f"{int(wins.sum())}/{len(corner)} datasets at d = {fmt(m['D'].max())}")]
