"""Figure 1 of Su et al. (2016): NICV vs ε of DPLloyd, EUGkM, PGkM, GkM and GkM-3K on the six
external datasets, with the §5.1 baseline dashed.

Aggregate: `aggregate_nicv` (items/common.py). Render: one panel per dataset of `options.panels`,
a line per algorithm of `figure.lines` (mean ± sd over runs). Checks: the comparisons of §5.1-§5.2,
each one sentence of the paper over its (dataset, ε) cells, decided by the claims engine
(`dpclust.pipeline.verdicts`) with the paper's quantifier, on Welch intervals of the differences of
mean NICVs relative to the comparator's mean (DPLloyd's sd and n are those of its 30 initial sets'
means); a cell of several comparisons ("worst of all", "best of the interactive methods") is their
min or max (`common.extreme_cell`). "Their gap becomes smaller as ε increases" (EUGkM vs DPLloyd on the low-d
datasets) is read at the ε grid's ends: the distance between the curves at the largest ε against
EUGkM's lead at the smallest (`_gap_shrinks`). The low-/high-dimensional datasets, the exemption and the
fractions of cells are from `claims`; a fraction that differs from the paper's quantifier (e.g. 90 %
where §5.2 says "always") is our reading, reported beside the paper's as an "alternative reading".
"""

from __future__ import annotations

import dataclasses

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    available,
    cell_stats,
    claim_check,
    coverage,
    eps_values,
    nicv_panels,
    no_cell,
    plain_bools,
    share_check,
)
from dpclust.pipeline.verdicts import (
    QUANTIFIERS,
    Directional,
    every_dataset,
    extreme_cell,
    linear_cell,
    per,
    relative_cell,
)

__all__ = ["aggregate", "checks", "render"]

aggregate = aggregate_nicv   # the NICV table the su2016 items share (common.py)

DPLLOYD, EUGKM, PGKM, GKM, GKM3K = "su2016.dplloyd", "su2016.eugkm", "su2016.pgkm", "su2016.gkm", "su2016.gkm3k"
#: cells are (mean_a − mean_b) / mean_b of the (dataset, ε) cell (see `relative_cell`)
RELATIVE = "cells: (mean NICV of the first − the second) / the second's, Welch interval"


def render(table, item, stem):
    nicv_panels(table, item, stem, item["figure"]["lines"])


def _relative(table, ds, e, a, b, label):
    """The cell (mean_a − mean_b)/mean_b in (ds, ε), or None if either is absent."""
    sa, sb = cell_stats(table, ds, a, e), cell_stats(table, ds, b, e)
    return None if sa is None or sb is None else relative_cell(label, sa, sb)


def _label(item, ds, e):
    return f"{dataset_name(item, ds)} ε={e:g}"


def _compound(item, ds, e, comps, largest: bool, lead: str):
    """One (dataset, ε) cell of several comparisons (their max or min), its label naming them."""
    parts = ", ".join(f"{c.label} {c.estimate:+.3g}" for c in comps)
    return extreme_cell(f"{_label(item, ds, e)} ({'max' if largest else 'min'} over {lead} {parts})", comps, largest)


def _gap_shrinks(table, item, ds):
    """The cell of §5.1's "their gap becomes smaller as ε increases" on one dataset, read at the ε
    grid's ends (the smallest and largest ε at which both DPLloyd and EUGkM ran): the distance between
    the two curves at the largest ε, |DPLloyd − EUGkM|, against EUGkM's lead DPLloyd − EUGkM at the
    smallest ε. The cell is (|gap_hi| − gap_lo)/gap_lo, the larger of (±gap_hi − gap_lo)/gap_lo
    (`extreme_cell`; Welch–Satterthwaite over the four means), < 0 when the gap shrinks; dividing by
    the lead makes the rubric's null margin (±1 % of the threshold) 1 % of the gap at the smallest ε.
    None without two such ε."""
    both = [e for e in eps_values(table)
            if cell_stats(table, ds, DPLLOYD, e) is not None and cell_stats(table, ds, EUGKM, e) is not None]
    if len(both) < 2:
        return None
    lo, hi = both[0], both[-1]
    d_lo, e_lo, d_hi, e_hi = (cell_stats(table, ds, a, e) for e in (lo, hi) for a in (DPLLOYD, EUGKM))
    lead, far = d_lo[0] - e_lo[0], d_hi[0] - e_hi[0]
    down = [(-1.0, d_lo), (1.0, e_lo)]
    comps = [linear_cell("+", [(1.0, d_hi), (-1.0, e_hi), *down], scale=per(lead)),
             linear_cell("−", [(-1.0, d_hi), (1.0, e_hi), *down], scale=per(lead))]
    return extreme_cell(f"{dataset_name(item, ds)} ε={lo:g}→{hi:g} (gap {lead:.3g} → {far:.3g})", comps,
                        largest=True)


def _alternative(claim, cells, test, need, quantifier, detail):
    """Our fraction reading of a sentence, when it differs from the paper's quantifier."""
    share, strict = QUANTIFIERS[quantifier]
    if need == share and not strict:
        return []
    return [share_check(f"alternative reading: {claim}", cells, test, need, detail)]


@plain_bools
def checks(table, item) -> list[Check]:
    claims = item["claims"]
    whys = claims.get("why") or {}
    panels = (item.get("options") or {}).get("panels") or []
    planned, missing = coverage(table, panels)
    names = {ds: dataset_name(item, ds) for ds in panels}
    avail = available(table, panels)
    eps = eps_values(table)
    n_gkm, n_dpl, n_eug, n_3k = (name(item, a) for a in (GKM, DPLLOYD, EUGKM, GKM3K))
    if not avail:
        return [no_cell("Figure 1 claims", "no dataset available")]
    out = []

    def over(check, datasets=None):
        sub = planned if datasets is None else [d for d in planned if d in datasets]
        return every_dataset(check, sub, {d: r for d, r in missing.items() if d in sub}, names)

    # 1. GkM is the worst: §5.2 "GkM is always much worse than others" — "always": every (dataset, ε)
    #    cell; a cell is the smallest of (GkM − other)/other over the other methods (> 0: GkM worst)
    cells = []
    for ds in avail:
        for e in eps:
            comps = [c for o in (DPLLOYD, EUGKM, PGKM, GKM3K)
                     if (c := _relative(table, ds, e, GKM, o, f"− {name(item, o)}")) is not None]
            if cell_stats(table, ds, GKM, e) is not None and comps:
                cells.append(_compound(item, ds, e, comps, False, f"{n_gkm}"))
    test = Directional(">", 0.0)
    claim = f"{n_gkm} is the worst method (§5.1/§5.2)"
    detail = f"{RELATIVE}; a cell is {n_gkm} vs its closest competitor"
    out.append(over(claim_check(claim, cells, test, "every", why=whys.get("gkm_worst", ""), detail=detail)))
    need = float(claims["gkm_worst_fraction"])
    out += [over(c) for c in _alternative(f"{n_gkm} is the worst method in at least {need:.0%} of the (dataset, ε) "
                                          "cells (REC reading of §5.2's 'always')", cells, test, need, "every", detail)]
    # 2. DPLloyd is the best interactive method, except possibly on S1 at small ε (§5.1; unqualified
    #    "best": every cell); a cell is the largest of (DPLloyd − other)/other over PGkM, GkM, GkM-3K
    exempt = claims["dplloyd_best_exempt"]
    ex_ds, ex_eps = exempt["dataset"], float(exempt["below_epsilon"])
    cells, exc = [], []
    for ds in avail:
        for e in eps:
            if cell_stats(table, ds, DPLLOYD, e) is None:
                continue
            comps = [c for o in (PGKM, GKM, GKM3K)
                     if (c := _relative(table, ds, e, DPLLOYD, o, f"− {name(item, o)}")) is not None]
            if not comps:
                continue
            if ds == ex_ds and e < ex_eps:
                exc.append(f"{_label(item, ds, e)}: " + ", ".join(f"{n_dpl} {c.label} {c.estimate:+.3g}"
                                                                   for c in comps))
                continue
            cells.append(_compound(item, ds, e, comps, True, n_dpl))
    test = Directional("<", 0.0)
    claim = (f"{n_dpl} is the best interactive method except possibly "
             f"{dataset_name(item, ex_ds)} at ε < {ex_eps:g} (§5.1)")
    detail = f"{RELATIVE}; exempt cells: {'; '.join(exc) or 'none'}"
    out.append(over(claim_check(claim, cells, test, "every", why=whys.get("dplloyd_best", ""), detail=detail)))
    need = float(claims["dplloyd_best_fraction"])
    out += [over(c) for c in _alternative(f"{claim} in at least {need:.0%} of the cells", cells, test, need,
                                          "every", detail)]
    # 3. EUGkM beats DPLloyd on the low-d datasets at small ε (§5.1; unqualified: every cell)
    small_eps = float(claims["small_epsilon"])
    low = [d for d in claims["low_d"] if d in avail]
    cells = [c for ds in low for e in eps if e <= small_eps
             if (c := _relative(table, ds, e, EUGKM, DPLLOYD, _label(item, ds, e))) is not None]
    out.append(over(claim_check(f"{n_eug} beats {n_dpl} on the low-dimensional datasets at small ε (≤ {small_eps:g}) "
                                "(§5.1)", cells, Directional("<", 0.0), "every", why=whys.get("eugkm_low_d", ""),
                                detail=f"{RELATIVE} ({n_eug} vs {n_dpl})"), claims["low_d"]))
    # 3b. §5.1 "in the four low dimensional datasets (...), EUGkM clearly outperforms DPLloyd at small ε value
    #    and their gap becomes smaller as ε increases": a trend over the ε grid, read at its ends (decided
    #    before any verdict): on every low-d dataset (unqualified: every cell) the distance |DPLloyd − EUGkM|
    #    at the largest ε is below EUGkM's lead at the smallest ε (`_gap_shrinks`); rubric "smaller":
    #    one-sided, default null margin ±1 % of the threshold (the lead at the smallest ε)
    cells = [c for ds in low if (c := _gap_shrinks(table, item, ds)) is not None]
    reading = ("reading: the gap at the grid's ends, |DPLloyd − EUGkM| at the largest ε < EUGkM's lead at the "
               "smallest ε, per dataset; null margin ±1 % of that lead (rubric default)")
    check = claim_check(f"The gap between {n_eug} and {n_dpl} on the low-dimensional datasets becomes smaller as ε "
                        "increases (§5.1)", cells, Directional("<", 0.0), "every", why=whys.get("gap_shrinks", ""),
                        detail=f"cells: (|gap at the largest ε| − gap at the smallest ε) / gap at the smallest ε, "
                               f"gap = mean NICV of {n_dpl} − {n_eug}; Welch–Satterthwaite over the four means, the "
                               "larger of the two signs of the far gap")
    out.append(over(dataclasses.replace(check, rule=f"{check.rule}; {reading}"), claims["low_d"]))
    # 4. DPLloyd beats EUGkM on the high-d datasets: §5.1 "in almost all ε" — "almost all": at least
    #    80 % of the decided cells
    high = [d for d in claims["high_d"] if d in avail]
    cells = [c for ds in high for e in eps
             if (c := _relative(table, ds, e, DPLLOYD, EUGKM, _label(item, ds, e))) is not None]
    claim = (f"{n_dpl} beats {n_eug} on the high-dimensional datasets "
             f"({', '.join(dataset_name(item, d) for d in claims['high_d'])}) in almost all ε (§5.1)")
    test, detail = Directional("<", 0.0), f"{RELATIVE} ({n_dpl} vs {n_eug})"
    out.append(over(claim_check(claim, cells, test, "almost all", why=whys.get("dplloyd_high_d", ""), detail=detail),
                    claims["high_d"]))
    need = float(claims["dplloyd_high_d_fraction"])
    out += [over(c, claims["high_d"]) for c in _alternative(f"{claim}: at least {need:.0%} of the cells", cells, test,
                                                            need, "almost all", detail)]
    # 5. GkM-3K improves on GkM: §5.2 "GkM-3K is much better than GkM" — unqualified: every cell
    cells = [c for ds in avail for e in eps
             if (c := _relative(table, ds, e, GKM3K, GKM, _label(item, ds, e))) is not None]
    test, detail = Directional("<", 0.0), f"{RELATIVE} ({n_3k} vs {n_gkm})"
    out.append(over(claim_check(f"{n_3k} is much better than {n_gkm} (§5.2)", cells, test, "every",
                                why=whys.get("gkm3k", ""), detail=detail)))
    need = float(claims["gkm3k_fraction"])
    out += [over(c) for c in _alternative(f"{n_3k} is much better than {n_gkm} in at least {need:.0%} of the cells "
                                          "(REC reading of §5.2)", cells, test, need, "every", detail)]
    for ds in panels:
        if ds not in avail:
            out.append(no_cell(f"Figure 1 panel {dataset_name(item, ds)}", availability(table, ds)[1],
                               kind="bookkeeping"))
    return out
