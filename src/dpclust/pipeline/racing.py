"""Racing: each leaderboard cell gets runs until its best DP method is separated from the rest, or a cap.

An item that owns runs may declare `racing` (config/papers/leaderboard.yaml): the run groups raced
(their `repetitions` are the initial runs of every (objective, dataset, k, ε, method) cell), the looks
(`rounds`: cumulative multiples of those repetitions; the last is the cap) and the level `alpha`.
The rule (docs/VERDICTS.md, "Replication"), fixed before any run:

* look j has level α_j (`replication.alpha_schedule`: α/2 at the initial runs, the rest split evenly
  over the R added looks; Σ α_j = α);
* in each cell the methods still contending at look j are those of look j − 1 (look 0: every ranked
  DP method) that the current best (the lowest mean among them) does not beat: a method stops
  contending when the Welch interval of its mean minus the best's, at two-sided confidence 1 − α_j on
  all their runs so far, lies entirely above 0;
* a cell stops when one contender remains ("separated at look j"), when a single DP method ran
  ("only one DP method"), or at the last look ("cap reached"); otherwise look j + 1 runs the blocks
  of its contenders only. A method that stops contending keeps the runs it has.
* with `cpu_hours`, the next look runs only the open cells whose CPU, priced by the committed price
  table (`looks_cpu_s`, `dpclust.pipeline.run_prices`), still fits what the added looks may cost,
  cheapest first; the others stop ("CPU cap reached").

Two methods of equal mean are ever separated (either way, at any look) only when some look's
two-sided test of their difference rejects: at most Σ_j α_j = α, whatever the looks' dependence (a
union bound); `null_separation_rate` simulates it. The bound is per pair of methods, not corrected
over the methods of a cell (as the board's 95 % intervals never were). The difference is tested, not
the overlap of the two methods' own intervals, which would need about √2 times more spread between
them for the same level: fewer runs decide a cell.

Everything here is a function of the run records and the declaration: the job `race_look`
(workflow/rules/replicate.smk; the checkpoint `race_decision` publishes its decision) replays the
race through the look that has run to ask for the next look's blocks, and the `best` item replays it
through the last look to say how each cell stopped, so the two always agree. A run's look is read
from its seed (look j: seeds [m_{j-1}·r, m_j·r) of a group of r repetitions, `race_jobs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

import pandas as pd

from dpclust.api import DPClustError
from dpclust.pipeline.claims import diff_ci
from dpclust.pipeline.levels import ALPHA, MAX_MULTIPLE, alpha_schedule

#: the looks after the initial runs when none are declared: 2× and 4× the initial runs
DEFAULT_ROUNDS = (2, 4)
SEPARATED, CAP, CPU, ONLY, OPEN = "separated", "cap reached", "CPU cap reached", "only one DP method", "open"


def declaration(cfg: Mapping | None) -> dict | None:
    """The item's `racing` with its defaults, or None. One clear error per bad key, naming the fix."""
    if not cfg:
        return None
    if not cfg.get("groups"):
        raise DPClustError("racing: name the run groups raced (`groups`, e.g. [kmeans, kmedian])")
    rounds = [int(m) for m in cfg.get("rounds") or DEFAULT_ROUNDS]
    if any(b <= a for a, b in zip([1, *rounds], rounds)) or rounds[-1] > MAX_MULTIPLE:
        raise DPClustError(f"racing: rounds {rounds} must increase from above 1 to at most {MAX_MULTIPLE} "
                           "(cumulative multiples of the groups' repetitions; the last is the cap)")
    alpha = float(cfg.get("alpha", ALPHA))
    if not 0 < alpha < 0.5:
        raise DPClustError(f"racing: alpha {alpha} must lie in (0, 0.5) (the chance, per pair of methods of "
                           "equal mean, that the race separates them; e.g. 0.05)")
    out = {"groups": [str(g) for g in cfg["groups"]], "rounds": rounds, "alpha": alpha}
    if cfg.get("cpu_hours") is not None:
        if not float(cfg["cpu_hours"]) > 0:
            raise DPClustError(f"racing: cpu_hours {cfg['cpu_hours']} must be > 0 (the CPU the added looks may "
                               "cost, in hours), or leave it out for no CPU cap")
        out["cpu_hours"] = float(cfg["cpu_hours"])
    return out


def multiples(decl: Mapping) -> list[int]:
    """The cumulative multiple of the initial runs at each look (look 0: 1)."""
    return [1, *decl["rounds"]]


def levels(decl: Mapping) -> list[float]:
    """α_j of each look (Bonferroni over the looks; they sum to the declared α)."""
    return alpha_schedule(len(decl["rounds"]), decl["alpha"])


# ------------------------------------------------------------------------------ planning
def race_jobs(where: str, jobs: Sequence, decl: Mapping) -> list[list]:
    """The blocks each added look may run (look j at index j − 1), from the item's planned blocks
    (`run_plan.RunJob`): for every private cell of a raced group, its seeds [m_{j-1}·r, m_j·r)
    (r its repetitions), one block per cell and look, in the batch of its group's own data under
    `<group>.round<j>/` (as replication rounds are). A look's job for one batch runs only the blocks
    its decision leaves open (`run_plan.ItemTarget.race_look_batch`): one process per (group, data,
    algorithm) rather than per (cell, method). Seeds continue the cell's own: never repeated."""
    groups = {job.group for job in jobs}
    unknown = sorted(set(decl["groups"]) - groups)
    if unknown:
        raise DPClustError(f"{where}: racing names run groups {unknown} that the item does not run "
                           f"(its groups: {', '.join(sorted(groups)) or 'none'}); fix racing.groups")
    cells: dict[tuple, list] = {}
    for job in jobs:
        if job.group in decl["groups"] and job.epsilon is not None:
            cells.setdefault((job.group, job.dataset, job.algorithm, job.k, job.epsilon), []).append(job)
    looks = multiples(decl)
    out: list[list] = []
    for j in range(1, len(looks)):
        added = []
        for blocks in cells.values():
            first = min(blocks, key=lambda b: b.seed_start)
            reps = sum(b.seed_count for b in blocks)
            lo, hi = looks[j - 1] * reps, looks[j] * reps
            added.append(replace(first, block=0, seed_start=lo, seed_count=hi - lo, round=j, references=()))
        out.append(added)
    return out


def repetitions(jobs: Iterable, decl: Mapping) -> dict[str, int]:
    """The initial runs per cell of each raced group (its `repetitions`)."""
    reps: dict[tuple, int] = {}
    for job in jobs:
        if job.group in decl["groups"]:
            cell = (job.group, job.dataset, job.algorithm, job.k, job.epsilon)
            reps[cell] = reps.get(cell, 0) + job.seed_count
    out: dict[str, int] = {}
    for (group, *_), n in reps.items():
        out[group] = max(out.get(group, 0), n)
    return out


def cell_id(objective: str, dataset: str, k, epsilon) -> str:
    """The key of a cell in a decision file: 'kmeans|iris|3|1' (ε as `%g`)."""
    return f"{objective}|{dataset}|{int(k)}|{float(epsilon):g}"


def price_key(group: str, dataset: str, k, epsilon, algorithm: str) -> str:
    """The key of a run's price in `run_cost_s`: 'kmeans|iris|3|1|su2016.dplloyd' (ε as `%g`)."""
    return f"{group}|{dataset}|{int(k)}|{float(epsilon):g}|{algorithm}"


def look_blocks(jobs: Sequence, open_cells: Mapping[str, Sequence[str]], objectives: Mapping[str, str]) -> list:
    """The blocks of one look (`jobs`: all it plans) of the contenders of the open cells."""
    return [job for job in jobs
            if job.algorithm in open_cells.get(cell_id(objectives.get(job.group, ""), job.dataset, job.k,
                                                       job.epsilon), ())]


# ------------------------------------------------------------------------------ the rule
def truncate(records: Iterable[Mapping], decl: Mapping, reps: Mapping[str, int], look: int) -> list[dict]:
    """The records as they stood after `look`: the runs of a raced group with seed < m_look·r."""
    cut = {g: multiples(decl)[look] * n for g, n in reps.items()}
    out = []
    for rec in records:
        limit = cut.get(str(rec.get("group")))
        if limit is None or rec.get("epsilon") is None:
            out.append(dict(rec))
            continue
        out.append(dict(rec, runs=[r for r in rec.get("runs") or [] if int(r["seed"]) < limit]))
    return out


def gap(row: Mapping, best: Mapping, level: float) -> tuple[float, float]:
    """The Welch interval of row's mean minus best's (each {mean, sd, n}) at confidence 1 − α_j."""
    ci = diff_ci((row["mean"], row["sd"], int(row["n"])), (best["mean"], best["sd"], int(best["n"])),
                 level=1.0 - level)
    return ci.low, ci.high


def contenders(rows: Iterable[Mapping], level: float) -> tuple[list[str], dict[str, dict]]:
    """The methods of one cell (rows: algorithm, mean, sd, n) still contending at a look of level
    α_j: the best (lowest mean; ties by name) and those it does not beat (their `gap` to it reaches
    down to 0 or below). Returns them (best first, then by mean) and each method's {mean, sd, n,
    gap_low, gap_high} at this look."""
    stats = {str(r["algorithm"]): {"mean": float(r["mean"]), "sd": float(r["sd"]), "n": int(r["n"])}
             for r in rows}
    order = sorted(stats, key=lambda a: (stats[a]["mean"], a))
    if not order:
        return [], stats
    best = stats[order[0]]
    for a in order:
        stats[a]["gap_low"], stats[a]["gap_high"] = (0.0, 0.0) if a == order[0] else gap(stats[a], best, level)
    return [a for a in order if not stats[a]["gap_low"] > 0], stats


def race(records: Sequence[Mapping], decl: Mapping, reps: Mapping[str, int],
         table_of: Callable[[list[dict]], pd.DataFrame], through: int | None = None,
         key: Sequence[str] = ("objective", "dataset", "k", "epsilon")) -> dict[str, dict]:
    """Replay the race through look `through` (default: the last): per cell id (`cell_id`) its
    contenders, why it stopped (or OPEN), the look it stopped at, that look's level, and every ranked
    method's statistics at its last look. `table_of(records)` is the tidy board (columns `key`,
    algorithm, rank (NaN: not ranked), mean, sd, n)."""
    last = len(decl["rounds"]) if through is None else through
    state: dict[str, dict] = {}
    for look in range(last + 1):
        level = levels(decl)[look]
        table = table_of(truncate(records, decl, reps, look))
        if table.empty:
            break
        ranked = table[table["rank"].notna() & table["epsilon"].notna()]
        for cell, rows in ranked.groupby(list(key), sort=True):
            cid = cell_id(*cell)
            was = state.get(cid)
            if was is None and look > 0 or was is not None and was["stopped"] != OPEN:
                continue
            if was is not None:
                rows = rows[rows["algorithm"].isin(was["contenders"])]
            keep, stats = contenders(rows.to_dict("records"), level)
            methods = dict(was["methods"]) if was else {}
            methods.update({a: dict(s, look=look, level=level) for a, s in stats.items()})
            if look == 0 and len(stats) == 1:
                stopped = ONLY
            elif len(keep) == 1:
                stopped = SEPARATED
            elif look == len(decl["rounds"]):
                stopped = CAP
            else:
                stopped = OPEN
            state[cid] = {"contenders": keep, "stopped": stopped, "look": look, "level": level,
                          "methods": methods}
        if look < len(decl["rounds"]) and decl.get("cpu_hours") is not None:
            _cpu_cap(state, truncate(records, decl, reps, look), decl, reps, look)
    return state


def looks_cpu_s(records: Iterable[Mapping], decl: Mapping, reps: Mapping[str, int],
                open_cells: Mapping[str, Sequence[str]], look: int) -> tuple[float, dict[str, float]]:
    """(the CPU the added looks cost so far, the next look's per open cell: its contenders' runs the
    look adds), in seconds, each run priced by the committed price table (`decl["run_cost_s"]`, per
    `price_key`: `dpclust.pipeline.run_prices`). Never the recorded run times, which
    grow with the machine's load: the cap must stop the same cells on any machine."""
    priced = decl.get("run_cost_s") or {}
    # a run the plan did not price (a record from elsewhere) costs the dearest planned run, or more
    # than any cap when none is priced: the cap may stop its cell sooner, never later
    dearest = max(map(float, priced.values()), default=math.inf)
    added = 0.0
    per: dict[tuple, float] = {}
    for rec in records:
        group = str(rec.get("group"))
        if group not in reps or rec.get("epsilon") is None or group not in (decl.get("objectives") or {}):
            continue
        name = price_key(group, rec["dataset"], rec["k"], rec["epsilon"], str(rec["algorithm"]))
        cost = float(priced[name]) if name in priced else dearest
        key = (cell_id(decl["objectives"][group], rec["dataset"], rec["k"], rec["epsilon"]), str(rec["algorithm"]))
        per[key] = cost * reps[group]
        extra = sum(int(run["seed"]) >= reps[group] for run in rec.get("runs") or [])
        added += cost * extra if extra else 0.0
    step = multiples(decl)[look + 1] - multiples(decl)[look]
    estimate = dict.fromkeys(open_cells, 0.0)
    for (cid, alg), initial in per.items():
        if alg in open_cells.get(cid, ()):
            estimate[cid] += initial * step
    return round(added, 3), {cid: round(v, 3) for cid, v in estimate.items()}


def _cpu_cap(state: dict, records: list[dict], decl: Mapping, reps: Mapping[str, int], look: int) -> None:
    """Under `cpu_hours`, the next look runs the open cells it can afford, cheapest first (the most
    cells decided per CPU-hour; ties by cell id): the others stop here (CPU)."""
    open_cells = {cid: s["contenders"] for cid, s in state.items() if s["stopped"] == OPEN}
    if not open_cells:
        return
    added, estimate = looks_cpu_s(records, decl, reps, open_cells, look)
    budget = decl["cpu_hours"] * 3600 - added
    for cid in sorted(open_cells, key=lambda c: (estimate[c], c)):
        if estimate[cid] <= budget:
            budget -= estimate[cid]
            continue
        state[cid].update(stopped=CPU, cpu={"added_s": round(added, 1), "next_look_s": round(estimate[cid], 1)})


def decide(records: Sequence[Mapping], decl: Mapping, reps: Mapping[str, int],
           table_of: Callable[[list[dict]], pd.DataFrame], look: int) -> dict:
    """The checkpoint's decision after `look`: the cells still open and their contenders (whose blocks
    look + 1 runs), and whether look + 1 runs at all."""
    state = race(records, decl, reps, table_of, through=look)
    open_cells = {cid: s["contenders"] for cid, s in sorted(state.items()) if s["stopped"] == OPEN}
    tally: dict[str, int] = {}
    for s in state.values():
        tally[s["stopped"]] = tally.get(s["stopped"], 0) + 1
    go = bool(open_cells) and look < len(decl["rounds"])
    return {"look": look, "alpha": levels(decl)[look], "multiple": multiples(decl)[look], "next": go,
            "open": open_cells if go else {}, "cells": dict(sorted(tally.items())),
            "cpu_stopped": sorted(cid for cid, s in state.items() if s["stopped"] == CPU and s["look"] == look)}


def write_decision(decision: dict, path) -> None:
    """Compact JSON on one line, as run records are, so that `integrity.intact` tells a decision cut
    short from a whole one (`rule all` checks every look and decision of a race)."""
    from dpclust.fileio import write_json_atomic

    write_json_atomic(decision, path)


def stop_text(state: Mapping) -> str:
    """'separated at look 1' | 'cap reached at look 2' | 'only one DP method' | 'open after look j'."""
    if state["stopped"] == ONLY:
        return ONLY
    if state["stopped"] == OPEN:
        return f"open after look {state['look']}"
    return f"{state['stopped']} at look {state['look']}"


# ------------------------------------------------------------------------------ the rule under the null
def null_separation_rate(decl: Mapping, n0: int, reps: int, seed: int = 0) -> float:
    """How often the race separates two methods of equal mean (normal runs, sd 1, `n0` initial runs):
    the share of `reps` simulated cells that stop "separated"."""
    import numpy as np

    rng = np.random.default_rng(seed)
    looks, alphas = multiples(decl), levels(decl)
    wrong = 0
    for _ in range(reps):
        data = rng.standard_normal((2, looks[-1] * n0))
        for look, level in enumerate(alphas):
            x = data[:, : looks[look] * n0]
            rows = [{"algorithm": f"m{i}", "mean": x[i].mean(), "sd": x[i].std(ddof=1), "n": x.shape[1]}
                    for i in range(2)]
            if len(contenders(rows, level)[0]) == 1:
                wrong += 1
                break
    return wrong / reps
