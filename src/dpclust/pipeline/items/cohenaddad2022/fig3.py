"""Figure 3 of Cohen-Addad et al. 2022: normalised k-median cost vs k on Covertype and HIGGS with
the scalable methods only (HST, Coreset, kvars; kmed++ and the converged reference run as normaliser
candidates).

Table and figure: the normalised table and its figure shared with Figure 2 (`common`). Claims
(§6), decided per ε with 95 % intervals of ratios of mean costs at every k: HST has the strongest
performance on `claims.strongest_dataset` (HST / Coreset and HST / kvars below 1); on
`claims.comparable_dataset` HST is comparable to Coreset (HST / Coreset within
`claims.comparable_band`); every private run spent exactly its ε.
"""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import dataset_name
from dpclust.pipeline.items.cohenaddad2022.common import (
    aggregate_normalised,
    beats,
    claim_per_epsilon,
    name,
    ratio_interval,
    render_normalised,
    spent_cells,
)

__all__ = ["aggregate_normalised", "check_fig3", "render_normalised"]


def check_fig3(table: pd.DataFrame, item) -> list[Check]:
    claims = item["claims"]
    checks = []
    hst, cor, kv = claims["hst"], claims["coreset"], claims["kvars"]
    strongest = claims["strongest_dataset"]
    for other in (cor, kv):
        claim = (f"{name(item, hst)} has the strongest performance on {dataset_name(item, strongest)} at "
                 f"ε = {{eps}} (mean cost / {name(item, other)}'s < 1 at every k)")
        checks += beats(table, item, strongest, hst, other, claim)
    ds = claims["comparable_dataset"]
    lo, hi = (float(v) for v in claims["comparable_band"])
    claim = (f"on {dataset_name(item, ds)} at ε = {{eps}} {name(item, hst)} is comparable to {name(item, cor)} "
             f"(mean cost ratio within [{lo:g}, {hi:g}] at every k)")
    checks += claim_per_epsilon(table, item, ds, hst, claim,
                                lambda k, eps: ratio_interval(table, ds, hst, cor, k, eps), lo, hi,
                                f"{name(item, hst)} / {name(item, cor)}")
    checks.append(spent_cells(table))
    return checks
