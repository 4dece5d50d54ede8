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
* "θ = 10 works well in most cases": on more than half of the datasets (the rubric's "most") EUGkM's
  gap to the baseline (the figure's cell value) at θ = 10 is within a factor 1 + `theta_slack` of
  every other θ's: gap₁₀ − (1 + slack)·gap_θ ≤ 0. (On NICV itself the factor could not fail at low d,
  where the gaps are 1e-5 beside an NICV of 0.07.)

Each is decided by the claims engine (`dpclust.pipeline.verdicts`): a growth is divided by the
method's mean NICV at the low end, a difference of growths by EUGkM's there, a θ comparison by the
other θ's gap, so that the rubric's null margin is 1 % of that reference (`common.linear_cell`).
"""

from __future__ import annotations

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    gap_growth,
    heatmaps,
    plain_bools,
    row_of,
    rows_of,
    stats_of,
    variant_name,
)
from dpclust.pipeline.verdicts import Directional, claim_check, extreme_cell, linear_cell, per

__all__ = ["aggregate", "checks", "render"]

aggregate = aggregate_nicv   # the NICV table the su2016 items share (common.py)

DPLLOYD, EUGKM = "su2016.dplloyd", "su2016.eugkm"


def render(table, item, stem):
    heatmaps(table, item, stem)


def growth_cell(table, algorithm, fixed, v, lo, hi, group=None, label=""):
    """The growth of an algorithm's gap to the baseline from `lo` to `hi` at fixed = v, relative to
    its mean NICV at the low end; None without both cells."""
    g = gap_growth(table, algorithm, fixed, v, lo, hi, group)
    if g is None:
        return None
    terms, shift = g
    return linear_cell(f"{fixed}={v}{label}", terms, shift, scale=per(terms[1][1][0]))


def growth_difference_cell(table, fixed, v, lo, hi, a, b, group_a=None, group_b=None, label=""):
    """growth(a) − growth(b) of the gaps from `lo` to `hi` at fixed = v (the baselines cancel),
    relative to b's mean NICV at the low end; None without all four cells."""
    ga, gb = gap_growth(table, a, fixed, v, lo, hi, group_a), gap_growth(table, b, fixed, v, lo, hi, group_b)
    if ga is None or gb is None:
        return None
    (ta, sa), (tb, sb) = ga, gb
    return linear_cell(f"{fixed}={v}{label}", ta + [(-c, s) for c, s in tb], sa - sb, scale=per(tb[1][1][0]))


@plain_bools
def checks(table, item) -> list[Check]:
    claims = item["claims"]
    whys = claims.get("why") or {}
    ref, variants = claims["reference"], claims.get("variants") or {}
    n_eug, n_dpl = variant_name(item, EUGKM, ref, variants), variant_name(item, DPLLOYD, None, variants)
    n_eug_plain = variant_name(item, EUGKM, None, variants)
    fixed = claims["fixed"]                      # the k (and d) values at which growth is measured
    d_lo, d_hi = int(fixed["d_range"][0]), int(fixed["d_range"][1])
    k_lo, k_hi = int(fixed["k_range"][0]), int(fixed["k_range"][1])
    out = []
    # EUGkM degrades as d grows (§5.1; unqualified: at every fixed k)
    cells = [c for k in fixed["k"] if (c := growth_cell(table, EUGKM, "k", k, d_lo, d_hi, ref)) is not None]
    out.append(claim_check(f"{n_eug_plain} degrades as d grows (§5.1, Figure 2)", cells, Directional(">", 0.0),
                           "every", why=whys.get("eugkm_d", ""),
                           detail=f"cells: growth of {n_eug} − baseline from d = {d_lo} to {d_hi} at each k, "
                                  f"relative to its NICV at d = {d_lo}"))
    # DPLloyd degrades as k grows (§5.1, §6.1; unqualified: at every fixed d)
    cells = [c for d in fixed["d"] if (c := growth_cell(table, DPLLOYD, "d", d, k_lo, k_hi)) is not None]
    out.append(claim_check(f"{n_dpl} degrades as k grows (§5.1, §6.1, Figure 2)", cells, Directional(">", 0.0),
                           "every", why=whys.get("dplloyd_k", ""),
                           detail=f"cells: growth of {n_dpl} − baseline from k = {k_lo} to {k_hi} at each d, "
                                  f"relative to its NICV at k = {k_lo}"))
    # DPLloyd more scalable in d than EUGkM (§5.1, §6.2; unqualified: at every fixed k): its gap grows
    # less from d_lo to d_hi
    cells = []
    for k in fixed["k"]:
        gd, ge = growth_cell(table, DPLLOYD, "k", k, d_lo, d_hi), growth_cell(table, EUGKM, "k", k, d_lo, d_hi, ref)
        if gd is None or ge is None:
            continue
        label = f" (relative growth {n_dpl} {gd.estimate:.3g}, {n_eug} {ge.estimate:.3g}; difference)"
        cells.append(growth_difference_cell(table, "k", k, d_lo, d_hi, DPLLOYD, EUGKM, None, ref, label))
    out.append(claim_check(f"{n_dpl} is more scalable in d than {n_eug_plain}: its gap to the baseline grows less "
                           f"from d = {d_lo} to d = {d_hi} at fixed k (§5.1, §6.2)", cells, Directional("<", 0.0),
                           "every", why=whys.get("scalable_in_d", ""),
                           detail=f"cells: growth of {n_dpl}'s gap − growth of {n_eug}'s, relative to {n_eug}'s "
                                  f"NICV at d = {d_lo}"))
    # θ = 10 works well "in most cases" (§5.1): on more than half of the datasets, its gap to the
    # baseline b within a factor 1 + slack of every other θ's (a cell: the largest of
    # (gap₁₀ − (1 + slack)·gap_θ)/gap_θ, gap = mean − b, i.e. mean₁₀ − (1 + slack)·mean_θ + slack·b)
    groups = sorted(set(rows_of(table, EUGKM)["group"]))
    others = [g for g in groups if g != ref]
    if others and ref in groups:
        slack = float(claims["theta_slack"])
        cells, same = [], []
        for ds in sorted(set(rows_of(table, EUGKM, ref)["dataset"])):
            r10 = row_of(table, ds, EUGKM, None, ref)
            comps = []
            for g in others:
                rg = row_of(table, ds, EUGKM, None, g)
                if rg is None:
                    continue
                if rg["cells_per_dim"] == r10["cells_per_dim"]:
                    same.append(f"{ds} {variants.get(g, g)}")
                sg, base = stats_of(rg), float(r10["baseline"])
                comps.append(linear_cell(f"vs {variants.get(g, g)}", [(1.0, stats_of(r10)), (-(1 + slack), sg)],
                                         slack * base, scale=per(sg[0] - base)))
            if comps:
                parts = ", ".join(f"{c.label} {c.estimate:+.3g}" for c in comps)
                cells.append(extreme_cell(f"{ds} (max over {parts})", comps, largest=True))
        reference = variants.get(ref, ref)
        # "within c×": one-sided, ratio − c ≤ 0; the null margin is 1 % of c (docs/VERDICTS.md)
        test = Directional("<=", 0.0, null_margin=0.01 * (1 + slack))
        out.append(claim_check(f"{reference} works well for {n_eug_plain} in most cases (§5.1)", cells, test, "most",
                               why=whys.get("theta", ""),
                               detail=f"a dataset holds if {reference}'s gap to the baseline is within a factor "
                                      f"{1 + slack:g} of every other θ's "
                                      f"({', '.join(variants.get(g, g) for g in others)}): "
                                      f"cells (gap_{reference} − {1 + slack:g}·gap_θ)/gap_θ; same grid as {reference} "
                                      f"(identical mechanism): {', '.join(same) or 'none'}; degenerate guard "
                                      "(docs/VERDICTS.md, within c×) not applied: the table records no non-empty "
                                      "clusters"))
    return out
