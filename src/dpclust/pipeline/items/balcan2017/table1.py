"""Table 1 of Balcan et al. 2017: clustering loss guarantees of efficient algorithms (static).

The rows are the paper's Table 1 as given in the item's `static:` config; no runs.
"""

from __future__ import annotations

import pandas as pd

from dpclust.pipeline.plotting import write_table


def aggregate(records, item, ctx=None) -> pd.DataFrame:
    static = item["static"]
    return pd.DataFrame(static["rows"], columns=static["columns"])


def render(table: pd.DataFrame, item: dict, stem: str) -> None:
    write_table(table, stem, title=item["title"], note="* extra assumptions on the data (as in the paper).")
