"""Sensitivity of a verdict to a setting we had to choose (docs/VERDICTS.md, "Sensitivity").

A claim decided at a recommended, inferred or missing setting, or on one draw of a generator, is
decided again at the setting's documented alternatives; the verdict stays the one at the declared
value (the paper's reading), and says whether it is **robust** or **setting-dependent**.

An item declares it under `sensitivity:` (workflow/schemas/paper.schema.yaml), one declaration or a
list, each with `what` (the setting, as the label names it) and `declared` (its value in the
verdict), and its alternatives as either
* data: `variants` (a dataset-name suffix → the value it stands for) and `groups` (a variant run
  group → the item's own group it stands for). The variant runs are ordinary run groups on the
  variant datasets (`<dataset><suffix>`); each variant's rows are read as the item's own
  (`variant_rows`), and the item's own rows are the others (`own_rows`), the only ones drawn; or
* settings: `values` (a variant run group → the value it stands for) and `groups` (that group → the
  item's own group it stands for). A variant group runs some of its own group's algorithms on some of
  its datasets with one setting changed (`params`); its rows (told apart by the table's `group`)
  take the place of those algorithms' rows in the own group, on those datasets; the variant groups
  of one value (e.g. a sweep's, one per own group) take their places together; or
* thresholds: `claims` (the value → overrides of the item's `claims`), the same rows checked again
  with the overrides, for the claims whose text contains one of `applies_to` (default: every claim).
The checks step (`dpclust.pipeline.steps.check_item`) runs the item's own check function on its own
rows, once more per alternative, and `label_checks` appends to each verdict how it fares at each.
"""

from __future__ import annotations

import dataclasses
import json

import pandas as pd

from dpclust.api import DPClustError
from dpclust.pipeline import verdicts
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.replication import alternative_key, declared_value
from dpclust.pipeline.resolve import sensitivity_declarations as declarations
from dpclust.pipeline.status import RESULT_ORDER


def _variant_mask(table: pd.DataFrame, spec: dict) -> pd.Series:
    """Rows of the variant runs: the datasets named with a variant suffix. Where the table keeps the
    run group, such a row must come from a variant group: an own dataset whose name happens to end
    with a suffix is an error of the declaration, not a variant."""
    datasets = table["dataset"].astype(str)
    mask = pd.Series(False, index=table.index)
    for suffix in spec.get("variants") or {}:
        mask |= datasets.str.endswith(suffix)
    if "group" in table:
        stray = mask & ~table["group"].isin(list(spec.get("groups") or {}))
        if stray.any():
            raise DPClustError(f"sensitivity: dataset {datasets[stray].iloc[0]!r} ends with a variant suffix "
                               f"({', '.join(spec['variants'])}) but its runs are not in a variant group "
                               f"({', '.join(spec.get('groups') or {})}); choose suffixes no own dataset ends with")
    return mask


def _settings_mask(table: pd.DataFrame, spec: dict) -> pd.Series:
    """Rows of a settings declaration's variant groups (the table must keep the run group)."""
    if "group" not in table:
        raise DPClustError(f"sensitivity over {spec['what']!r}: `values` needs the item's table to keep the run "
                           "group (a `group` column); declare data `variants` or `claims` instead")
    return table["group"].isin(list(spec["values"]))


def own_rows(table: pd.DataFrame, spec: dict | list | None) -> pd.DataFrame:
    """The item's own rows: every row but the variant runs' (all rows without a declaration)."""
    decls = [d for d in declarations(spec) if d.get("variants") or d.get("values")]
    if not decls or "dataset" not in table:
        return table
    mask = pd.Series(False, index=table.index)
    for decl in decls:
        mask |= _settings_mask(table, decl) if decl.get("values") else _variant_mask(table, decl)
    return table[~mask].reset_index(drop=True)


def setting_rows(table: pd.DataFrame, own: pd.DataFrame, spec: dict, groups: list[str]) -> pd.DataFrame:
    """The item's own rows with one settings variant in place: the rows of each variant group (all the
    groups that stand for the same value, e.g. a swept setting's) read as the own group it stands
    for, replacing that group's rows of the same algorithms and datasets."""
    for group in groups:
        rows = table[table["group"] == group].copy()
        target = spec["groups"][group]
        rows["group"] = target
        replaced = (own["group"] == target) & own["dataset"].isin(set(rows["dataset"]))
        if "algorithm" in own and "algorithm" in rows:
            replaced &= own["algorithm"].isin(set(rows["algorithm"]))
        own = pd.concat([own[~replaced], rows], ignore_index=True)
    return own


def _settled_at(settled: dict | None, what: str, value: str) -> dict:
    """The cells earlier looks settled for the claims at one alternative (`replication.alternative_key`),
    by claim text: what `verdicts.settled` takes while the item's check function decides them."""
    tail = alternative_key("", what, value)
    return {key[: -len(tail)]: cells for key, cells in (settled or {}).items() if key.endswith(tail)}


def alternatives(check_function, full: pd.DataFrame, own: pd.DataFrame, spec: dict, decl: dict,
                 main: list[Check], settled: dict | None = None) -> tuple[list[Check], dict[str, list[Check]], str]:
    """(the declared value's checks, value text → the checks at that alternative, the scope) of one
    declaration. Thresholds: the item's own rows with the declared overrides of its `claims`, beside
    `main`. Data: each variant's rows read as the item's own, beside the item's own rows of the same
    datasets (every list of dataset names in its `options` and `claims`, e.g. `options.datasets`, cut
    to those too), so that like is compared with like; the scope then names those datasets. Settings:
    the same, with each variant group's rows in the place of its own group's (`setting_rows`).
    `settled`: the cells earlier replication looks settled (`verdicts.settled`), claim or alternative
    (`replication.alternative_key`) → key → cell: the declared value on the scope and each alternative
    keep theirs, as the item's own checks do (`replication.tracked_alternatives`)."""
    if not decl.get("variants") and not decl.get("values"):
        return main, {value: list(check_function(own, dict(spec, claims=dict(spec.get("claims") or {}, **over))))
                      for value, over in (decl.get("claims") or {}).items()}, ""
    names = set(full["dataset"].astype(str))
    if decl.get("values"):   # settings: the variant groups' datasets, each variant in its own group's place
        stray = [g for g in decl["values"] if g not in (decl.get("groups") or {})]
        if stray:
            raise DPClustError(f"sensitivity over {decl['what']!r}: variant group {stray[0]!r} is in `values` "
                               "but not in `groups` (variant group -> the item's group it stands for)")
        varied = set(full.loc[_settings_mask(full, decl), "dataset"].astype(str))
        base = [d for d in dict.fromkeys(own["dataset"].astype(str)) if d in varied]
    else:
        base = [d for d in dict.fromkeys(own["dataset"].astype(str))
                if any(d + suffix in names for suffix in decl["variants"])]
    scoped = dict(spec, options=_cut(spec.get("options"), base, names), claims=_cut(spec.get("claims"), base, names))
    own_base = own[own["dataset"].astype(str).isin(base)].reset_index(drop=True)
    what = str(decl["what"])
    if set(base) == set(own["dataset"].astype(str)):
        declared = main          # the declared value on every dataset: the headline's own checks
    else:   # on the scope: the headline's settled cells, or its own where the looks track it there
        with verdicts.settled({**(settled or {}), **_settled_at(settled, what, declared_value(str(decl["declared"])))}):
            declared = list(check_function(own_base, scoped))
    out = {}
    if decl.get("values"):        # the variant groups of one value are read together
        by_value: dict[str, list[str]] = {}
        for group, value in decl["values"].items():
            by_value.setdefault(str(value), []).append(group)
        for value, groups in by_value.items():
            with verdicts.settled(_settled_at(settled, what, value)):
                out[value] = list(check_function(setting_rows(full, own_base, decl, groups), scoped))
    else:
        for suffix, value in decl["variants"].items():
            with verdicts.settled(_settled_at(settled, what, str(value))):
                out[str(value)] = list(check_function(variant_rows(full, decl, suffix), scoped))
    scope = ""
    if declared is not main:
        from dpclust.pipeline.itemkit import dataset_name

        scope = (f"on {', '.join(dataset_name(spec, d) for d in base)} only: " if len(base) <= 3
                 else f"on the {len(base)} datasets with variants: ")
    return declared, out, scope


def alternative_records(decl: dict, own: list[Check], declared: list[Check], variants: dict[str, list[Check]],
                        scope: str = "") -> dict[str, dict]:
    """The paper claims of one data or settings declaration at each of its values, the declared one
    first when it is read on a scope of its own (`scope`; else it is the headline itself), as the
    replication decision reads them (`replication.decide`): `replication.alternative_key` of the claim
    as the check at that value words it (on a scope, its datasets may be named) → {claim, of (the
    item's own claim it stands for: `own`, matched as the labels match them), what, value, row (the
    checks table's row), cells}. A threshold declaration has none: its alternatives read the item's
    own runs."""
    if not decl.get("variants") and not decl.get("values"):
        return {}
    from dpclust.pipeline.aggregate import checks_frame

    out: dict[str, dict] = {}
    what = str(decl["what"])
    values = {declared_value(str(decl["declared"])): declared} if scope else {}
    for value, checks in {**values, **variants}.items():
        rows = dict(zip(map(id, checks), checks_frame(list(checks)).to_dict(orient="records")))
        for index, mine in enumerate(own):
            check = _match(checks, own, index)
            if check is None or check.kind != "paper" or mine.kind == "bookkeeping":
                continue
            out[alternative_key(check.claim, what, value)] = {
                "claim": check.claim, "of": mine.claim, "what": what, "value": value,
                "cells": check.cell_states or {},
                "row": {k: (None if isinstance(v, float) and v != v else v) for k, v in rows[id(check)].items()}}
    return out


def _match(checks: list[Check], own: list[Check], index: int) -> Check | None:
    """The check among `checks` (at another value of a setting) of the item's own check `own[index]`: the
    one of the same claim, else the one at the same place when both lists are as long (a threshold or a
    scope may be in the claim's text)."""
    other = next((c for c in checks if c.claim == own[index].claim), None)
    return checks[index] if other is None and len(checks) == len(own) else other


def _cut(options: dict | None, base: list[str], names: set[str]) -> dict | None:
    """`options` with every list of the table's dataset names (e.g. `options.datasets`, a claim's
    `beat_datasets`) cut to `base`: the datasets the variants stand for."""
    if not options:
        return options
    return {key: [d for d in value if d in base]
            if isinstance(value, list) and value and all(isinstance(d, str) and d in names for d in value)
            else value for key, value in options.items()}


def with_variants(datasets: list[str], spec: dict | list | None) -> list[str]:
    """`datasets` and their variants (`<dataset><suffix>`), for an aggregate step that keeps only the
    datasets it names."""
    suffixes = [s for decl in declarations(spec) for s in (decl.get("variants") or {})]
    return list(datasets) + [d + s for d in datasets for s in suffixes]


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
    "robust over <what> (…)" when at least two values are decided and all agree, else "<what>: decided at
    one value only (…)" or "… at no value (…)". An undecided value is listed, never counted as a flip."""
    by: dict[str, list[str]] = {}
    for value, result in results:
        by.setdefault(result, []).append(str(value))
    parts = "; ".join(f"{r} at {', '.join(by[r])}" for r in RESULT_ORDER if r in by)
    decided = len(by.get("holds", [])) + len(by.get("does not hold", []))
    if "holds" in by and "does not hold" in by:
        return f"setting-dependent: {what} ({parts})"
    if decided >= 2:
        return f"robust over {what} ({parts})"
    if decided == 1:
        return f"{what}: decided at one value only ({parts})"
    return f"{what}: decided at no value ({parts or 'no value ran'})"


def _fails_outside(check: Check, scoped: Check | None) -> list[str]:
    """The cells outside a data or settings declaration's scope that make `check` (a claim over every
    cell) fail whatever the scope's cells give: settled failing at an earlier look, or failing with a
    p-value within Holm's first step, α/n (Holm's rejections only grow as other p-values fall, and a
    p-value within α/n is rejected even when every other is 1). The scope's datasets are those of the
    declared value's cells on it (`scoped`). [] when there is none, or the claim is not over every cell."""
    if not check.cell_states or not scoped or not scoped.cell_states or not check.threshold.endswith("(every)"):
        return []
    inside = {_dataset_of(key) for key in scoped.cell_states}
    if None in inside:      # a key that names no dataset: the scope cannot be told apart
        return []
    bound = verdicts.current_alpha() / max(1, check.cells or len(check.cell_states))
    return [f"{rec['label']}: {rec['estimate']:.4g} [{rec['low']:.4g}, {rec['high']:.4g}]"
            for key, rec in check.cell_states.items()
            if _dataset_of(key) not in inside | {None} and rec["state"] == verdicts.FAILS
            and (rec.get("look") is not None or rec["p_fail"] <= bound)]


def _dataset_of(key: str) -> str | None:
    """The dataset of a cell's key (`declared.run_key`'s JSON), None for a key of another form."""
    try:
        where = json.loads(key)
    except ValueError:
        return None
    return where.get("dataset") if isinstance(where, dict) else None


def label_checks(own: list[Check], variants: dict[str, list[Check]], spec: dict,
                 declared: list[Check] | None = None, scope: str = "",
                 stopped: dict[str, str] | None = None, segments: dict[str, list] | None = None) -> list[Check]:
    """Each of the item's own checks but bookkeeping (and only those whose claim contains one of
    `spec["applies_to"]`, when given) with the `label` of its claim over the declared value and every
    alternative (`variants`: value text → the checks there, matched by claim text, else by position
    when a threshold is in the text), in its `sensitivity` and, when it does not hold, in its why.
    An alternative whose check has no cell (no runs there) is listed as "not run", never counted.
    `declared`: the checks at the declared value on the alternatives' scope (default: `own`), matched
    as the alternatives are; `scope` prefixes the label ("on Synthetic only: "). `stopped`: the results
    of the claims and alternatives an earlier replication look stopped (`replication.stopped_results`),
    quoted instead of their checks at this look. `segments` collects each claim's label, [what, text]
    per declaration (what a later look's label replaces: `replication.apply`). A claim that fails on
    cells outside the scope whatever the scope's cells give (`_fails_outside`) is robust over the
    setting, whatever the values on the scope say."""
    applies = spec.get("applies_to")
    out = []
    for index, check in enumerate(own):
        if check.kind == "bookkeeping" or (applies and not any(text in check.claim for text in applies)):
            out.append(check)
            continue
        def matched(checks):
            return _match(checks, own, index)

        def result(value, other):
            return (stopped or {}).get(alternative_key(other.claim, spec["what"], value), other.result)

        reference = check if declared is None else matched(declared)
        mine = declared_value(spec["declared"])
        if scope or declared is not None and declared is not own:   # the declared value on a scope of its own
            results = [(mine, result(mine, reference) if reference else "not evaluable")]
        else:                       # the headline itself, as the look that stopped it decided it
            results = [(mine, (stopped or {}).get(check.claim, check.result))]
        not_run = []
        for value, checks in variants.items():
            other = matched(checks)
            if other is None or not other.cells:
                not_run.append(value)
            else:
                results.append((value, result(value, other)))
        text = scope + label(spec["what"], results) + (f"; not run at {', '.join(not_run)}" if not_run else "")
        outside = _fails_outside(check, reference) if scope and check.holds is False else []
        if outside and not text.startswith(("robust", "setting-dependent")):
            text = (f"robust over {spec['what']}: it fails on cells the setting does not vary "
                    f"({'; '.join(outside[:2])}{' …' if len(outside) > 2 else ''}); {text}")
        if segments is not None:
            segments.setdefault(check.claim, []).append([spec["what"], text])
        why = f"{check.why}; {text}" if check.holds is False and check.why else check.why
        both = f"{check.sensitivity}; {text}" if check.sensitivity else text
        out.append(dataclasses.replace(check, sensitivity=both, why=why))
    return out
