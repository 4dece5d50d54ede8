"""Figure 6 of Su et al. (2016): NICV minus the §5.1 baseline of the hybrid approach and EUGkM
(θ = 10) over the 81 synthetic datasets, ε = 1, on the runs of Figure 2.

Aggregate: `aggregate_nicv` (items/common.py). Render: one k × d heatmap per `figure.panels`
selector (`heatmaps`). Checks: §6.4's "the hybrid approach is more scalable than EUGkM with respect
to both k and d" — the growth of the hybrid's gap to the baseline from the smallest to the largest
d (at every fixed k of `claims.fixed`) and from the smallest to the largest k (at every fixed d) is
smaller than EUGkM's (Welch–Satterthwaite intervals; the baselines cancel) — and "at least as good
as EUGkM" on more than `majority` of the datasets (Welch interval of Hybrid − EUGkM ≤ 0 per dataset).
"""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    decision,
    diff_of,
    every_check,
    fraction_check,
    gap_growth,
    heatmaps,
    interval_text,
    linear_ci,
    plain_bools,
    row_of,
    rows_of,
    stats_of,
    synthetic_name,
    variant_name,
)

__all__ = ["aggregate_nicv", "check_fig6", "render_fig6"]

EUGKM, HYBRID = "su2016.eugkm", "su2016.hybrid"


def render_fig6(table, item, stem):
    heatmaps(table, item, stem)


def _ends(table, fixed_name, v, lo, hi, ref) -> str:
    """Evidence at the two ends of a growth: each method's mean gap, and the share of the hybrid's
    runs whose switch (Inequality 15) ran EUGkM(ε/2) + DPLloyd rather than falling back to EUGkM."""
    varied = "d" if fixed_name == "k" else "k"
    parts = []
    for end in (lo, hi):
        ds = synthetic_name(fixed_name, v, end)
        h, e = row_of(table, ds, HYBRID), row_of(table, ds, EUGKM, None, ref)
        applied = h.get("hybrid_applied")
        ran = f", split in {100 * float(applied):.0f} % of its runs" if pd.notna(applied) else ""
        parts.append(f"{varied}={end}: gap Hybrid {float(h['gap']):.3g}{ran}, EUGkM {float(e['gap']):.3g}")
    return "; ".join(parts)


def _scalability(table, fixed_name, fixed_values, lo, hi, ref):
    cells = []
    for v in fixed_values:
        gh = gap_growth(table, HYBRID, fixed_name, v, lo, hi)
        ge = gap_growth(table, EUGKM, fixed_name, v, lo, hi, ref)
        if gh is None or ge is None:
            continue
        (th, sh), (te, se) = gh, ge
        iv = linear_ci(th + [(-c, s) for c, s in te], sh - se)
        cells.append((f"{fixed_name}={v} (growth difference Hybrid − EUGkM {interval_text(iv)}; "
                      f"{_ends(table, fixed_name, v, lo, hi, ref)})", decision(iv, 0.0, "<")))
    return cells, ""


@plain_bools
def check_fig6(table, item) -> list[Check]:
    claims = item["claims"]
    ref, variants, majority = claims["reference"], claims.get("variants") or {}, float(claims["majority"])
    n_hyb, n_eug = variant_name(item, HYBRID, None, variants), variant_name(item, EUGKM, ref, variants)
    n_eug_plain = variant_name(item, EUGKM, None, variants)
    fixed = claims["fixed"]
    datasets = sorted(set(rows_of(table, HYBRID)["dataset"]) & set(rows_of(table, EUGKM, ref)["dataset"]))
    if not datasets:
        return [Check(f"{n_hyb} is more scalable than {n_eug_plain} in k and d (§6.4, Figure 6)", None,
                      "no synthetic runs")]
    out = []
    cells = []
    for ds in datasets:
        iv = diff_of(stats_of(row_of(table, ds, HYBRID)), stats_of(row_of(table, ds, EUGKM, None, ref)))
        cells.append((f"{ds} ({interval_text(iv)})", decision(iv, 0.0, "<=")))
    out.append(fraction_check(f"{n_hyb} is at least as good as {n_eug_plain} on most synthetic datasets "
                              "(§6.4, Figure 6)",
                              cells, majority, f"cells: {n_hyb} − {n_eug}", strict=True,
                              why=claims.get("why", {}).get("at_least_as_good", "")))
    d_lo, d_hi = (int(x) for x in fixed["d_range"])
    k_lo, k_hi = (int(x) for x in fixed["k_range"])
    cells, text = _scalability(table, "k", fixed["k"], d_lo, d_hi, ref)
    out.append(every_check(f"{n_hyb} is more scalable than {n_eug_plain} in d: its gap grows less from d = {d_lo} "
                           f"to {d_hi} at fixed k (§6.4)", cells, text,
                           why=claims.get("why", {}).get("scalable_d", "")))
    cells, text = _scalability(table, "d", fixed["d"], k_lo, k_hi, ref)
    out.append(every_check(f"{n_hyb} is more scalable than {n_eug_plain} in k: its gap grows less from k = {k_lo} "
                           f"to {k_hi} at fixed d (§6.4)", cells, text,
                           why=claims.get("why", {}).get("scalable_k", "")))
    return out
