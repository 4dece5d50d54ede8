"""Figure 3 of Cohen-Addad et al. 2022: normalised k-median cost vs k on Covertype and HIGGS with
the scalable methods only (HST, Coreset, kvars; kmed++ runs as a normaliser candidate).

Table and figure: the normalised table and its figure shared with Figure 2 (`common`). Claims
(§6): HST has the strongest performance on `claims.strongest_dataset` (below Coreset and kvars at
every k); on `claims.comparable_dataset` HST is comparable to Coreset (cost ratio within
`claims.comparable_band` at every k); every private run spent exactly its ε.
"""

from __future__ import annotations

import pandas as pd

from ...aggregate import Check, fmt
from ...itemkit import dataset_name, name
from .common import (
    aggregate_normalised,
    beats,
    ratios,
    render_normalised,
    spent_cells,
    why_not_evaluable,
)

__all__ = ["aggregate_normalised", "check_fig3", "render_normalised"]


def check_fig3(table: pd.DataFrame, item) -> list[Check]:
    claims = item["claims"]
    checks = []
    hst, cor, kv = claims["hst"], claims["coreset"], claims["kvars"]
    strongest = claims["strongest_dataset"]
    for other in (cor, kv):
        holds, detail = beats(table, item, strongest, hst, other)
        checks.append(Check(f"{name(item, hst)} has the strongest performance on {dataset_name(item, strongest)} "
                            f"(below {name(item, other)} at every k)", holds, detail))
    ds = claims["comparable_dataset"]
    lo, hi = (float(v) for v in claims["comparable_band"])
    claim = (f"on {dataset_name(item, ds)} {name(item, hst)} is comparable to {name(item, cor)} "
             f"(ratio within [{lo:g}, {hi:g}] at every k)")
    r = ratios(table, ds, hst, cor)
    if r:
        checks.append(Check(claim, all(lo <= v <= hi for v in r.values()),
                            ", ".join(f"k={k}: {fmt(v, 3)}" for k, v in r.items())))
    else:
        checks.append(Check(claim, None, why_not_evaluable(table, item, ds)))
    checks.append(spent_cells(table))
    return checks
