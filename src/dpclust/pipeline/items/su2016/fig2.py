"""Figure 2 of Su et al. (2016): NICV minus the §5.1 baseline over the 81 synthetic datasets
(k, d = 2..10), ε = 1, for DPLloyd, EUGkM at θ ∈ {5, 10, 15, 20}, GkM, GkM-3K and PGkM.

Aggregate: `aggregate_nicv` (items/common.py; `cells_per_dim` is EUGkM's grid m per run group, so
run groups whose θ give the same grid — identical mechanisms, e.g. θ = 10, 15, 20 at d = 10 — are
visible in the table). Render: one k × d heatmap per `figure.panels` selector (`heatmaps`), panels of
identical configurations marked. Checks (§5.1, §6.1-§6.2), each on Welch–Satterthwaite intervals
of the gaps NICV − baseline (the baseline is a constant):

* "EUGkM degrades as d grows" / "DPLloyd degrades as k grows": at every fixed value of the other
  parameter in `claims.fixed`, the gap grows from the smallest to the largest value (> 0);
* "DPLloyd is more scalable in d than EUGkM" — a claim about how each method degrades as d grows,
  not who wins one cell: at every fixed k, DPLloyd's gap grows less from d = 2 to d = 10 than
  EUGkM's, i.e. (D₁₀ − D₂) − (E₁₀ − E₂) < 0 (the baselines cancel);
* "θ = 10 works well in most cases": on more than `majority` of the datasets EUGkM at θ = 10 is
  within `theta_slack` of every other θ (mean₁₀ − (1 + slack)·mean_θ ≤ 0 for each θ).
"""

from __future__ import annotations

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    all_of,
    decision,
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
    variant_name,
)

__all__ = ["aggregate_nicv", "check_fig2", "render_fig2"]

DPLLOYD, EUGKM = "su2016.dplloyd", "su2016.eugkm"


def render_fig2(table, item, stem):
    heatmaps(table, item, stem)


def growth_cells(table, algorithm, fixed, values, lo, hi, group=None, label=""):
    """Per fixed value: (label, decision of growth > 0, interval text)."""
    out = []
    for v in values:
        g = gap_growth(table, algorithm, fixed, v, lo, hi, group)
        if g is None:
            continue
        iv = linear_ci(*g)
        out.append((f"{fixed}={v} ({label}{interval_text(iv)})", decision(iv, 0.0, ">"), ""))
    return out


@plain_bools
def check_fig2(table, item) -> list[Check]:
    claims = item["claims"]
    ref, variants = claims["reference"], claims.get("variants") or {}
    n_eug, n_dpl = variant_name(item, EUGKM, ref, variants), variant_name(item, DPLLOYD, None, variants)
    n_eug_plain = variant_name(item, EUGKM, None, variants)
    fixed = claims["fixed"]                      # the k (and d) values at which growth is measured
    d_lo, d_hi = int(fixed["d_range"][0]), int(fixed["d_range"][1])
    k_lo, k_hi = int(fixed["k_range"][0]), int(fixed["k_range"][1])
    out = []
    # EUGkM degrades as d grows (at every fixed k)
    cells = growth_cells(table, EUGKM, "k", fixed["k"], d_lo, d_hi, ref)
    out.append(every_check(f"{n_eug_plain} degrades as d grows (§5.1, Figure 2)", [(lab, dec) for lab, dec, _ in cells],
                           f"growth of {n_eug} − baseline from d = {d_lo} to {d_hi} at each k",
                           why=claims.get("why", {}).get("eugkm_d", "")))
    # DPLloyd degrades as k grows (at every fixed d)
    cells = growth_cells(table, DPLLOYD, "d", fixed["d"], k_lo, k_hi)
    out.append(every_check(f"{n_dpl} degrades as k grows (§5.1, §6.1, Figure 2)", [(lab, dec) for lab, dec, _ in cells],
                           f"growth of {n_dpl} − baseline from k = {k_lo} to {k_hi} at each d",
                           why=claims.get("why", {}).get("dplloyd_k", "")))
    # DPLloyd more scalable in d than EUGkM: its gap grows less from d_lo to d_hi, at every fixed k
    cells = []
    for k in fixed["k"]:
        gd, ge = gap_growth(table, DPLLOYD, "k", k, d_lo, d_hi), gap_growth(table, EUGKM, "k", k, d_lo, d_hi, ref)
        if gd is None or ge is None:
            continue
        (td, sd_), (te, se) = gd, ge
        iv = linear_ci(td + [(-c, s) for c, s in te], sd_ - se)
        cells.append((f"k={k} (growth {n_dpl} {interval_text(linear_ci(td, sd_))}, {n_eug} "
                      f"{interval_text(linear_ci(te, se))}, difference {interval_text(iv)})", decision(iv, 0.0, "<")))
    out.append(every_check(f"{n_dpl} is more scalable in d than {n_eug_plain}: its gap to the baseline grows less "
                           f"from d = {d_lo} to d = {d_hi} at fixed k (§5.1, §6.2)", cells, "",
                           why=claims.get("why", {}).get("scalable_in_d", "")))
    # θ = 10 works well in most cases
    groups = sorted(set(rows_of(table, EUGKM)["group"]))
    others = [g for g in groups if g != ref]
    if others and ref in groups:
        slack = float(claims["theta_slack"])
        cells, same = [], []
        for ds in sorted(set(rows_of(table, EUGKM, ref)["dataset"])):
            r10 = row_of(table, ds, EUGKM, None, ref)
            decs = []
            for g in others:
                rg = row_of(table, ds, EUGKM, None, g)
                if rg is None:
                    continue
                if rg["cells_per_dim"] == r10["cells_per_dim"]:
                    same.append(f"{ds} {variants.get(g, g)}")
                iv = linear_ci([(1.0, stats_of(r10)), (-(1 + slack), stats_of(rg))])
                decs.append(decision(iv, 0.0, "<="))
            if decs:
                cells.append((ds, all_of(decs)))
        reference = variants.get(ref, ref)
        out.append(fraction_check(f"{reference} works well for {n_eug_plain} in most cases (§5.1)", cells,
                                  float(claims["majority"]),
                                  f"a dataset holds if {reference} is within {slack:.0%} of every other θ "
                                  f"({', '.join(variants.get(g, g) for g in others)}); same grid as {reference} "
                                  f"(identical mechanism): {', '.join(same) or 'none'}", strict=True,
                                  why=claims.get("why", {}).get("theta", "")))
    return out
