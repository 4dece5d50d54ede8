"""Table 1 of Su et al. (2016): N, d and k of every dataset with the GkM block counts
l_GkM = round(N^0.4) (§4.1.2, GUPT's ℓ = N^0.4) and l_GkM-3K = round(N/(3k)), computed from the
processed files, beside the values the paper prints.

Aggregate options (`table`): `labels` (the paper's row labels, the CSV's `dataset` column), `k`
(Table 1's k per dataset), `ranges` (rows that stand for a family of datasets, the synthetic one:
their d, k and l_GkM-3K are the paper's ranges, not numbers) and `paper` (the printed values).
Check: each available row matches the paper in every column the paper gives a number for (exact
counts: one exact cell per column, "every" column; the claims engine). These are facts of the data
(N, d, k and the block counts derived from them), not claims of the paper: their checks are of kind
"bookkeeping". A row that does not match carries its explanation from `claims.why` (keyed by
dataset), prefixed with the mismatching numbers.
"""

from __future__ import annotations

import math

import pandas as pd

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.itemkit import dataset_name
from dpclust.pipeline.items.su2016.common import plain_bools
from dpclust.pipeline.plotting import write_table
from dpclust.pipeline.verdicts import Directional, check, no_cell, point_cell

COLUMNS = ["dataset", "N", "paper_N", "d", "paper_d", "k", "paper_k", "l_gkm", "paper_l_gkm",
           "l_gkm3k", "paper_l_gkm3k", "status", "reason", "name"]
COMPARED = ("N", "d", "k", "l_gkm", "l_gkm3k")


def l_gkm(n) -> int:
    """GkM's number of blocks, ℓ = N^0.4 (§4.1.2), rounded."""
    return int(round(n ** 0.4))


def l_gkm3k(n, k) -> int:
    """GkM-3K's number of blocks, N/(3k) (blocks of 3k points, §4.1.2), rounded."""
    return int(round(n / (3 * k)))


class _Unavailable(Exception):
    pass


def _dataset_shape(path) -> tuple[int, int]:
    from dpclust import data as dpdata

    try:
        ds = dpdata.load_processed(path)
    except getattr(dpdata, "DatasetUnavailable", ()) as exc:
        raise _Unavailable(str(exc)) from None
    return int(ds.X.shape[0]), int(ds.X.shape[1])


def aggregate(records, item, ctx) -> pd.DataFrame:
    """Table 1 from the processed datasets (N, d) and the configured k."""
    options = item.get("table") or {}
    labels, ks = options.get("labels") or {}, options.get("k") or {}
    ranges, paper = options.get("ranges") or {}, options.get("paper") or {}
    rows = []
    for ds in item.get("datasets") or []:
        ref = paper.get(ds, {})
        row = {"dataset": labels.get(ds) or dataset_name(item, ds), "name": ds, "status": "ok", "reason": ""}
        try:
            n, d = _dataset_shape(ctx.dataset_path(ds))
        except _Unavailable as exc:
            row.update(status="data_unavailable", reason=str(exc))
            n = d = None
        k = ks.get(ds)
        row.update(N=n, d=d, k=k, l_gkm=l_gkm(n) if n else None, l_gkm3k=l_gkm3k(n, k) if (n and k) else None)
        row.update(ranges.get(ds) or {})
        for key in COMPARED:
            row[f"paper_{key}"] = ref.get(key)
        rows.append(row)
    for key in ("N", "l_gkm"):
        for row in rows:
            row[key] = None if row.get(key) is None else int(row[key])
    out = pd.DataFrame(rows).reindex(columns=COLUMNS)
    for key in ("N", "d", "l_gkm", "l_gkm3k"):
        out[key] = out[key].astype(object).where(out[key].notna(), None)
    return out


def _intlike(v):
    if isinstance(v, float) and v == v and v.is_integer():
        return str(int(v))
    return v


def render(table, item, stem):
    show = table.drop(columns=["name"]).copy()
    for col in show.columns:
        if col not in ("status", "reason", "dataset"):
            show[col] = [_intlike(v) for v in show[col]]
    write_table(show, stem, title=item["title"],
                note="paper_* columns: values printed in Su et al. 2016 Table 1. "
                     "l_gkm = round(N^0.4), l_gkm3k = round(N/(3k)).")


def _number(v) -> bool:
    """Whether the paper gives a number (not a range such as "[2, 10]" or a formula)."""
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _eq(a, b) -> bool:
    try:
        return int(a) == int(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


@plain_bools
def checks(table, item) -> list[Check]:
    whys = ((item.get("claims") or {}).get("why") or {})
    out = []
    for r in table.itertuples(index=False):
        claim = f"Table 1 row {r.dataset} matches the paper"
        if r.status != "ok":
            out.append(no_cell(f"Table 1 row {r.dataset}", f"data unavailable: {r.reason}", kind="bookkeeping"))
            continue
        pairs = {key: (getattr(r, key), getattr(r, f"paper_{key}")) for key in COMPARED}
        compared = [key for key, (_, printed) in pairs.items() if _number(printed)]
        wrong = [key for key in compared if not _eq(*pairs[key])]
        # one exact cell per column the paper prints a number for: 1 if ours differs, else 0
        cells = [point_cell(f"{key} ours {_intlike(pairs[key][0])} vs paper {_intlike(pairs[key][1])}",
                            float(key in wrong)) for key in compared]
        why = ""
        if wrong:
            diffs = ", ".join(f"{key} ours {_intlike(pairs[key][0])} vs paper {_intlike(pairs[key][1])}"
                              for key in wrong)
            why = f"{whys.get(getattr(r, 'name', ''), 'genuine: the counts differ')} ({diffs})"
        out.append(check(claim, cells, Directional("<=", 0.0), "every", why=why, kind="bookkeeping",
                         detail=f"ours N={_intlike(r.N)}, d={r.d}, k={r.k}, l={_intlike(r.l_gkm)}, "
                                f"l3k={_intlike(r.l_gkm3k)}; paper N={r.paper_N}, d={r.paper_d}, k={r.paper_k}, "
                                f"l={r.paper_l_gkm}, l3k={r.paper_l_gkm3k} (cells: 1 = the column differs)"))
    return out
