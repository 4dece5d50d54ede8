"""Figure 2 of Cohen-Addad et al. 2022: normalised k-median cost vs k on Skin Segmentation
(SKINTYPE) and Shuttle, every method (HST, kmed++, Private Lloyd, Coreset, Balcan et al., kvars).

Table and figure: the normalised table and its figure shared with Figure 3 (`common`). Claims
(§6): HST and Coreset beat Balcan et al. on the claimed datasets (lower mean k-median cost at every
k); HST is close to the non-private kmed++ on `claims.close_dataset` (cost ratio at most
`claims.close_ratio` at every k); every private run spent exactly its ε.
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

__all__ = ["aggregate_normalised", "check_fig2", "render_normalised"]


def check_fig2(table: pd.DataFrame, item) -> list[Check]:
    claims = item["claims"]
    checks = []
    for who in ("hst", "coreset"):
        for ds in claims["beat_datasets"]:
            holds, detail = beats(table, item, ds, claims[who], claims["balcan"])
            checks.append(Check(f"{name(item, claims[who])} beats {name(item, claims['balcan'])} on "
                                f"{dataset_name(item, ds)} (lower mean k-median cost at every k)", holds, detail))
    ds, thr = claims["close_dataset"], float(claims["close_ratio"])
    claim = (f"{name(item, claims['hst'])} is close to {name(item, claims['nonprivate'])} on "
             f"{dataset_name(item, ds)} (cost ratio <= {thr:g} at every k)")
    r = ratios(table, ds, claims["hst"], claims["nonprivate"])
    if r:
        checks.append(Check(claim, all(v <= thr for v in r.values()),
                            "ratios " + ", ".join(f"k={k}: {fmt(v, 3)}" for k, v in r.items())))
    else:
        checks.append(Check(claim, None, why_not_evaluable(table, item, ds)))
    checks.append(spent_cells(table))
    return checks
