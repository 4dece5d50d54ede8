"""Adaptive replication: more runs, in rounds, for the claims the paper's runs leave undecided.

An item may declare `replication` (config/README.md): the run groups whose runs decide its claims,
the looks (`rounds`: cumulative multiples of each group's repetitions, at most MAX_MULTIPLE) and a
CPU cap. Its paper claims are then decided by a group-sequential rule with a Bonferroni
error-spending schedule (docs/VERDICTS.md, "Replication"):

* look 0 is the paper's runs, decided at α/2 (`alpha_schedule`); the figure shows these runs only;
* look j ≥ 1 adds runs with new seeds (seeds [m_{j-1}·r, m_j·r) of each group of r repetitions) and
  decides the claims still open on all runs so far, at α/(2R) for R declared looks;
* inside a claim still open, a cell a look decided keeps that verdict (`verdicts.settled`) and the
  next look runs only the open cells' blocks (`look_jobs`, from the decision's `open_cells`);
* a claim stops at the first look that decides it; the others go on while a look is left and the
  CPU the looks add, priced by the committed price table (`look_cost_s`), fits the cap;
* a cell the rubric's degenerate guard took (fewer than k/2 non-empty clusters in some run) never
  holds, and more runs only keep or lower its fewest clusters: a look runs it again only while its
  estimate lies past the claim's threshold (its p-value of "holds here" below ½, so that more runs could
  make it fail); a claim whose open cells are all such stuck cells stops (`STUCK`).

Whatever the data do and wherever a claim stops, the chance that any look gives it a wrong verdict
is at most the sum of the looks' levels, α (a union bound: valid for any dependence between looks,
so for looks on cumulative runs). `tests/test_replication.py` simulates it under the null.

The rounds are planned in advance (`round_jobs`: ordinary run batches with their own seeds, under
`<group>.round<j>`); which of them run is decided by the Snakemake checkpoint `replication_decision`
(`decide`), one look at a time, so a second invocation re-runs no round. A look's run job holds the
blocks of its file that the decision before it leaves open (`ItemTarget.replication_look_batch`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from dpclust.api import DPClustError
from dpclust.pipeline.levels import MAX_MULTIPLE, alpha_schedule  # noqa: F401 (alpha_schedule: the looks' levels)

#: the default looks after the paper's runs: cumulative multiples of each group's repetitions
DEFAULT_ROUNDS = (2, 4, 10)
#: the default cap on the CPU the added rounds of one item may cost
DEFAULT_CPU_HOURS = 1.0

DECIDED = ("holds", "does not hold")
#: why a claim left open stops when only degenerate cells that more runs cannot decide keep it open
STUCK = ("its open cells are degenerate (fewer than k/2 non-empty clusters: they never hold) with estimates "
         "on the holding side: more runs cannot decide it")


def stuck(rec: Mapping) -> bool:
    """An open cell more runs cannot decide: degenerate (it never holds; more runs keep it so) and with
    its estimate on the holding side of the threshold (p-value of "holds here" at least ½: failing is not
    in prospect either)."""
    return bool(rec.get("degenerate")) and rec.get("state") == "open" and float(rec.get("p_fail", 0.0)) >= 0.5


def declaration(cfg: dict | None, sensitivity=None) -> dict | None:
    """The item's `replication` with its defaults filled in, or None when it declares none. Its cells
    (`groups`, optionally `algorithms`) are those of every claim; `claims` may give a claim (the
    entries whose `match` its text contains) cells of its own, so that a look runs only the cells of
    the claims still open. The item's `sensitivity` adds the `alternatives` the looks replicate too
    (`tracked_alternatives`)."""
    if not cfg:
        return None
    rounds = [int(m) for m in cfg.get("rounds") or DEFAULT_ROUNDS]
    if not cfg.get("groups"):
        raise DPClustError("replication: name the run groups whose runs decide the claims (`groups`)")
    if any(b <= a for a, b in zip([1, *rounds], rounds)) or rounds[-1] > MAX_MULTIPLE:
        raise DPClustError(f"replication: rounds {rounds} must increase from above 1 to at most "
                           f"{MAX_MULTIPLE} (multiples of the paper's runs)")
    groups = [str(g) for g in cfg["groups"]]
    out: dict[str, Any] = {"groups": groups, "rounds": rounds,
                           "cpu_hours": float(cfg.get("cpu_hours", DEFAULT_CPU_HOURS))}
    if cfg.get("algorithms"):
        out["algorithms"] = list(cfg["algorithms"])
    if cfg.get("claims"):
        out["claims"] = [{"match": str(c["match"]), "groups": list(c["groups"]),
                          **({"algorithms": list(c["algorithms"])} if c.get("algorithms") else {})}
                         for c in cfg["claims"]]
    alternatives = tracked_alternatives(sensitivity, groups)
    if alternatives:
        out["alternatives"] = alternatives
    return out


# ------------------------------------------------------------------------------ the alternatives
# A verdict's sensitivity (dpclust.pipeline.sensitivity) decides each claim again at the documented
# alternatives of a setting. Where those alternatives have runs of their own (data variants, settings
# variants) of a replicated group, each (claim, alternative) is replicated like a claim of its own: it
# gets looks until decided or capped, on its own runs, with the same error spending, under a CPU cap
# of its own. The declared value is tracked on the alternatives' scope too.
def alternative_key(claim: str, what: str, value: str) -> str:
    """The name of a claim decided at one alternative of a setting, in a decision."""
    return f"{claim} ⟦{what} = {value}⟧"


def declared_value(declared: str) -> str:
    """How the declared value of a setting is named among its alternatives."""
    return f"{declared} (declared)"


def tracked_alternatives(sensitivity, groups: Sequence[str]) -> list[dict]:
    """The sensitivity declarations whose alternatives the looks replicate: those with runs of their
    own (data `variants` or settings `values`) standing for one of the replicated `groups`, each as
    {what, values: {value: where its runs are}}; where: {"own": true} for the declared value (the
    item's own runs, on the alternatives' scope), else {"groups": variant group → own group,
    "suffix": the data variant's dataset suffix, or null for a settings variant}."""
    from dpclust.pipeline.resolve import sensitivity_declarations

    out = []
    for decl in sensitivity_declarations(sensitivity):
        stand_for = {str(v): str(o) for v, o in (decl.get("groups") or {}).items() if o in groups}
        values: dict[str, dict] = {}
        if decl.get("values"):
            for group, value in decl["values"].items():
                if group in stand_for:
                    values.setdefault(str(value), {"groups": {}, "suffix": None})["groups"][group] = stand_for[group]
        elif decl.get("variants") and stand_for:
            values = {str(value): {"groups": stand_for, "suffix": str(suffix)}
                      for suffix, value in decl["variants"].items()}
        if values:
            out.append({"what": str(decl["what"]),
                        "values": {declared_value(str(decl["declared"])): {"own": True}, **values}})
    return out


def _alternative(decl: Mapping, key: str) -> tuple[str, dict] | None:
    """(the claim, where the alternative's runs are) of an alternative's key; None for a claim."""
    for entry in decl.get("alternatives") or ():
        for value, where in entry["values"].items():
            tail = alternative_key("", entry["what"], value)
            if key.endswith(tail):
                return key[: -len(tail)], where
    return None


def _variant_selectors(selectors: Sequence[dict], where: Mapping) -> list[dict]:
    """A claim's cell selectors moved to an alternative's runs: its variant groups (a settings variant
    also reads the own groups' other methods, so those stay)."""
    if where.get("own"):
        return list(selectors)
    out = []
    for sel in selectors:
        groups = [v for v, own in where["groups"].items() if own in sel["groups"]]
        if groups:
            out.append(dict(sel, groups=groups))
        if where["suffix"] is None:
            out.append(dict(sel))
    return out


def _variant_cell(cell: dict, where: Mapping) -> dict:
    """A claim's cell (`cell_runs`) at an alternative: on the variant dataset, in the variant groups
    (and the own groups, for a settings variant)."""
    if where.get("own"):
        return cell
    out = dict(cell)
    if where["suffix"] is not None:
        out["dataset"] = cell["dataset"] + where["suffix"]
    if "groups" in cell:
        variant = [v for v, own in where["groups"].items() if own in cell["groups"]]
        out["groups"] = variant + (list(cell["groups"]) if where["suffix"] is None else [])
    return out


def _selectors_of(decl: dict, key: str) -> list[dict]:
    """The cell selectors of a claim or of an alternative."""
    alt = _alternative(decl, key)
    return claim_cells(decl, [key]) if alt is None else _variant_selectors(claim_cells(decl, [alt[0]]), alt[1])


def _replaced(jobs: Sequence, where: Mapping) -> set[tuple]:
    """(own group, method, dataset) whose runs a settings variant's groups replace (`setting_rows`)."""
    if where.get("own") or where["suffix"] is not None:
        return set()
    return {(where["groups"][j.group], j.algorithm, j.dataset) for j in jobs if j.group in where["groups"]}


def _cells(decl: dict) -> list[dict]:
    """Every cell selector of the declaration: the item's, then each claim's."""
    return [{"groups": decl["groups"], **({"algorithms": decl["algorithms"]} if decl.get("algorithms") else {})},
            *decl.get("claims", [])]


def _variant_groups(decl: dict) -> list[dict]:
    """The selectors of the alternatives' variant groups (`tracked_alternatives`): rounds are planned
    for them too."""
    groups = sorted({g for entry in decl.get("alternatives") or () for where in entry["values"].values()
                     for g in where.get("groups") or {}})
    if not groups:
        return []
    return [{"groups": groups, **({"algorithms": decl["algorithms"]} if decl.get("algorithms") else {})}]


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


def cell_runs(key: str) -> dict:
    """Where a cell's runs are, from its key (`declared.run_key`): dataset, point (ε, k), compare, against
    (and groups, when the cell reads some of the item's groups only)."""
    return json.loads(key)


def _in_cell(job, cell: Mapping) -> bool:
    """A block (or a priced entry) holds runs of the cell: its dataset, one of its methods, and its
    point (a field's value, or one of its values), a run field a block does not set (a non-private
    method has no ε) matching every point; and one of its groups when the cell names them."""
    if job.dataset != cell["dataset"] or job.algorithm not in (cell["compare"], *cell["against"]):
        return False
    if "groups" in cell and job.group not in cell["groups"]:
        return False
    for field_name, value in cell["point"].items():
        have = getattr(job, field_name)
        if have is None or value is None:
            continue
        values = value if isinstance(value, list) else [value]
        if not any(math.isclose(float(have), float(v), rel_tol=1e-9) for v in values):
            return False
    return True


def look_jobs(decl: dict, jobs: Sequence, open_claims: Sequence[str],
              open_cells: Mapping[str, Sequence[str] | None] | None = None) -> list:
    """The blocks of one look (`jobs`: all it plans) that the claims still open need: those of each open
    claim's selectors, and of its open cells only when the decision names them (`open_cells`: claim →
    the keys of its cells no look has settled; a claim without, e.g. one decided in Python: all its
    blocks). An open alternative of a claim (`alternative_key`) needs the same on its own runs."""
    wanted: list[tuple[list[dict], list[dict] | None, set]] = []
    for claim in open_claims:
        keys = (open_cells or {}).get(claim)
        alt = _alternative(decl, claim)
        cells = None if keys is None else [cell_runs(k) for k in keys]
        if alt is not None and cells is not None:
            cells = [_variant_cell(c, alt[1]) for c in cells]
        wanted.append((_selectors_of(decl, claim), cells, set() if alt is None else _replaced(jobs, alt[1])))
    return [job for job in jobs
            if any(_selected(job, sel) and not (replaced and (job.group, job.algorithm, job.dataset) in replaced)
                   and (cells is None or any(_in_cell(job, c) for c in cells))
                   for sel, cells, replaced in wanted)]


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
        if _selected(job, _cells(decl) + _variant_groups(decl)):
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


class PricedCell(NamedTuple):
    """One entry of a look's price list (`ItemTarget.look_costs`): a (group, algorithm, dataset, k, ε)
    cell and the CPU-seconds its blocks cost."""

    group: str
    algorithm: str
    dataset: str
    k: int | None
    epsilon: float | None
    seconds: float


def look_cost_s(decl: dict, look: int, open_claims: Sequence[str],
                open_cells: Mapping[str, Sequence[str] | None] | None = None) -> float:
    """The priced CPU-seconds of look `look` (1, 2, ...) for the claims still open: the blocks it runs
    for them (`look_jobs`), at the committed price table's prices (`decl["cost_s"]`, per look a list of
    `PricedCell`s: `ItemTarget.look_costs`). Never the recorded run times, which grow with the
    machine's load: the cap must stop the same looks on any machine."""
    priced = [PricedCell(*entry) for entry in decl["cost_s"][look - 1]]
    return round(sum(p.seconds for p in look_jobs(decl, priced, open_claims, open_cells)), 1)


def _settle(claim: str, claim_cells: Mapping[str, Mapping], before: Mapping[str, Mapping], look: int) -> dict:
    """The cells of one claim settled after `look`: those settled before, and those this look decided
    (holds or fails), each with the look that settled it. A cell settled before that this look judged
    again (a check that decides its cells outside `verdicts.check`) is an error: its verdict would rest on
    a sample size the data chose."""
    redone = [key for key, rec in before.items() if key in claim_cells and claim_cells[key].get("look") is None]
    if redone:
        raise DPClustError(f"replication look {look}: the check of {claim!r} judged again {len(redone)} cell(s) an "
                           "earlier look settled; decide its cells with dpclust.pipeline.verdicts.check (or inside "
                           "verdicts.deciding(claim)), which keeps them")
    out = {key: dict(rec) for key, rec in before.items()}
    for key, rec in claim_cells.items():
        if key not in out and rec["state"] != "open":
            out[key] = dict(rec, look=look)
    return out


def _by_look(cells: Mapping[str, Mapping]) -> dict[str, int]:
    """How many of a claim's settled cells each look settled ({"0": 3, "1": 1})."""
    out: dict[str, int] = {}
    for rec in cells.values():
        out[str(rec["look"])] = out.get(str(rec["look"]), 0) + 1
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def runs_text(outcome: Mapping) -> str:
    """The `runs` column of a replicated claim: the multiple of the paper's runs and the look that
    decided (or last judged) it, and how many of its cells earlier looks settled on fewer runs."""
    text = f"{outcome['multiple']}× (look {outcome['look']}, α = {outcome['alpha']:.3g}"
    early = outcome.get("settled_earlier") or {}
    if early:
        text += "; cells settled earlier: " + ", ".join(f"{n} at look {lk}" for lk, n in early.items())
    return text + ")"


def decide(look: int, checks_csv, previous: dict | None, decl: dict, cells: Mapping | None = None,
           alternatives: Mapping | None = None) -> dict:
    """The checkpoint's decision after `look`: which of the claims open before it this look decides,
    which stay open, and whether the next look runs (a look left, and the CPU the looks add, priced
    by `look_cost_s`, within the cap). `cells` (the look's `<checks>.cells.json`: claim → key → cell)
    settle an open claim cell by cell: a cell this look decided keeps that verdict at every later look
    (`verdicts.settled`), and the next look runs only the cells still open (`open_cells`); a claim whose
    cells name no runs (decided in Python) runs all its blocks again. `alternatives` (the look's
    `<checks>.alternatives.json`: `alternative_key` → its claim, row and cells) are decided the same
    way, each on its own runs, for the declaration's tracked alternatives, under a CPU cap of their own
    (the item's `cpu_hours` again): the paper's claims get the looks they would get alone."""
    levels, looks = alpha_schedule(len(decl["rounds"])), multiples(decl)
    rows = _paper_rows(checks_csv)
    labels = dict((alternatives or {}).get("labels") or {})   # claim → [what, label text] per declaration
    cells = dict(cells or {})
    meta = {}
    for key, alt in ((alternatives or {}).get("alternatives") or {}).items():
        if _alternative(decl, key) is not None:
            rows[key] = alt["row"]
            cells[key] = alt.get("cells") or {}
            meta[key] = {k: alt[k] for k in ("of", "what", "value") if k in alt}
    decided = dict(previous["decided"]) if previous else {}
    candidates = previous["open"] if previous else sorted(rows)
    before = previous.get("settled", {}) if previous else {}
    still_open, last = [], dict(previous["last"]) if previous else {}
    settled, open_cells = {}, {}
    for claim in candidates:
        row = rows.get(claim)
        if row is None:                      # a claim this look did not produce (its cells vanished)
            decided[claim] = {"look": look, "multiple": looks[look], "alpha": levels[look], "row": None,
                              "stopped": "not produced at this look"}
            continue
        last[claim] = {"look": look, "multiple": looks[look], "alpha": levels[look], "row": row}
        if _alternative(decl, claim) is not None:
            last[claim].update(meta.get(claim, {}), alternative=True)
        elif claim in labels:
            last[claim]["segments"] = labels[claim]
        early = _by_look(before.get(claim, {}))
        if early:   # cells settled at earlier looks, on fewer runs (`runs_text`)
            last[claim]["settled_earlier"] = early
        if row["result"] in DECIDED:
            decided[claim] = dict(last[claim], stopped=f"decided at look {look}")
        elif row["result"] == "not evaluable":
            decided[claim] = dict(last[claim], stopped="not evaluable: more runs cannot decide it")
        else:
            own = cells.get(claim) or {}
            # every cell names its runs: the next look runs the open ones (but those more runs cannot
            # decide: `stuck`); else all the claim's blocks
            keyed = bool(own) and len(own) == int(row.get("cells") or 0)
            claim_settled = _settle(claim, own, before.get(claim, {}), look)
            unsettled = [k for k in own if k not in claim_settled]
            if keyed and unsettled and all(stuck(own[k]) for k in unsettled):
                decided[claim] = dict(last[claim], stopped=STUCK)
                continue
            still_open.append(claim)
            settled[claim] = claim_settled
            open_cells[claim] = sorted(k for k in unsettled if not stuck(own[k])) if keyed else None
    # the paper's claims and the alternatives go on under caps of their own, so that declaring a
    # sensitivity never changes a headline verdict: the claims' looks are those they would have alone
    claims_open = [c for c in still_open if _alternative(decl, c) is None]
    alts_open = [c for c in still_open if _alternative(decl, c) is not None]
    why, estimate, added = _next_look(decl, look, claims_open, open_cells, previous, "", bool(candidates))
    alt_why, alt_estimate, alt_added = _next_look(decl, look, alts_open, open_cells, previous, "alternatives_",
                                                  bool(candidates))
    go, alt_go = not why, not alt_why
    for claim in (claims_open if not go else []) + (alts_open if not alt_go else []):
        need = runs_needed(last[claim]["row"], last[claim]["multiple"])
        stop = why if claim in claims_open else alt_why
        decided[claim] = dict(last[claim], stopped=stop + (f"; would need ≈ {need}× the paper's runs" if need else ""))
    going = (claims_open if go else []) + (alts_open if alt_go else [])
    return {"look": look, "alpha": levels[look], "multiple": looks[look], "open": going,
            "open_cells": {c: open_cells[c] for c in going}, "settled": {c: settled[c] for c in going},
            "decided": decided, "last": last, "next": bool(going), "stopped": why, "added_s": round(added, 1),
            "next_s": round(estimate, 1) if go else 0.0,
            "labels": {**dict((previous or {}).get("labels") or {}), **labels},
            "tracked": [entry["what"] for entry in decl.get("alternatives") or ()],
            **({"alternatives_stopped": alt_why, "alternatives_added_s": round(alt_added, 1),
                "alternatives_next_s": round(alt_estimate, 1) if alt_go else 0.0} if decl.get("alternatives") else {})}


def _next_look(decl: dict, look: int, still_open: Sequence[str], open_cells: Mapping, previous: dict | None,
               prefix: str, any_claim: bool) -> tuple[str, float, float]:
    """(why the looks stop, "" when the next runs; its priced CPU-seconds; the CPU-seconds the looks added
    so far) for the paper's claims (`prefix` "") or the alternatives ("alternatives_"), each under the
    item's CPU cap: the looks run so far, each priced when it was asked for (the cap bounds what they add)."""
    looks = multiples(decl)
    added = (float(previous.get(prefix + "added_s", 0.0)) + float(previous.get(prefix + "next_s", 0.0))
             if previous else 0.0)
    if not still_open:
        return ("every claim decided" if any_claim else "no paper claim"), 0.0, added
    if look + 1 >= len(looks):
        return f"cap: {looks[-1]}× the paper's runs reached", 0.0, added
    estimate = look_cost_s(decl, look + 1, still_open, open_cells)
    if added + estimate > decl["cpu_hours"] * 3600:
        return (f"cap: CPU (next look ≈ {estimate / 3600:.2g} CPU-h, {added / 3600:.2g} added so far, "
                f"cap {decl['cpu_hours']:g})"), estimate, added
    return "", estimate, added


def stopped_results(decision: Mapping | None) -> dict[str, str]:
    """The claims and alternatives that stopped at an earlier look (claim or `alternative_key` → the
    result they stopped with): a later look's sensitivity labels quote them, never a re-judgement of
    the same runs at a smaller level."""
    if not decision:
        return {}
    return {key: out["row"]["result"] for key, out in decision["decided"].items() if out.get("row")}


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
        added = float(decision.get("added_s", 0.0)) + float(decision.get("alternatives_added_s", 0.0))
        for claim, outcome in decision["decided"].items():
            at = paper & (table["paper"] == pap) & (table["item"] == item) & (table["claim"] == claim)
            if not at.any():
                continue
            row = outcome.get("row")
            if row and outcome["look"] > 0:
                # every column the deciding look wrote, so that the verdict, its why and its sensitivity
                # are of one look (the why quotes the sensitivity of a claim that does not hold)
                for col in ("result", "quantity", "ci_low", "ci_high", "threshold", "detail", "why", "cells",
                            "rule", "sensitivity"):
                    if col in row and col in table:
                        table.loc[at, col] = row[col]
            table.loc[at, "runs"] = runs_text(outcome)
            table.loc[at, "stopped"] = outcome["stopped"]
            table.loc[at, "added_cpu_s"] = round(added, 1)
            _relabel(table, at, claim, outcome, decision)
    return table


def _relabel(table: pd.DataFrame, at, claim: str, outcome: Mapping, decision: Mapping) -> None:
    """The sensitivity of a claim with the labels of its tracked declarations (`tracked_alternatives`) as
    the last look gave them (their alternatives may be decided after the claim itself), each followed by
    the runs its alternatives used ("runs: seed 1 10×, seed 2 4×"), also where its why quotes them; the
    other declarations' labels stay those of the look that decided the claim."""
    latest = {what: text for what, text in (decision.get("labels") or {}).get(claim, [])}
    tracked = set(decision.get("tracked") or ())
    for what, old in outcome.get("segments") or ():
        new = latest.get(what)
        if what not in tracked or not new:
            continue
        runs = [f"{alt['value']} {alt['multiple']}×" for alt in decision["decided"].values()
                if alt.get("alternative") and alt.get("of") == claim and alt.get("what") == what]
        new += f" (runs: {', '.join(runs)})" if runs else ""
        for col in ("sensitivity", "why"):
            if col in table:
                table.loc[at, col] = [v.replace(old, new) if isinstance(v, str) else v for v in table.loc[at, col]]


# ------------------------------------------------------------------------------ the rule under the null
def null_error_rate(cells: int, looks: Sequence[int], levels: Sequence[float], reps: int, n0: int = 10,
                    side: str = ">", seed: int = 0, per_cell: bool = False, quantifier: str = "every",
                    means: Sequence[float] | None = None) -> float:
    """How often the sequential rule gives a wrong verdict on a claim of `cells` cells (normal data,
    Student-t cells, cell i centred at `means[i]`, default every cell exactly at the threshold 0),
    stopping at the first look that decides it: with side ">" a cell at 0 is false and a wrong verdict
    is "holds"; with ">=" it is true and a wrong verdict is "does not hold". `looks`: cumulative
    multiples of `n0` runs; `levels`: each look's one-sided level (`alpha_schedule`, or α at every
    look to see the inflation that error spending prevents). `per_cell`: as the pipeline runs a claim
    whose cells name their runs, a cell a look decided keeps that verdict (`verdicts.settled`) and
    only the open cells get the next look's runs; else every cell is judged again at every look."""
    import numpy as np

    from dpclust.pipeline import verdicts

    rng = np.random.default_rng(seed)
    test = verdicts.Directional(side, 0.0, null_margin=0.0)
    wrong_result = True if side == ">" else False
    centre = np.zeros(cells) if means is None else np.asarray(means, dtype=float)
    wrong = 0
    for _ in range(reps):
        data = rng.standard_normal((cells, looks[-1] * n0)) + centre[:, None]
        settled: dict[str, dict] = {}
        for look, (multiple, level) in enumerate(zip(looks, levels)):
            x = data[:, : multiple * n0]
            n = x.shape[1]
            cs = [replace(verdicts.t_cell(f"c{i}", float(row.mean()), float(row.std(ddof=1) / math.sqrt(n)), n - 1),
                          key=f"c{i}") for i, row in enumerate(x)]
            with verdicts.settled({"claim": settled} if per_cell else {}), verdicts.deciding("claim"):
                verdict = verdicts.judge(cs, test, quantifier, level)
            if verdict.result is not None:
                wrong += verdict.result is wrong_result
                break
            if per_cell:
                settled.update({str(c.key): dict(c.as_record(), look=look) for c in verdict.cells
                                if c.state != verdicts.OPEN and c.key not in settled})
    return wrong / reps
