"""Figure 1 of Su et al. (2016): NICV vs ε of DPLloyd, EUGkM, PGkM, GkM and GkM-3K on the six
external datasets, with the §5.1 baseline dashed.

Aggregate: `aggregate_nicv` (items/common.py). Render: one panel per dataset of `options.panels`,
a line per algorithm of `figure.lines` (mean ± sd over runs). Checks: the comparisons of §5.1-§5.2,
each decided on Welch intervals of the differences of mean NICVs per (dataset, ε) cell (DPLloyd's
sd and n are those of its 30 initial sets' means), with the thresholds, the low-/high-dimensional
datasets and the exemption from `claims`.
"""

from __future__ import annotations

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    all_of,
    available,
    cell_stats,
    decision,
    diff_of,
    eps_values,
    every_check,
    fraction_check,
    interval_text,
    nicv_panels,
    plain_bools,
)

__all__ = ["aggregate_nicv", "check_fig1", "render_fig1"]

DPLLOYD, EUGKM, PGKM, GKM, GKM3K = "su2016.dplloyd", "su2016.eugkm", "su2016.pgkm", "su2016.gkm", "su2016.gkm3k"


def render_fig1(table, item, stem):
    nicv_panels(table, item, stem, item["figure"]["lines"])


def _compare(table, ds, e, a, b, side):
    """(decision of mean_a − mean_b `side` 0, interval) in the cell (ds, ε); (None, None) if absent."""
    sa, sb = cell_stats(table, ds, a, e), cell_stats(table, ds, b, e)
    if sa is None or sb is None:
        return None, None
    iv = diff_of(sa, sb)
    return decision(iv, 0.0, side), iv


def _label(item, ds, e):
    return f"{dataset_name(item, ds)} ε={e:g}"


@plain_bools
def check_fig1(table, item) -> list[Check]:
    claims = item["claims"]
    panels = (item.get("options") or {}).get("panels") or []
    avail = available(table, panels)
    eps = eps_values(table)
    n_gkm, n_dpl, n_eug, n_3k = (name(item, a) for a in (GKM, DPLLOYD, EUGKM, GKM3K))
    if not avail:
        return [Check("Figure 1 claims", None, "no dataset available")]
    out = []
    # 1. GkM is by far the worst (§5.2 "GkM is always much worse than others")
    cells = []
    for ds in avail:
        for e in eps:
            comps = [(other, *_compare(table, ds, e, GKM, other, ">")) for other in (DPLLOYD, EUGKM, PGKM, GKM3K)
                     if cell_stats(table, ds, other, e) is not None]
            if cell_stats(table, ds, GKM, e) is not None and comps:
                worst = [f"− {name(item, o)} {interval_text(iv)}" for o, dec, iv in comps if dec is not True]
                cells.append((f"{_label(item, ds, e)}" + (f" ({n_gkm} {'; '.join(worst)})" if worst else ""),
                              all_of(dec for _, dec, _ in comps)))
    need = float(claims["gkm_worst_fraction"])
    out.append(fraction_check(f"{n_gkm} is the worst method (§5.1/§5.2)", cells, need,
                              f"a cell holds if {n_gkm}'s mean NICV is above every other method's (Welch 95 %)",
                              why=claims.get("why", {}).get("gkm_worst", "")))
    # 2. DPLloyd is the best interactive method, except possibly on one dataset at small ε
    exempt = claims["dplloyd_best_exempt"]
    ex_ds, ex_eps = exempt["dataset"], float(exempt["below_epsilon"])
    cells, exc = [], []
    for ds in avail:
        for e in eps:
            if cell_stats(table, ds, DPLLOYD, e) is None:
                continue
            comps = [(other, *_compare(table, ds, e, DPLLOYD, other, "<")) for other in (PGKM, GKM, GKM3K)]
            comps = [c for c in comps if c[2] is not None]
            if not comps:
                continue
            if ds == ex_ds and e < ex_eps:
                exc.append(f"{_label(item, ds, e)}: " + ", ".join(f"{n_dpl} − {name(item, o)} {interval_text(iv)}"
                                                                   for o, _, iv in comps))
                continue
            lose = [f"− {name(item, o)} {interval_text(iv)}" for o, d, iv in comps if d is not True]
            cells.append((f"{_label(item, ds, e)}" + (f" ({n_dpl} {'; '.join(lose)})" if lose else ""),
                          all_of(d for _, d, _ in comps)))
    need = float(claims["dplloyd_best_fraction"])
    out.append(fraction_check(f"{n_dpl} is the best interactive method except possibly "
                              f"{dataset_name(item, ex_ds)} at ε < {ex_eps:g} (§5.1)", cells, need,
                              f"exempt cells: {'; '.join(exc) or 'none'}",
                              why=claims.get("why", {}).get("dplloyd_best", "")))
    # 3. EUGkM beats DPLloyd on low-d datasets at small ε
    small_eps = float(claims["small_epsilon"])
    low = [d for d in claims["low_d"] if d in avail]
    cells = []
    for ds in low:
        for e in (x for x in eps if x <= small_eps):
            dec, iv = _compare(table, ds, e, EUGKM, DPLLOYD, "<")
            if iv is not None:
                cells.append((f"{_label(item, ds, e)} ({n_eug} − {n_dpl} {interval_text(iv)})", dec))
    out.append(every_check(f"{n_eug} beats {n_dpl} on the low-dimensional datasets at small ε (≤ {small_eps:g}) (§5.1)",
                           cells, "", why=claims.get("why", {}).get("eugkm_low_d", "")))
    # 4. DPLloyd beats EUGkM on the high-dimensional datasets almost always
    high = [d for d in claims["high_d"] if d in avail]
    cells = []
    for ds in high:
        for e in eps:
            dec, iv = _compare(table, ds, e, DPLLOYD, EUGKM, "<")
            if iv is not None:
                cells.append((f"{_label(item, ds, e)} ({n_dpl} − {n_eug} {interval_text(iv)})", dec))
    need = float(claims["dplloyd_high_d_fraction"])
    why = claims.get("why", {}).get("dplloyd_high_d", "")
    out.append(fraction_check(f"{n_dpl} beats {n_eug} on the high-dimensional datasets "
                              f"({', '.join(dataset_name(item, d) for d in claims['high_d'])}) in almost all ε (§5.1)",
                              cells, need, "", why=why))
    # 5. GkM-3K improves on GkM (§5.2)
    cells = []
    for ds in avail:
        for e in eps:
            dec, iv = _compare(table, ds, e, GKM3K, GKM, "<")
            if iv is not None:
                cells.append((f"{_label(item, ds, e)} ({n_3k} − {n_gkm} {interval_text(iv)})", dec))
    need = float(claims["gkm3k_fraction"])
    out.append(fraction_check(f"{n_3k} is much better than {n_gkm} (§5.2)", cells, need,
                              why=claims.get("why", {}).get("gkm3k", "")))
    for ds in panels:
        if ds not in avail:
            out.append(Check(f"Figure 1 panel {dataset_name(item, ds)}", None, availability(table, ds)[1]))
    return out
