"""Figure 1 of Su et al. (2016): NICV vs ε of DPLloyd, EUGkM, PGkM, GkM and GkM-3K on the six
external datasets, with the §5.1 baseline dashed.

Aggregate: `aggregate_nicv` (items/common.py). Render: one panel per dataset of `options.panels`,
a line per algorithm of `figure.lines`. Checks: the comparisons of §5.1-§5.2, with the thresholds,
the low-/high-dimensional datasets and the exemption from `claims`.
"""

from __future__ import annotations

from ...aggregate import Check, fmt
from ...itemkit import availability, dataset_name, name
from .common import aggregate_nicv, available, cell, eps_values, frac, nicv_panels, plain_bools

__all__ = ["aggregate_nicv", "check_fig1", "render_fig1"]

DPLLOYD, EUGKM, PGKM, GKM, GKM3K = "su2016.dplloyd", "su2016.eugkm", "su2016.pgkm", "su2016.gkm", "su2016.gkm3k"


def render_fig1(table, item, stem):
    nicv_panels(table, item, stem, item["figure"]["lines"])


def _known(values):
    return [v for v in values if v == v]


@plain_bools
def check_fig1(table, item) -> list[Check]:
    claims = item["claims"]
    panels = (item.get("options") or {}).get("panels") or []
    avail = available(table, panels)
    eps = eps_values(table)
    n_gkm, n_dpl, n_eug, n_3k = (name(item, a) for a in (GKM, DPLLOYD, EUGKM, GKM3K))
    out = []
    if not avail:
        return [Check("Figure 1 claims", None, "no dataset available")]
    # 1. GkM is by far the worst (§5.2 "GkM is always much worse than others")
    worst = []
    for ds in avail:
        for e in eps:
            g = cell(table, ds, GKM, e)
            others = _known(cell(table, ds, a, e) for a in (DPLLOYD, EUGKM, PGKM, GKM3K))
            if g == g and others:
                worst.append(g >= max(others))
    f, n = frac(worst)
    need = float(claims["gkm_worst_fraction"])
    out.append(Check(f"{n_gkm} is the worst method (§5.1/§5.2)", None if n == 0 else f >= need,
                     f"{n_gkm} worst in {fmt(f * 100 if n else float('nan'), 3)}% of {n} (dataset, ε) cells "
                     f"(holds if ≥ {need:.0%})"))
    # 2. DPLloyd is the best interactive method, except possibly on one dataset at small ε
    exempt = claims["dplloyd_best_exempt"]
    ex_ds, ex_eps = exempt["dataset"], float(exempt["below_epsilon"])
    best, exc = [], []
    for ds in avail:
        for e in eps:
            dpl = cell(table, ds, DPLLOYD, e)
            others = _known(cell(table, ds, a, e) for a in (PGKM, GKM, GKM3K))
            if dpl != dpl or not others:
                continue
            if ds == ex_ds and e < ex_eps:
                exc.append(f"{dataset_name(item, ds)} ε={e:g}: {n_dpl} {fmt(dpl)} vs {name(item, PGKM)} "
                           f"{fmt(cell(table, ds, PGKM, e))}")
                continue
            best.append(dpl <= min(others))
    f, n = frac(best)
    out.append(Check(f"{n_dpl} is the best interactive method except possibly {dataset_name(item, ex_ds)} at "
                     f"ε < {ex_eps:g} (§5.1)",
                     None if n == 0 else f >= float(claims["dplloyd_best_fraction"]),
                     f"{n_dpl} best interactive in {sum(best)}/{n} cells; exempt cells: {'; '.join(exc) or 'none'}"))
    # 3. EUGkM beats DPLloyd on low-d datasets at small ε
    small_eps = float(claims["small_epsilon"])
    small = [e for e in eps if e <= small_eps]
    low = [d for d in claims["low_d"] if d in avail]
    res = [(cell(table, d, EUGKM, e), cell(table, d, DPLLOYD, e), d, e) for d in low for e in small]
    res = [r for r in res if r[0] == r[0] and r[1] == r[1]]
    out.append(Check(f"{n_eug} beats {n_dpl} on the low-dimensional datasets at small ε (≤ {small_eps:g}) (§5.1)",
                     None if not res else all(a < b for a, b, _, _ in res),
                     "; ".join(f"{dataset_name(item, d)} ε={e:g}: {n_eug} {fmt(a)} vs {n_dpl} {fmt(b)}"
                               for a, b, d, e in res) or "no low-d dataset available"))
    # 4. DPLloyd beats EUGkM on the high-dimensional datasets almost always
    high = [d for d in claims["high_d"] if d in avail]
    pairs = [(cell(table, d, DPLLOYD, e), cell(table, d, EUGKM, e)) for d in high for e in eps]
    res = [a < b for a, b in pairs if a == a and b == b]
    f, n = frac(res)
    need = float(claims["dplloyd_high_d_fraction"])
    out.append(Check(f"{n_dpl} beats {n_eug} on the high-dimensional datasets "
                     f"({', '.join(dataset_name(item, d) for d in claims['high_d'])}) in almost all ε (§5.1)",
                     None if n == 0 else f >= need,
                     f"{n_dpl} < {n_eug} in {sum(res)}/{n} cells on "
                     f"{', '.join(dataset_name(item, d) for d in high) or 'none'} (holds if ≥ {need:.0%})"))
    # 5. GkM-3K improves on GkM (§5.2)
    pairs = [(cell(table, d, GKM3K, e), cell(table, d, GKM, e)) for d in avail for e in eps]
    res = [a < b for a, b in pairs if a == a and b == b]
    f, n = frac(res)
    need = float(claims["gkm3k_fraction"])
    out.append(Check(f"{n_3k} is much better than {n_gkm} (§5.2)", None if n == 0 else f >= need,
                     f"{n_3k} < {n_gkm} in {sum(res)}/{n} cells (holds if ≥ {need:.0%})"))
    for ds in panels:
        if ds not in avail:
            out.append(Check(f"Figure 1 panel {dataset_name(item, ds)}", None, availability(table, ds)[1]))
    return out
