"""Adaptive replication: more runs, in rounds, for the claims the paper's runs leave undecided.

An item may declare `replication` (config/README.md): the run groups whose runs decide its claims,
the looks (`rounds`: cumulative multiples of each group's repetitions, at most MAX_MULTIPLE) and a
CPU cap. Its paper claims are then decided by a group-sequential rule with a Bonferroni
error-spending schedule (docs/VERDICTS.md, "Replication"):

* look 0 is the paper's runs, decided at α/2 (`alpha_schedule`); the figure shows these runs only;
* look j ≥ 1 adds runs with new seeds (seeds [m_{j-1}·r, m_j·r) of each group of r repetitions) and
  decides the claims still open on all runs so far, at α/(2R) for R declared looks;
* a claim stops at the first look that decides it; the others go on while a look is left and the
  CPU the looks add, priced by the committed price table (`look_cost_s`), fits the cap.

Whatever the data do and wherever a claim stops, the chance that any look gives it a wrong verdict
is at most the sum of the looks' levels, α (a union bound: valid for any dependence between looks,
so for looks on cumulative runs). `tests/test_replication.py` simulates it under the null.

The rounds are planned in advance (`round_jobs`: ordinary run batches with their own seeds, under
`<group>.round<j>`); which of them run is decided by the Snakemake checkpoint `replication_decision`
(`decide`), one look at a time, so a second invocation re-runs no round.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from dpclust.api import DPClustError
from dpclust.pipeline.verdicts import ALPHA

#: the default looks after the paper's runs: cumulative multiples of each group's repetitions
DEFAULT_ROUNDS = (2, 4, 10)
#: no claim gets more than this many times the paper's runs (the issue's default cap)
MAX_MULTIPLE = 10
#: the default cap on the CPU the added rounds of one item may cost
DEFAULT_CPU_HOURS = 1.0
#: the share of ALPHA spent at the paper's runs; the rest is split evenly over the declared looks
FIRST_LOOK_SHARE = 0.5

DECIDED = ("holds", "does not hold")


def declaration(cfg: dict | None) -> dict | None:
    """The item's `replication` with its defaults filled in, or None when it declares none. Its cells
    (`groups`, optionally `algorithms`) are those of every claim; `claims` may give a claim (the
    entries whose `match` its text contains) cells of its own, so that a look runs only the cells of
    the claims still open."""
    if not cfg:
        return None
    rounds = [int(m) for m in cfg.get("rounds") or DEFAULT_ROUNDS]
    if not cfg.get("groups"):
        raise DPClustError("replication: name the run groups whose runs decide the claims (`groups`)")
    if any(b <= a for a, b in zip([1, *rounds], rounds)) or rounds[-1] > MAX_MULTIPLE:
        raise DPClustError(f"replication: rounds {rounds} must increase from above 1 to at most "
                           f"{MAX_MULTIPLE} (multiples of the paper's runs)")
    out = {"groups": list(cfg["groups"]), "rounds": rounds,
           "cpu_hours": float(cfg.get("cpu_hours", DEFAULT_CPU_HOURS))}
    if cfg.get("algorithms"):
        out["algorithms"] = list(cfg["algorithms"])
    if cfg.get("claims"):
        out["claims"] = [{"match": str(c["match"]), "groups": list(c["groups"]),
                          **({"algorithms": list(c["algorithms"])} if c.get("algorithms") else {})}
                         for c in cfg["claims"]]
    return out


def _cells(decl: dict) -> list[dict]:
    """Every cell selector of the declaration: the item's, then each claim's."""
    return [{"groups": decl["groups"], **({"algorithms": decl["algorithms"]} if decl.get("algorithms") else {})},
            *decl.get("claims", [])]


def _selected(job, selectors: Sequence[dict]) -> bool:
    return any(job.group in sel["groups"] and (not sel.get("algorithms") or job.algorithm in sel["algorithms"])
               for sel in selectors)


def claim_cells(decl: dict, claims: Sequence[str]) -> list[dict]:
    """The cell selectors of the `claims` (texts): each claim's own entries (`claims[].match` in its
    text), else the item's."""
    own = decl.get("claims", [])
    out: list[dict] = []
    for claim in claims:
        matched = [c for c in own if c["match"] in claim]
        out += matched or _cells(decl)[:1]
    return out


def look_jobs(decl: dict, jobs: Sequence, open_claims: Sequence[str]) -> list:
    """The blocks of one look (`jobs`: all it plans) that the claims still open need."""
    selectors = claim_cells(decl, open_claims)
    return [job for job in jobs if _selected(job, selectors)]


def alpha_schedule(n_rounds: int, alpha: float = ALPHA) -> list[float]:
    """The one-sided level of each look: FIRST_LOOK_SHARE of α at the paper's runs, the rest split
    evenly over the `n_rounds` added looks; they sum to α."""
    if n_rounds < 1:
        raise ValueError("a replication has at least one added look")
    first = FIRST_LOOK_SHARE * alpha
    return [first] + [(alpha - first) / n_rounds] * n_rounds


def multiples(decl: dict) -> list[int]:
    """The cumulative multiple of the paper's runs at each look (look 0: 1)."""
    return [1, *decl["rounds"]]


def round_group(group: str, look: int) -> str:
    """The directory of a group's runs added at `look` (0: the group itself)."""
    return group if look == 0 else f"{group}.round{look}"


def round_jobs(where: str, jobs: Sequence, decl: dict) -> list[list]:
    """The run blocks each added look may run, from the item's blocks (`dpclust.pipeline.run_plan.RunJob`):
    for every cell a selector of the declaration names (its groups, and its `algorithms` when given:
    those the claims compare), the seeds [m_{j-1}·r, m_j·r) in blocks of the group's
    size, written under `round_group(group, j)`. Seeds continue the group's own, so every added run is
    a new, independent draw and the same seed always gives the same run."""
    groups = {job.group for job in jobs}
    for sel in _cells(decl):
        unknown = sorted(set(sel["groups"]) - groups)
        if unknown:
            raise DPClustError(f"{where}: replication names run groups {unknown} that the item does not run "
                               f"(its groups: {', '.join(sorted(groups)) or 'none'})")
        unknown = sorted(set(sel.get("algorithms") or ()) - {j.algorithm for j in jobs if j.group in sel["groups"]})
        if unknown:
            raise DPClustError(f"{where}: replication names algorithms {unknown} that its groups do not run")
    cells: dict[tuple, list] = {}
    for job in jobs:
        if _selected(job, _cells(decl)):
            cells.setdefault((job.group, job.dataset, job.algorithm, job.k, job.epsilon), []).append(job)
    looks = multiples(decl)
    out: list[list] = []
    for j in range(1, len(looks)):
        added = []
        for blocks in cells.values():
            first = min(blocks, key=lambda b: b.seed_start)
            reps = sum(b.seed_count for b in blocks)
            size = max(b.seed_count for b in blocks)
            lo, hi = looks[j - 1] * reps, looks[j] * reps
            for start in range(lo, hi, size):
                added.append(replace(first, block=start // size, seed_start=start,
                                     seed_count=min(size, hi - start), round=j, references=()))
        out.append(added)
    return out


# ------------------------------------------------------------------------------ the checkpoint
def _paper_rows(checks_csv) -> dict[str, dict]:
    frame = pd.read_csv(checks_csv)
    if "kind" in frame:
        frame = frame[frame["kind"].fillna("paper").astype(str) == "paper"]
    return {str(row["claim"]): {k: _plain(v) for k, v in row.items()} for _, row in frame.iterrows()}


def _plain(value: Any) -> Any:
    """A JSON value of a table cell: NaN (an empty cell) is null; ±inf stays a float."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and math.isnan(value) else value


def look_cost_s(decl: dict, look: int, open_claims: Sequence[str]) -> float:
    """The priced CPU-seconds of look `look` (1, 2, ...) for the claims still open: the blocks their
    cells run (`look_jobs`), at the committed price table's prices (`decl["cost_s"]`, per look and
    `group|algorithm`: `ItemTarget.look_costs`). Never the recorded run times, which grow with the
    machine's load: the cap must stop the same looks on any machine."""
    selectors = claim_cells(decl, open_claims)
    priced = decl["cost_s"][look - 1]
    return sum(seconds for key, seconds in priced.items()
               if any(key.split("|")[0] in sel["groups"]
                      and (not sel.get("algorithms") or key.split("|")[1] in sel["algorithms"])
                      for sel in selectors))


def decide(look: int, checks_csv, previous: dict | None, decl: dict) -> dict:
    """The checkpoint's decision after `look`: which of the claims open before it this look decides,
    which stay open, and whether the next look runs (a look left, and the CPU the looks add, priced
    by `look_cost_s`, within the cap)."""
    levels, looks = alpha_schedule(len(decl["rounds"])), multiples(decl)
    rows = _paper_rows(checks_csv)
    decided = dict(previous["decided"]) if previous else {}
    candidates = previous["open"] if previous else sorted(rows)
    still_open, last = [], dict(previous["last"]) if previous else {}
    for claim in candidates:
        row = rows.get(claim)
        if row is None:                      # a claim this look did not produce (its cells vanished)
            decided[claim] = {"look": look, "multiple": looks[look], "alpha": levels[look], "row": None,
                              "stopped": "not produced at this look"}
            continue
        last[claim] = {"look": look, "multiple": looks[look], "alpha": levels[look], "row": row}
        if row["result"] in DECIDED:
            decided[claim] = dict(last[claim], stopped=f"decided at look {look}")
        elif row["result"] == "not evaluable":
            decided[claim] = dict(last[claim], stopped="not evaluable: more runs cannot decide it")
        else:
            still_open.append(claim)
    # the looks run so far, each priced when it was asked for (the cap bounds what they add)
    added = float(previous.get("added_s", 0.0)) + float(previous.get("next_s", 0.0)) if previous else 0.0
    next_look, estimate = look + 1, 0.0
    why = ""
    if not still_open:
        why = "every claim decided" if candidates else "no paper claim"
    elif next_look >= len(looks):
        why = f"cap: {looks[-1]}× the paper's runs reached"
    else:
        estimate = look_cost_s(decl, next_look, still_open)
        if added + estimate > decl["cpu_hours"] * 3600:
            why = (f"cap: CPU (next look ≈ {estimate / 3600:.2g} CPU-h, {added / 3600:.2g} added so far, "
                   f"cap {decl['cpu_hours']:g})")
    go = not why
    if not go:
        for claim in still_open:
            need = runs_needed(last[claim]["row"], last[claim]["multiple"])
            decided[claim] = dict(last[claim], stopped=why + (f"; would need ≈ {need}× the paper's runs"
                                                               if need else ""))
    return {"look": look, "alpha": levels[look], "multiple": looks[look], "open": still_open if go else [],
            "decided": decided, "last": last, "next": go, "stopped": why, "added_s": round(added, 1),
            "next_s": round(estimate, 1) if go else 0.0}


def runs_needed(row: dict, multiple: int) -> int | None:
    """For a directional claim left open: the multiple of the paper's runs at which its worst cell's
    interval (half-width ∝ 1/√runs, same level) would just clear the threshold; None when the row
    gives no finite interval or names no single threshold (an equivalence band)."""
    match = re.match(r"^\s*[<>]=?\s*(-?[0-9.eE+-]+)", str(row.get("threshold") or ""))
    try:
        q, lo, hi = (float(row[k]) for k in ("quantity", "ci_low", "ci_high"))
    except (KeyError, TypeError, ValueError):
        return None
    if not match or not all(map(math.isfinite, (q, lo, hi))):
        return None
    gap = abs(q - float(match.group(1)))
    half = (hi - lo) / 2
    if gap <= 0 or half <= 0:
        return None
    return max(multiple + 1, math.ceil(multiple * (half / gap) ** 2))


def write_decision(decision: dict, path) -> None:
    from dpclust.fileio import write_text_atomic

    write_text_atomic(json.dumps(decision, indent=1, sort_keys=True, default=str) + "\n", path)


def read_decision(path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------ the verdict table
def apply(table: pd.DataFrame, decisions: dict[str, dict]) -> pd.DataFrame:
    """The summary with each replicated item's paper claims decided by their replication (`decisions`:
    item key → the final decision) and the columns `runs` (multiple of the paper's runs, and the look)
    and `stopped` for every paper claim, and `added_cpu_s` (the CPU the item's looks added, priced by
    the committed price table) for the replicated ones."""
    table = table.copy()
    table["runs"] = ""
    table["stopped"] = ""
    table["added_cpu_s"] = float("nan")
    paper = table["kind"] == "paper"
    table.loc[paper, "runs"] = "1×"
    table.loc[paper, "stopped"] = "no replication declared"
    for i in table.index[paper & (table["result"] == "not decidable")]:
        need = runs_needed(table.loc[i].to_dict(), 1)
        if need:
            table.loc[i, "stopped"] = f"no replication declared; would need ≈ {need}× the paper's runs"
    for key, decision in decisions.items():
        pap, item = key.split("/", 1)
        added = float(decision.get("added_s", 0.0))
        for claim, outcome in decision["decided"].items():
            at = paper & (table["paper"] == pap) & (table["item"] == item) & (table["claim"] == claim)
            if not at.any():
                continue
            row = outcome.get("row")
            if row and outcome["look"] > 0:
                for col in ("result", "quantity", "ci_low", "ci_high", "threshold", "detail", "why", "cells",
                            "rule"):
                    if col in row and col in table:
                        table.loc[at, col] = row[col]
            table.loc[at, "runs"] = f"{outcome['multiple']}× (look {outcome['look']}, α = {outcome['alpha']:.3g})"
            table.loc[at, "stopped"] = outcome["stopped"]
            table.loc[at, "added_cpu_s"] = round(added, 1)
    return table


# ------------------------------------------------------------------------------ the rule under the null
def null_error_rate(cells: int, looks: Sequence[int], levels: Sequence[float], reps: int, n0: int = 10,
                    side: str = ">", seed: int = 0) -> float:
    """How often the sequential rule gives a wrong verdict on a claim of `cells` cells whose every
    cell sits exactly at its threshold (normal data, Student-t cells), stopping at the first look
    that decides it: with side ">" the claim is false there and a wrong verdict is "holds"; with
    ">=" it is true and a wrong verdict is "does not hold". `looks`: cumulative multiples of `n0`
    runs; `levels`: each look's one-sided level (`alpha_schedule`, or α at every look to see the
    inflation that error spending prevents)."""
    import numpy as np

    from dpclust.pipeline.verdicts import Directional, judge, t_cell

    rng = np.random.default_rng(seed)
    test = Directional(side, 0.0, null_margin=0.0)
    wrong_result = True if side == ">" else False
    wrong = 0
    for _ in range(reps):
        data = rng.standard_normal((cells, looks[-1] * n0))
        for multiple, level in zip(looks, levels):
            x = data[:, : multiple * n0]
            n = x.shape[1]
            cs = [t_cell(f"c{i}", float(row.mean()), float(row.std(ddof=1) / math.sqrt(n)), n - 1)
                  for i, row in enumerate(x)]
            result = judge(cs, test, "every", level).result
            if result is not None:
                wrong += result is wrong_result
                break
    return wrong / reps
