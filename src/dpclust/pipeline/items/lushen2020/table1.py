"""Table 1 of Lu & Shen: the summary of notation, static (the item's `static:` rows as printed)."""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline.plotting import write_table


def aggregate(records, item, ctx=None) -> pd.DataFrame:
    """One row per symbol of Table 1 (notation, description), from the item config."""
    return pd.DataFrame([{"notation": a, "description": b} for a, b in item["static"]])


def render(table, item, stem) -> None:
    write_table(table, stem, title=item["title"])
