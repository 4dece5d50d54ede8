"""Table 1 of Nguyen, Chaturvedi & Xu (AAAI 2021): multiplicative and additive approximation of
private k-means algorithms, a static table rendered from the item's config (no runs).

Spec: `static` (the rows as printed), `table.columns` (the paper's column headers) for the
aggregate step; `title` and `caption` (shown under the table) for the render step.
"""

from __future__ import annotations

import pandas as pd

from dpclust.api import DPClustError
from dpclust.pipeline.itemkit import step_options
from dpclust.pipeline.plotting import write_table


def aggregate(records: list[dict], item: dict, ctx=None) -> pd.DataFrame:
    """The printed rows under the printed headers."""
    columns = list(step_options(item, "table").get("columns") or [])
    rows = item.get("static") or []
    if not columns or not rows or any(len(r) != len(columns) for r in rows):
        raise DPClustError(f"nguyen2021 table1: `static` must be a list of rows with one value per column "
                           f"of `table.columns` ({columns})")
    return pd.DataFrame(rows, columns=columns)


def render(table: pd.DataFrame, item: dict, stem: str) -> None:
    write_table(table, stem, title=item["title"], note=item.get("caption", ""))
