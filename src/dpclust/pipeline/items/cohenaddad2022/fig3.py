"""Figure 3 of Cohen-Addad et al. 2022: normalised k-median cost vs k on Covertype and HIGGS with
the scalable methods only (HST, Coreset, kvars; kmed++ and the converged reference run as normaliser
candidates).

Table and figure: the normalised table and its figure shared with Figure 2 (`common`). Claims (§6),
one verdict per sentence, decided by the claims engine (`dpclust.pipeline.verdicts`, rubric
docs/VERDICTS.md) over the sentence's cells (method × ε × k), each a delta-method interval of a ratio
of mean costs: HST has the strongest performance on `claims.strongest_dataset` (HST / Coreset and
HST / kvars below 1 in every cell); on `claims.comparable_dataset` HST is comparable to Coreset
(equivalence of HST / Coreset within `claims.comparable_band`, the config's REC margin, in every
cell; a degenerate cell never holds); every private run spent exactly its ε (bookkeeping).
"""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline import declared, verdicts
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import dataset_name
from dpclust.pipeline.items.cohenaddad2022.common import (
    aggregate_normalised,
    available_datasets,
    claim_source,
    degenerate_text,
    name,
    ratio_entries,
    reasons_text,
    refused_roles,
    render_normalised,
    sentence_check,
    spent_cells,
)

__all__ = ["aggregate", "checks", "render"]

# the normalised-cost table and panels Figures 2 and 3 share (common.py)
aggregate, render = aggregate_normalised, render_normalised


def comparable(table: pd.DataFrame, item) -> list[Check]:
    """§6: "on COVERTYPE [HST] is comparable to the coreset heuristic" — equivalence of HST / Coreset
    within the config's REC band `comparable_band`; no quantifier: every cell (ε × k); a cell where
    either method is degenerate never holds."""
    claims = item["claims"]
    hst, cor, ds = claims["hst"], claims["coreset"], claims["comparable_dataset"]
    lo, hi = (float(v) for v in claims["comparable_band"])
    claim = (f"on {dataset_name(item, ds)} {name(item, hst)} is comparable to {name(item, cor)} "
             f"(mean cost ratio within [{lo:g}, {hi:g}] in every (ε, k) cell)")
    refused = refused_roles(table, item, (hst, cor))
    if refused:
        return [Check(claim, None, refused, cells=0, rule="refused: claims compare DP methods only")]
    datasets, missing = available_datasets(table, item, [ds])
    entries, degenerate = ratio_entries(table, item, datasets, [(hst, cor)], guard=True)
    reasons = missing or {ds: f"no common cell of {name(item, hst)} and {name(item, cor)}"}
    return [sentence_check(claim, entries, verdicts.Equivalent(lo, hi), "every",
                           detail=f"{name(item, hst)} / {name(item, cor)}, delta-method interval; "
                           + degenerate_text(table, degenerate),
                           wanted=[ds], missing=missing, absent_reason=reasons_text(item, reasons), item=item)]


#: the sentence no declaration expresses (config/papers/cohenaddad2022.yaml, fig3 `claims.declared`)
HOOKS = {"comparable": comparable}


def checks(table: pd.DataFrame, item) -> list[Check]:
    """The declared sentences of §6 (config/papers/cohenaddad2022.yaml, fig3 `claims.declared`), then our
    bookkeeping of the ε spent."""
    return [*declared.decide_all(table, item, claim_source(table, item), HOOKS), spent_cells(table)]
