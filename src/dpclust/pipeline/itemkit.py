"""The items layer's shared toolkit: what every paper item needs, so that an item's own module is
only what is specific to it.

An item module (`dpclust.pipeline.items.<paper>.<item>`, `dpclust.pipeline.item_modules`) exposes up
to three step functions under fixed names (aggregate, render, checks); each receives the item's *step spec* (see
`dpclust.pipeline.run_plan.ItemTarget.step_spec`): a dict with the step's options (`table`, `figure` or
`claims`, and `options` shared by all steps), `title`/`caption` (render), `names` (display names
of the item's algorithms and datasets, from config/names.yaml), `runs` (render: what was run under
the preset) and `dataset_entries` (aggregate: registry entries of the datasets it reads).

Here:
* `name`, `dataset_name`, `step_options`: display names and a step's options;
* `summarise`: one row per cell (e.g. dataset × algorithm × k × ε) with mean, sd, min, max and n of
  chosen metrics, keeping one row per unavailable (dataset, algorithm) with its status and reason;
* `availability`, `short_reason`: whether a dataset ran, and why not in three words;
* `spent_exactly`: the claim every private item makes, "every private run spent exactly its ε";
* `runs_note`: one line saying what was run under the preset (for captions and tables).
Drawing helpers (`unavailable_panel`, `mean_sd_line`) live in `dpclust.pipeline.plotting`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dpclust.pipeline.aggregate import Check, fmt

CELL = ("group", "dataset", "algorithm", "k", "epsilon")


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


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------
def run_rows(records: Iterable[Mapping], metrics: Sequence[str], info_keys: Sequence[str] = ()) -> pd.DataFrame:
    """One row per run (cell keys, seed, status, reason, metrics, chosen `info` entries); one row per
    record whose status is not ok."""
    rows = []
    for rec in records:
        base = {key: rec.get(key) for key in CELL}
        base["status"] = rec.get("status", "ok")
        base["reason"] = rec.get("reason", "")
        if base["status"] != "ok":
            rows.append(base)
            continue
        for run in rec["runs"]:
            row = dict(base, seed=run["seed"])
            for m in metrics:
                row[m] = run.get(m)
            info = run.get("info") or {}
            for key in info_keys:
                row[key] = info.get(key)
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[*CELL, "status", "reason", "seed", *metrics, *info_keys])
    return frame


def summarise(records: Iterable[Mapping], metrics: Sequence[str] = ("cost_kmeans",), by: Sequence[str] = CELL,
              info_keys: Sequence[str] = ()) -> pd.DataFrame:
    """Mean, sd, min, max and n of each metric per cell `by`; cells of unavailable data keep one
    row with status and reason (and NaN statistics), so renderers can say "data unavailable"."""
    runs = run_rows(records, [*metrics, *info_keys])
    by = list(by)
    cols = [*by, "metric", "mean", "std", "min", "max", "n", "status", "reason"]
    frames = []
    bad = runs[runs["status"] != "ok"].drop_duplicates(subset=by)
    for metric in [*metrics, *info_keys]:
        if not bad.empty:
            frames.append(bad[[*by, "status", "reason"]].assign(metric=metric))
    ok = runs[runs["status"] == "ok"]
    if not ok.empty:
        keyed = ok.assign(epsilon=ok["epsilon"].astype(float).fillna(-1.0)) if "epsilon" in by else ok
        long = keyed.melt(id_vars=by, value_vars=[*metrics, *info_keys], var_name="metric", value_name="value")
        long["value"] = pd.to_numeric(long["value"], errors="coerce")
        stats = (long.groupby([*by, "metric"], dropna=False)["value"]
                 .agg(["mean", "std", "min", "max", "count"]).reset_index().rename(columns={"count": "n"}))
        if "epsilon" in by:
            stats["epsilon"] = stats["epsilon"].where(stats["epsilon"] >= 0, np.nan)
        frames.append(stats.assign(status="ok", reason=""))
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True).reindex(columns=cols).reset_index(drop=True)


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
def spent_exactly(records: Iterable[Mapping], rel_tol: float = 1e-9) -> Check:
    """"Every private run spent exactly its ε (and no more δ than its budget)": the runner refuses
    overspending, so this checks the other direction, an algorithm that silently spent less. Runs
    that report no ε (`epsilon_spent` null: not DP as published/configured, non-private; see
    `dpclust.pipeline.run_job.epsilon_not_reported`) are not counted, and the detail says how many."""
    total, bad, unreported = 0, [], 0
    for rec in records:
        if rec.get("status", "ok") != "ok" or not rec.get("private", rec.get("epsilon") is not None):
            continue
        eps = rec.get("epsilon")
        if eps is None:
            continue
        for run in rec["runs"]:
            spent = run.get("epsilon_spent")
            if spent is None or (isinstance(spent, float) and math.isnan(spent)):
                unreported += 1
                continue
            total += 1
            if not math.isclose(float(spent), float(eps), rel_tol=rel_tol):
                bad.append(f"{rec['algorithm']} on {rec['dataset']} (k={rec['k']}, ε={eps:g}) spent {fmt(spent, 6)}")
    skipped = f"; {unreported} runs report no ε (no DP guarantee), not counted" if unreported else ""
    if total == 0:
        return Check("Every private run spent exactly its ε", None, "no private run available" + skipped,
                     kind="bookkeeping")
    return Check("Every private run spent exactly its ε", not bad,
                 f"{total - len(bad)}/{total} runs" + (f"; e.g. {bad[0]}" if bad else "") + skipped,
                 kind="bookkeeping")


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
