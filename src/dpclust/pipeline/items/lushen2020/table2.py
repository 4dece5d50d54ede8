"""Table 2 of Lu & Shen: #records, #dims and k of each dataset as processed here, beside the
printed values (`table: {paper, k}`); the check compares the sizes (our bookkeeping: a data fact, not
a claim of the paper; exact quantities, decided by the claims engine on point cells)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import Check, fmt
from dpclust.pipeline.itemkit import dataset_name
from dpclust.pipeline.plotting import write_table


def aggregate(records, item, ctx) -> pd.DataFrame:
    """One row per dataset of the item (Table 2's order): our #records and #dims of the processed
    file, the k of our runs and the paper's three columns; unavailable data keeps its row."""
    from dpclust.data import DatasetUnavailable, load_processed

    opts = item["table"]
    rows = []
    for name in item["datasets"]:
        paper = opts["paper"][name]
        row = {"dataset": dataset_name(item, name), "name": name, "paper_records": paper[0],
               "paper_dims": paper[1], "paper_k": paper[2], "k": opts["k"][name]}
        try:
            data = load_processed(ctx.dataset_path(name))
            row.update(records=int(data.X.shape[0]), dims=int(data.X.shape[1]), status="ok", reason="")
        except (DatasetUnavailable, FileNotFoundError, KeyError, OSError) as exc:
            row.update(records=np.nan, dims=np.nan, status="data_unavailable", reason=str(exc))
        rows.append(row)
    return pd.DataFrame(rows)


def render(table, item, stem) -> None:
    out = []
    for r in table.itertuples(index=False):
        ok = r.status == "ok"
        out.append({"Dataset": r.dataset,
                    "#Records": fmt(r.records) if ok else "data unavailable",
                    "#Dims": fmt(r.dims) if ok else "",
                    "#Clusters (k)": int(r.k),
                    "paper #Records": int(r.paper_records), "paper #Dims": int(r.paper_dims),
                    "paper #Clusters": int(r.paper_k)})
    write_table(pd.DataFrame(out), stem, title=item["title"],
                note="Rows computed from data/processed; 'paper' columns are Lu & Shen's Table 2.")


def checks(table, item) -> list[Check]:
    """The processed datasets have Table 2's #records and #dims (exact: one point cell per dataset and
    size, |ours − Table 2's| ≤ 0); our bookkeeping."""
    ok = table[table["status"] == "ok"]
    claim = "processed datasets have the #records and #dims of Table 2"
    if ok.empty:
        return [Check(claim, None, "no dataset available", kind="bookkeeping", cells=0, rule="no cell")]
    cells = [verdicts.point_cell(f"{dataset_name(item, r.dataset)} {what}", abs(float(ours) - float(paper)))
             for r in ok.itertuples()
             for what, ours, paper in (("#records", r.records, r.paper_records), ("#dims", r.dims, r.paper_dims))]
    bad = [f"{dataset_name(item, r.dataset)}: {int(r.records)}×{int(r.dims)} vs {r.paper_records}×{r.paper_dims}"
           for r in ok.itertuples() if (r.records, r.dims) != (r.paper_records, r.paper_dims)]
    missing = sorted(table.loc[table["status"] != "ok", "dataset"])
    detail = ("; ".join(bad) or "all available datasets match") + (f"; unavailable: {', '.join(missing)}"
                                                                    if missing else "")
    return [verdicts.check(claim, cells, verdicts.Directional("<=", 0.0, null_margin=0.0), "every", detail=detail,
                           kind="bookkeeping")]
