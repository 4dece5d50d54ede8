"""Figure 2 of Cohen-Addad et al. 2022: normalised k-median cost vs k on Skin Segmentation
(SKINTYPE) and Shuttle, every method (HST, kmed++, Private Lloyd, Coreset, Balcan et al., kvars) and
our converged non-private reference, over a grid of ε (the paper's ε is lost in the extracted text).

Table and figure: the normalised table and its figure shared with Figure 3 (`common`): one row of
panels per ε, then a row with HST's and Coreset's mean cost / Balcan et al.'s across ε.

Claims (§6), each decided per ε with 95 % intervals of ratios of mean costs (`claims.ratio_ci`) at
every k (`claims.every`):
  * "the Balcan et al. algorithm ... is consistently outperformed by our algorithm and the coreset
    algorithm" on `claims.beat_datasets`: HST / Balcan and Coreset / Balcan below 1;
  * "on SKYNTYPE our algorithm achieves a performance that is essentially the same as the
    non-private baseline": HST / the best non-private solution found (the lower mean of kmed++ and
    the converged reference, a constant) at most `claims.close_ratio`;
  * every private run spent exactly its ε.
A claim whose verdict differs across the ε grid "depends on a lost parameter: ε".
"""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import dataset_name
from dpclust.pipeline.items.cohenaddad2022.common import (
    aggregate_normalised,
    beats,
    best_nonprivate,
    claim_per_epsilon,
    name,
    ratio_to_constant,
    render_normalised,
    spent_cells,
)

__all__ = ["aggregate_normalised", "check_fig2", "render_normalised"]


def close_to_nonprivate(table: pd.DataFrame, item) -> list[Check]:
    """Per ε: HST's mean cost / the best non-private mean cost at (dataset, k) ≤ `claims.close_ratio`."""
    claims = item["claims"]
    ds, thr, hst = claims["close_dataset"], float(claims["close_ratio"]), claims["hst"]
    nonprivate = list(claims["nonprivate"])

    def interval(k, eps):
        best = best_nonprivate(table, ds, k, nonprivate)
        return None if best is None else ratio_to_constant(table, ds, hst, k, eps, best[1])

    claim = (f"{name(item, hst)} is essentially the same as the best non-private solution "
             f"({' / '.join(name(item, a) for a in nonprivate)}) on {dataset_name(item, ds)} at ε = {{eps}} "
             f"(mean cost ratio <= {thr:g} at every k)")
    return claim_per_epsilon(table, item, ds, hst, claim, interval, None, thr,
                             f"{name(item, hst)} / best non-private")


def check_fig2(table: pd.DataFrame, item) -> list[Check]:
    claims = item["claims"]
    checks = []
    for who in ("hst", "coreset"):
        for ds in claims["beat_datasets"]:
            checks += beats(table, item, ds, claims[who], claims["balcan"])
    checks += close_to_nonprivate(table, item)
    checks.append(spent_cells(table))
    return checks
