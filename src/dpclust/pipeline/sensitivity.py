"""Sensitivity of a verdict to a setting we had to choose (docs/VERDICTS.md, "Sensitivity").

A claim decided at a recommended, inferred or missing setting, or on one draw of a generator, is
decided again at the setting's documented alternatives; the verdict stays the one at the declared
value (the paper's reading), and says whether it is **robust** or **setting-dependent**.

An item declares it under `sensitivity:` (workflow/schemas/paper.schema.yaml): `what` (the setting,
as the label names it), `declared` (its value in the verdict), `variants` (a dataset-name suffix →
the value it stands for) and `groups` (a variant run group → the item's own group it stands for).
The variant runs are ordinary run groups on the variant datasets (`<dataset><suffix>`). The checks
step (`dpclust.pipeline.steps.check_item`) runs the item's own check function once on its own rows
(`own_rows`) and once per variant on that variant's rows read as its own (`variant_rows`), and
`label_checks` appends to each verdict how it fares at every value; the render step draws the own
rows only.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from dpclust.pipeline.aggregate import Check

DECIDED = ("holds", "does not hold")
_ORDER = ("holds", "does not hold", "not decidable", "not evaluable")


def _variant_mask(table: pd.DataFrame, spec: dict) -> pd.Series:
    """Rows of the variant runs: a variant group's, or a dataset named with a variant suffix."""
    datasets = table["dataset"].astype(str)
    mask = pd.Series(False, index=table.index)
    for suffix in spec["variants"]:
        mask |= datasets.str.endswith(suffix)
    if "group" in table:
        mask |= table["group"].isin(list(spec["groups"]))
    return mask


def own_rows(table: pd.DataFrame, spec: dict | None) -> pd.DataFrame:
    """The item's own rows: every row but the variant runs' (all rows without a declaration)."""
    if not spec:
        return table
    return table[~_variant_mask(table, spec)].reset_index(drop=True)


def variant_rows(table: pd.DataFrame, spec: dict, suffix: str) -> pd.DataFrame:
    """The rows of one variant read as the item's own: its datasets without the suffix, its run
    groups renamed to the groups they stand for (`groups`)."""
    rows = table[table["dataset"].astype(str).str.endswith(suffix)].copy()
    rows["dataset"] = rows["dataset"].astype(str).str.slice(0, -len(suffix))
    if "group" in rows:
        rows["group"] = rows["group"].map(lambda g: spec["groups"].get(g, g))
    return rows.reset_index(drop=True)


def label(what: str, results: list[tuple[str, str]]) -> str:
    """How a verdict fares over the values of a setting, from (value, result) pairs: "setting-dependent:
    <what> (holds at …; does not hold at …)" when it holds at one value and does not hold at another,
    "robust over <what> (…)" when every decided value agrees, else "<what>: decided at no value (…)".
    An undecided value is listed, never counted as a flip."""
    by: dict[str, list[str]] = {}
    for value, result in results:
        by.setdefault(result, []).append(str(value))
    parts = "; ".join(f"{r} at {', '.join(by[r])}" for r in _ORDER if r in by)
    if "holds" in by and "does not hold" in by:
        return f"setting-dependent: {what} ({parts})"
    if "holds" in by or "does not hold" in by:
        return f"robust over {what} ({parts})"
    return f"{what}: decided at no value ({parts or 'no value ran'})"


def label_checks(own: list[Check], variants: dict[str, list[Check]], spec: dict) -> list[Check]:
    """Each of the item's own checks with the `label` of its claim over the declared value and every
    variant (`variants`: suffix → that variant's checks, matched by claim text), appended to its
    detail and, when it does not hold, to its why. A variant whose check has no cell (no runs there)
    is listed as "not run", never counted."""
    out = []
    for check in own:
        results = [(spec["declared"] + " (declared)", check.result)]
        not_run = []
        for suffix, checks in variants.items():
            other = next((c for c in checks if c.claim == check.claim), None)
            if other is None or not other.cells:
                not_run.append(spec["variants"][suffix])
            else:
                results.append((spec["variants"][suffix], other.result))
        text = label(spec["what"], results) + (f"; not run at {', '.join(not_run)}" if not_run else "")
        why = f"{check.why}; {text}" if check.holds is False and check.why else check.why
        out.append(dataclasses.replace(check, detail=f"{check.detail}; {text}" if check.detail else text, why=why))
    return out
