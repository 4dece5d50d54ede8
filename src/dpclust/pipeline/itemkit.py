"""The items layer's shared toolkit: what every paper item needs, so that an item's own module is
only what is specific to it.

An item module (`dpclust.pipeline.items.<paper>.<item>`, `dpclust.pipeline.item_modules`) exposes
up to three step functions under fixed names (aggregate, render, checks); each receives its *step spec* (see
`dpclust.pipeline.run_plan.ItemTarget.step_spec`): a dict with the step's options (`table`, `figure` or
`claims`, and `options` shared by all steps), `title`/`caption` (render), `names` (display names
of the item's algorithms and datasets, from config/names.yaml), `runs` (render: what was run under
the preset) and `dataset_entries` (aggregate: registry entries of the datasets it reads).

Here:
* `name`, `dataset_name`, `step_options`: display names and a step's options;
* `table_guarantee`, `labelled_name`: the guarantee kind a table records for an algorithm, and its
  display name with that kind when it is not DP;
* `require_dp`: a claim refused when a role it compares is not DP;
* `over_datasets`: the every-dataset rule over the datasets a claim expected and those that ran;
* `availability`, `short_reason`: whether a dataset ran, and why not in three words;
* `runs_note`: one line saying what was run under the preset (for captions and tables).
Drawing helpers (`unavailable_panel`, `mean_sd_line`) live in `dpclust.pipeline.plotting`; the cells
and rules of the claims in `dpclust.pipeline.verdicts`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from dpclust.pipeline.aggregate import Check
from dpclust.settings import APPROXIMATE, NON_PRIVATE, PURE

#: the guarantee kinds records carry (dpclust.settings.Guarantee): those that may report an ε, and the rest
DP_KINDS = (PURE.kind, APPROXIMATE.kind)
#: ... and "" too: a private algorithm that declares no guarantee, compared as DP but never ranked as DP
DP_OR_UNDECLARED = DP_KINDS + ("",)
NOT_DP = "not DP as published"
NON_PRIVATE_KIND = NON_PRIVATE.kind


# ---------------------------------------------------------------------------------------------
# names and options
# ---------------------------------------------------------------------------------------------
def name(item: Mapping, algorithm: str) -> str:
    """Display name of an algorithm (config/names.yaml), or its id."""
    return ((item.get("names") or {}).get("algorithms") or {}).get(algorithm, algorithm)


def dataset_name(item: Mapping, dataset: str) -> str:
    """Display name of a dataset (config/names.yaml), or its registry name."""
    return ((item.get("names") or {}).get("datasets") or {}).get(dataset, dataset)


def step_options(item: Mapping, key: str) -> dict:
    """Options of one step: the item's shared `options` overlaid with `item[key]` (`table`,
    `figure` or `claims`)."""
    out = dict(item.get("options") or {})
    out.update(item.get(key) or {})
    return out


def table_guarantee(table: pd.DataFrame, algorithm: str) -> str:
    """The guarantee kind an item's table records for `algorithm` ("ε-DP", "not DP as published",
    "non-private", ...; "" when the table has none)."""
    if "guarantee" not in table:
        return ""
    kinds = table.loc[table["algorithm"] == algorithm, "guarantee"].dropna().astype(str)
    return kinds.iloc[0] if len(kinds) else ""


def labelled_name(item: Mapping, table: pd.DataFrame, algorithm: str) -> str:
    """The display name of `algorithm` in figures, tables and claims, with the guarantee its table records
    when that is not DP: "<name> (not DP as published)", "<name> (non-private)" (one format for every
    item; a name that already says so is left as it is)."""
    text, kind = name(item, algorithm), table_guarantee(table, algorithm)
    for tag in (NOT_DP, NON_PRIVATE_KIND):
        if kind == tag and tag not in text and not (tag == NOT_DP and "not DP" in text):
            return f"{text} ({tag})"
    return text


def require_dp(table: pd.DataFrame, item: Mapping, roles: Sequence[str], claim: str) -> Check | None:
    """None unless a role's records declare it not DP (a variant "not DP as published", or a
    non-private method); then a "not evaluable" check saying so: a paper's claims compare DP methods only."""
    bad = [a for a in roles if table_guarantee(table, a) in (NOT_DP, NON_PRIVATE_KIND)]
    if not bad:
        return None
    return Check(claim, None, "refused: " + ", ".join(f"{name(item, a)} is {table_guarantee(table, a)}" for a in bad)
                 + " — claims compare DP methods only", cells=0, rule="refused: claims compare DP methods only")


def over_datasets(check: Check, covered: Iterable[str], expected: Sequence[str], item: Mapping) -> Check:
    """`every_dataset` (the rubric's one policy) over the `expected` datasets, those without
    runs (not in `covered`) missing, by their display names."""
    covered, expected = set(covered), list(dict.fromkeys(expected))
    return every_dataset(check, expected, {d: "no runs" for d in expected if d not in covered},
                         {d: dataset_name(item, d) for d in expected})


def availability(table: pd.DataFrame, dataset: str) -> tuple[str, str]:
    """('ok', ''), ('data_unavailable', reason), ('refused', reason) (every algorithm of the dataset
    refused it: their own limit, not missing data) or ('absent', 'not run in this preset')."""
    part = table[table["dataset"] == dataset] if "dataset" in table else table.iloc[0:0]
    if part.empty:
        return "absent", "not run in this preset"
    if (part["status"] == "ok").any():
        return "ok", ""
    status = "refused" if (part["status"] == "refused").all() else "data_unavailable"
    reasons = part.loc[part["status"] == status, "reason"].dropna().astype(str)
    return status, reasons.iloc[0] if len(reasons) else ""


def short_reason(reason: str) -> str:
    """Why a dataset is unavailable, in three words or so (the full reason is in the log/table)."""
    text = str(reason or "").lower()
    if "not run in this preset" in text:
        return "not run in this preset"
    if "no public" in text or "no public download" in text:
        return "no public source"
    if "unreachable" in text or "name or service" in text or "network" in text or "timed out" in text:
        return "offline, not mirrored"
    if "checksum" in text:
        return "checksum mismatch"
    if "local_path" in text:
        return "local file missing"
    return "could not be fetched" if text else "not available"


# ---------------------------------------------------------------------------------------------
# claims every item shares
# ---------------------------------------------------------------------------------------------
def runs_note(item: Mapping) -> str:
    """One line: what was run for this item under the preset (from the planned runs)."""
    groups = item.get("runs") or {}
    if not groups:
        return ""
    parts = []
    for g in groups.values():
        eps = [e for e in g.get("epsilon", []) if e is not None]
        eps_text = f", ε ∈ {{{', '.join(f'{e:g}' for e in eps)}}}" if eps else ""
        ks = g.get("k", [])
        reps = g.get("repetitions", "?")
        parts.append(f"{reps} run{'' if reps == 1 else 's'} per cell, k ∈ {{{', '.join(map(str, ks))}}}{eps_text}")
    unique = list(dict.fromkeys(parts))
    preset = item.get("preset", "full")
    return f"Preset {preset}: " + "; ".join(unique[:3]) + (" …" if len(unique) > 3 else "")


def every_dataset(check: Check, planned: Sequence[str], missing: Mapping[str, str] | Sequence[str],
                  names: Mapping[str, str] | None = None) -> Check:
    """The rubric's one policy for a claim over every dataset (docs/VERDICTS.md): with some of the
    `planned` datasets `missing` (dataset → why, or a list) it is not evaluable (n of N datasets),
    whatever the available ones show; their verdict (and the why of a failure) stays in the detail (with
    none available, the note alone)."""
    missing = dict(missing) if isinstance(missing, Mapping) else {d: "" for d in missing}
    if not missing:
        return check
    names = names or {}
    n, total = len(planned) - len(missing), len(planned)
    note = (f"not evaluable ({n} of {total} datasets; missing: "
            + ", ".join(f"{names.get(d, d)} ({why or 'data unavailable'})" for d, why in missing.items()) + ")")
    shown = check.result + (f" ({check.why})" if check.holds is False and check.why else "")
    on = f"on the {n} available: {shown}" + (f" — {check.detail}" if check.detail else "")
    return dataclasses.replace(check, holds=None, undecided=False, why="", detail=f"{note}; {on}" if n else note,
                               rule=f"{check.rule}; {note}" if check.rule else note)
