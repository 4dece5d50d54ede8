"""Figure 1 of Su et al. (2016): NICV vs ε of DPLloyd, EUGkM, PGkM, GkM and GkM-3K on the six
external datasets, with the §5.1 baseline dashed.

Aggregate: `aggregate_nicv` (items/common.py). Render: one panel per dataset of `options.panels`,
a line per algorithm of `figure.lines` (mean ± sd over runs). Checks: the comparisons of §5.1-§5.2,
each one sentence of the paper over its (dataset, ε) cells, declared in the item's
`claims.declared` (`dpclust.pipeline.declared`) and decided by the claims engine with the paper's
quantifier, on Welch intervals of the differences of mean NICVs relative to the comparator's mean
(DPLloyd's sd and n are those of its 30 initial sets' means); a cell of several comparisons ("worst
of all", "best of the interactive methods") is their min or max (`verdicts.extreme_cell`). "Their
gap becomes smaller as ε increases" (EUGkM vs DPLloyd on the low-d datasets) is read at the ε grid's
ends: the distance between the curves at the largest ε against EUGkM's lead at the smallest
(`_gap_shrinks`, the item's one hook). The low-/high-dimensional datasets, the exemption and the
fractions of cells are from `claims`; a fraction that differs from the paper's quantifier (e.g. 90 %
where §5.2 says "always") is our reading, reported beside the paper's as an "alternative reading".
"""

from __future__ import annotations

import dataclasses

from dpclust.pipeline import declared
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import availability, dataset_name, name
from dpclust.pipeline.items.su2016.common import (
    aggregate_nicv,
    available,
    cell_stats,
    eps_values,
    nicv_panels,
    nicv_source,
    over_datasets,
)
from dpclust.pipeline.verdicts import (
    Directional,
    claim_check,
    extreme_cell,
    linear_cell,
    no_cell,
    per,
)

__all__ = ["aggregate", "checks", "render"]

aggregate = aggregate_nicv   # the NICV table the su2016 items share (common.py)

DPLLOYD, EUGKM = "su2016.dplloyd", "su2016.eugkm"
#: cells are (mean_a − mean_b) / mean_b of the (dataset, ε) cell (see `relative_cell`)
RELATIVE = "cells: (mean NICV of the first − the second) / the second's, Welch interval"


def render(table, item, stem):
    nicv_panels(table, item, stem, item["figure"]["lines"])


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


def _gap_claim(table, item) -> list[Check]:
    """§5.1 "in the four low dimensional datasets (...), EUGkM clearly outperforms DPLloyd at small ε value
    and their gap becomes smaller as ε increases": a trend over the ε grid, read at its ends (decided
    before any verdict): on every low-d dataset (unqualified: every cell) the distance |DPLloyd − EUGkM|
    at the largest ε is below EUGkM's lead at the smallest ε (`_gap_shrinks`); rubric "smaller":
    one-sided, default null margin ±1 % of the threshold (the lead at the smallest ε)."""
    claims = item["claims"]
    panels = (item.get("options") or {}).get("panels") or []
    n_dpl, n_eug = name(item, DPLLOYD), name(item, EUGKM)
    low = [d for d in claims["low_d"] if d in available(table, panels)]
    cells = [c for ds in low if (c := _gap_shrinks(table, item, ds)) is not None]
    reading = ("reading: the gap at the grid's ends, |DPLloyd − EUGkM| at the largest ε < EUGkM's lead at the "
               "smallest ε, per dataset; null margin ±1 % of that lead (rubric default)")
    check = claim_check(f"The gap between {n_eug} and {n_dpl} on the low-dimensional datasets becomes smaller as ε "
                        "increases (§5.1)", cells, Directional("<", 0.0), "every",
                        why=(claims.get("why") or {}).get("gap_shrinks", ""),
                        detail=f"cells: (|gap at the largest ε| − gap at the smallest ε) / gap at the smallest ε, "
                               f"gap = mean NICV of {n_dpl} − {n_eug}; Welch–Satterthwaite over the four means, the "
                               "larger of the two signs of the far gap")
    check = dataclasses.replace(check, rule=f"{check.rule}; {reading}")
    return [over_datasets(check, table, item, claims["low_d"])]


#: the claims of Figure 1 that no declaration expresses (config/papers/su2016.yaml, claims.declared)
HOOKS = {"gap_shrinks": _gap_claim}


def checks(table, item) -> list[Check]:
    """The declared claims of §5.1-§5.2 (config/papers/su2016.yaml, fig1 `claims.declared`), then a
    bookkeeping row per panel without data."""
    panels = (item.get("options") or {}).get("panels") or []
    avail = available(table, panels)
    if not avail:
        return [no_cell("Figure 1 claims", "no dataset available")]
    out = declared.decide_all(table, item, nicv_source(table, item, RELATIVE), HOOKS)
    for ds in panels:
        if ds not in avail:
            out.append(no_cell(f"Figure 1 panel {dataset_name(item, ds)}", availability(table, ds)[1],
                               kind="bookkeeping"))
    return out
