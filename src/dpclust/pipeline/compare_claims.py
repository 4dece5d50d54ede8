"""Two runs' claim summaries side by side (`python -m dpclust.pipeline compare-claims`, the full
protocol's published parts beside the quick preset): verdicts per paper, and every check whose verdict
differs. A report on finished runs, not a workflow step: kept out of `steps`, whose code every item's
jobs depend on."""
from __future__ import annotations

import pandas as pd


def _not_evaluable_clause(rule: str) -> str:
    """The "not evaluable (...)" clause of a summary's `rule`, parentheses balanced; "" without one."""
    start = rule.find("not evaluable (")
    if start < 0:
        return ""
    depth = 0
    for i in range(start + len("not evaluable "), len(rule)):
        depth += {"(": 1, ")": -1}.get(rule[i], 0)
        if depth == 0:
            return rule[start:i + 1]
    return rule[start:]


def compare_claims(a_csv, b_csv, labels=("quick", "full")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two runs' claim summaries (`checks/summary.csv`, e.g. the quick preset's and the full
    protocol's) side by side: (totals, changes).

    `totals` counts each verdict of the papers' claims (kind "paper"; a summary without kinds is all
    papers' claims) per paper in each run, as the summary's tallies do; `changes` lists every check,
    the papers' claims and ours (its `kind`), keyed by (paper, item, claim text), whose verdict
    differs, with both verdicts, intervals, numbers of cells and reasons (a verdict without a reason
    of its own: its rule's "not evaluable (...)" clause), and checks made in one run only (verdict "-"
    in the other: a grid or dataset the other preset does not have).
    """
    a_name, b_name = labels
    key = ["paper", "item", "claim"]
    keep = key + ["kind", "result", "quantity", "ci_low", "ci_high", "cells", "why", "rule"]
    text = ("claim", "kind", "result", "why", "rule")

    def load(path):
        frame = pd.read_csv(path, dtype={c: str for c in text}).reindex(columns=keep)
        for col in text:
            frame[col] = frame[col].astype(object).fillna("").astype(str)
        frame["kind"] = frame["kind"].replace("", "paper")
        frame["cells"] = pd.to_numeric(frame["cells"], errors="coerce").astype("Int64")
        # a verdict without a reason of its own says why in its rule: "not evaluable (n of N datasets; ...)"
        frame["why"] = [why or _not_evaluable_clause(rule) for why, rule in zip(frame["why"], frame["rule"])]
        return frame.drop(columns="rule").drop_duplicates(key, keep="first")

    a, b = load(a_csv), load(b_csv)
    totals = pd.concat([
        frame[frame["kind"] == "paper"].groupby(["paper", "result"]).size().rename(name)
        for frame, name in ((a, a_name), (b, b_name))
    ], axis=1).fillna(0).astype(int).reset_index()
    both = a.merge(b, on=key, how="outer", suffixes=(f"_{a_name}", f"_{b_name}"), indicator=True)
    both.insert(3, "kind", both.pop(f"kind_{a_name}").fillna(both.pop(f"kind_{b_name}")))
    ra, rb = both[f"result_{a_name}"].fillna("-"), both[f"result_{b_name}"].fillna("-")
    both[f"result_{a_name}"], both[f"result_{b_name}"] = ra, rb
    changes = both[ra != rb].drop(columns="_merge").sort_values(key).reset_index(drop=True)
    return totals, changes


def compare_claims_markdown(a_csv, b_csv, labels=("quick", "full")) -> str:
    """`compare_claims` as Markdown: the verdicts per paper in each run, then the claims whose verdict
    differs (both verdicts, intervals and numbers of cells, the second run's reason)."""
    from dpclust.pipeline.plotting import to_markdown

    totals, changes = compare_claims(a_csv, b_csv, labels)
    a, b = labels
    cols = ["paper", "item", "claim", "kind", f"result_{a}", f"result_{b}", f"quantity_{a}", f"ci_low_{a}",
            f"ci_high_{a}", f"cells_{a}", f"quantity_{b}", f"ci_low_{b}", f"ci_high_{b}", f"cells_{b}", f"why_{b}"]
    return (f"## Verdicts per paper (the papers' claims)\n\n{to_markdown(totals)}\n"
            f"## Checks whose verdict differs ({len(changes)}: the papers' claims and ours, by kind)\n\n"
            f"{to_markdown(_blank_missing_cells(changes[cols])) if len(changes) else 'none'}\n")


def _blank_missing_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The cell counts as text, blank where a run has no such check (not pandas' "<NA>")."""
    out = table.copy()
    for col in [c for c in out if c.startswith("cells_")]:
        out[col] = ["" if pd.isna(v) else str(int(v)) for v in out[col]]
    return out
