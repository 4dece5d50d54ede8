"""The run planner: items and their run jobs.

`plan_runs(config)` (the first step of `dpclust.pipeline.planning.plan`) expands the run groups into
one `RunJob` per (paper, item, group, dataset, algorithm, k, ε, seed block), and groups them into
one `RunBatch` per (paper, item, group, dataset, algorithm): a batch is one Snakemake job, writing
one file, that runs its blocks one after another in one process (one job per cell made the DAG and
the process start-ups cost more than many runs);
a group that runs a dataset family has one batch per FAMILY_BATCH datasets of it, and a group may
split a dataset's batch per k or per (k, ε) cell (`batch: k | cell`) so that a long serial batch
uses more cores.
Every block carries its complete, resolved specification: the run's `spec` holds the algorithm's
full settings (declared defaults, the named variant's overrides and the group's params), the
dataset's registry entry, the transform, seeds and budget; an item's `step_spec(step)` holds
exactly what its aggregate, render or check step reads. The Snakefile passes these to jobs as
params, so Snakemake re-runs a job exactly when something it depends on changed, and no job ever
re-reads `config/`.

Run groups (see config/README.md) may name a dataset family (`datasets: {family: su_synth}`),
take k from the registry (`k: {registry: su2016}`: each dataset's `paper_k.su2016`) and sweep one
setting (`sweep: {setting: theta, values: {eugkm_theta5: 5.0, ...}, algorithms: [...]}`: one
group per value, named by the mapping's keys, or `<group>-<setting>=<value>` for a list).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from dpclust.api import DPClustError
from dpclust.pipeline.configuration import (
    STEP_KEYS,
    canonical_json,
    fmt_epsilon,
    group_datasets,
    registry_entry,
    resolve_algorithm,
    select_algorithms,
)
from dpclust.pipeline.declared import parse as parse_declared
from dpclust.pipeline.item_modules import check_item_module, defined_steps, item_module
from dpclust.pipeline.racing import declaration as race_declaration
from dpclust.pipeline.racing import look_blocks, price_key, race_jobs
from dpclust.pipeline.racing import repetitions as race_repetitions
from dpclust.pipeline.replication import alpha_schedule, declaration, look_jobs, round_group, round_jobs
from dpclust.pipeline.resolve import sensitivity_declarations
from dpclust.pipeline.run_prices import price_s


@dataclass(frozen=True)
class RunJob:
    """A block of seeds of one (dataset, algorithm, k, ε) cell, with its spec. It is run by the
    `RunBatch` of its (paper, item, group, data, algorithm), whose file (`path`) holds its record;
    `data` is the dataset, or the batch `F.i` of the family a group runs (`datasets: {family: F}`)."""

    paper: str
    item: str
    group: str
    dataset: str
    algorithm: str
    k: int
    epsilon: float | None
    block: int
    seed_start: int
    seed_count: int
    #: the spec without CELL_KEYS, shared by every block of the group's algorithm; the registry entry
    shared: dict = field(compare=False, hash=False, repr=False, default_factory=dict)
    entry: dict = field(compare=False, hash=False, repr=False, default_factory=dict)
    results_dir: str = "results"
    overrides_json: str = "{}"  # the group's params for this algorithm (already inside the spec's settings)
    data: str = ""  # the batch's data: the dataset (when empty), a batch of the group's family (F.i), or
    #                 a part of the dataset's runs under the group's `batch` (D.kK, D.kK.eE; batch_data)
    #: the run files holding the recorded runs this block reads (its group's `reference_runs`;
    #: `link_reference_runs`): planned inputs of its batch
    references: tuple[str, ...] = field(compare=False, default=())
    #: the replication look that added this block (0: the paper's runs; dpclust.pipeline.replication)
    round: int = 0

    @property
    def path(self) -> str:
        """The file of the batch (Snakemake job) that runs this block."""
        return run_path(self.results_dir, self.paper, self.item, round_group(self.group, self.round),
                        self.data or self.dataset, self.algorithm)

    @property
    def cell(self) -> tuple:
        """Identity of the block inside its batch."""
        return (self.dataset, self.k, fmt_epsilon(self.epsilon), self.block)

    @property
    def spec(self) -> dict:
        """The block's complete spec (what `dpclust.pipeline.run_job.run_spec` takes)."""
        return json.loads(self.spec_json)

    @property
    def spec_json(self) -> str:
        return canonical_json(dict(self.shared, dataset=self.dataset, dataset_entry=self.entry, k=self.k,
                                   epsilon=self.epsilon, seeds=[self.seed_start, self.seed_count]))


#: Datasets of a family (`datasets: {family: F}`) per run job: the family's datasets, in registry
#: order, are cut into batches `F.1`, `F.2`, ... of at most this many (Su et al.'s 81 synthetic sets:
#: 9 run jobs per algorithm, each of a few minutes, instead of 81 jobs of seconds).
FAMILY_BATCH = 9
#: What one run job of a group covers (the group's `batch`): every block of a dataset (default), of
#: one (dataset, k), or of one (dataset, k, ε) cell. Splitting changes only which job runs a block
#: (each block's spec, seeds and record are the same), so a long serial batch can use more cores.
BATCH_BY = ("dataset", "k", "cell")


def batch_data(dataset: str, k: int, epsilon: float | None, batch_by: str) -> str:
    """The `data` of the batch running (dataset, k, ε) under `batch: batch_by` ('' = the dataset):
    `D.kK` for batch: k, `D.kK.eE` for batch: cell."""
    if batch_by == "dataset":
        return ""
    if batch_by not in BATCH_BY:
        raise DPClustError(f"unknown batch {batch_by!r}: one of {', '.join(BATCH_BY)}")
    data = f"{dataset}.k{k}"
    return data if batch_by == "k" or epsilon is None else f"{data}.e{fmt_epsilon(epsilon)}"


#: The keys of a block's spec that differ between the blocks of one batch.
CELL_KEYS = ("dataset", "dataset_entry", "k", "epsilon", "seeds")


@dataclass(frozen=True)
class RunBatch:
    """One Snakemake `run` job: every planned block of one (paper, item, group, data, algorithm),
    run one after another in one process (`dpclust.pipeline.run_job.run_batch`) into one file of records;
    `data` is a dataset, a batch `F.i` of up to FAMILY_BATCH datasets of a family (Su et al.'s 81
    synthetic sets: 9 batches per algorithm), or one k (`D.kK`) or cell (`D.kK.eE`) of a dataset
    under the group's `batch` (`batch_data`).

    `spec_json` holds what every block shares (the block spec without CELL_KEYS) once, the registry
    entry of each dataset, and the cells as `[dataset, k, epsilon, seed_start, seed_count]`;
    `dpclust.pipeline.run_job.batch_cells` rebuilds each block's exact spec from it."""

    cells: tuple[RunJob, ...]

    @property
    def first(self) -> RunJob:
        return self.cells[0]

    paper = property(lambda self: self.first.paper)
    item = property(lambda self: self.first.item)
    group = property(lambda self: self.first.group)
    algorithm = property(lambda self: self.first.algorithm)
    path = property(lambda self: self.first.path)

    @property
    def data(self) -> str:
        """The dataset, the family batch `F.i` or the part `D.kK[.eE]` of the batch (its file's directory)."""
        return self.first.data or self.first.dataset

    @property
    def dataset(self) -> str:
        return self.data

    @cached_property
    def datasets(self) -> list[str]:
        """The datasets the batch reads."""
        return list(dict.fromkeys(job.dataset for job in self.cells))

    @cached_property
    def reference_files(self) -> list[str]:
        """The run files whose recorded runs the batch reads (its group's `reference_runs`)."""
        return list(dict.fromkeys(path for job in self.cells for path in job.references))

    @cached_property
    def spec_json(self) -> str:
        shared = self.first.shared
        if any(job.shared is not shared and job.shared != shared for job in self.cells):
            raise DPClustError(f"{self.path}: the blocks of one batch differ beyond {', '.join(CELL_KEYS)}")
        entries = {job.dataset: job.entry for job in self.cells}
        cells = [[job.dataset, job.k, job.epsilon, job.seed_start, job.seed_count] for job in self.cells]
        return canonical_json({"spec": shared, "entries": entries, "cells": cells})

    @property
    def spec(self) -> dict:
        return json.loads(self.spec_json)


def run_path(results_dir, paper, item, group, data, algorithm) -> str:
    """The file of one run batch: the records of every block of (paper, item, group, data, algorithm),
    `data` a dataset or a dataset family."""
    return f"{results_dir}/runs/{paper}/{item}/{group}/{data}/{algorithm}.json"


@dataclass
class ItemTarget:
    paper: str
    item: str
    cfg: dict
    runs: list[RunJob] = field(default_factory=list)
    results_dir: str = "results"
    names: dict = field(default_factory=dict)
    preset: str = "full"
    dataset_entries: dict = field(default_factory=dict)
    #: the blocks each replication look adds (look j at index j - 1; dpclust.pipeline.replication)
    rounds: list[list[RunJob]] = field(default_factory=list)
    #: the racing declaration of the item whose runs this item reads (dpclust.pipeline.racing), with the
    #: raced groups' `repetitions` and `objectives`; None: its cells are not raced
    race: dict | None = None
    #: the item that owns the raced runs (this one, or its `runs_from`), and the blocks each of its
    #: looks may add (look j at index j - 1; only on the owner)
    race_owner: str = ""
    race_rounds: list[list[RunJob]] = field(default_factory=list)

    def race_look_files(self, look: int, open_cells) -> list[str]:
        """The run files look `look` (1, 2, ...) adds: the batches holding a block of an open cell's
        contenders."""
        jobs = look_blocks(self.race_rounds[look - 1], open_cells, (self.race or {}).get("objectives") or {})
        return list(dict.fromkeys(job.path for job in jobs))

    def race_look_batch(self, look: int, path: str, open_cells) -> RunBatch:
        """The run job of look `look` writing `path`: exactly the blocks of it that the decision before
        the look leaves open (their seeds as planned: a block's record is the same whichever others
        share its job)."""
        jobs = [job for job in look_blocks(self.race_rounds[look - 1], open_cells,
                                           (self.race or {}).get("objectives") or {}) if job.path == path]
        if not jobs:
            raise DPClustError(f"{path}: no block of it is open after racing look {look - 1} of {self.key}")
        return RunBatch(tuple(jobs))

    @cached_property
    def replication(self) -> dict | None:
        """The item's `replication`, defaults filled in (None: its claims are decided on its runs)."""
        return declaration(self.cfg.get("replication"), self.cfg.get("sensitivity"))

    @property
    def look_levels(self) -> list[float]:
        """The one-sided level of each replication look, look 0 (the paper's runs) first."""
        return alpha_schedule(len(self.replication["rounds"])) if self.replication else []

    @cached_property
    def look_costs(self) -> list[list[list]]:
        """Per added look (look j at index j - 1), the CPU-seconds its blocks cost per (group, algorithm,
        dataset, k, ε) cell (`replication.PricedCell`), priced by the committed price table
        (`dpclust.pipeline.run_prices`): what the CPU cap reads."""
        out = []
        for jobs in self.rounds:
            costs: dict[tuple, float] = {}
            for job in jobs:
                key = (job.group, job.algorithm, job.dataset, job.k, job.epsilon)
                costs[key] = costs.get(key, 0.0) + price_s(job) * job.seed_count
            out.append([[*key, round(value, 3)] for key, value in costs.items()])
        return out

    def replication_spec(self) -> dict:
        """What the checkpoint `replication_decision` reads: the declaration, each look's level and the
        looks' priced CPU (an edit of any of them re-decides)."""
        return dict(self.replication or {}, alpha=self.look_levels, cost_s=self.look_costs)

    def look_files(self, look: int, open_claims, open_cells=None) -> list[str]:
        """The run files look `look` (1, 2, ...) adds for the claims still open before it (and, where the
        decision names them, their open cells)."""
        jobs = look_jobs(self.replication or {}, self.rounds[look - 1], open_claims, open_cells)
        return list(dict.fromkeys(job.path for job in jobs))

    def replication_look_batch(self, look: int, path: str, decision: dict) -> RunBatch:
        """The run job of replication look `look` writing `path`: the blocks of it that the claims and
        cells the decision before the look leaves open need (their seeds as planned: a block's record is
        the same whichever others share its job)."""
        jobs = [job for job in look_jobs(self.replication or {}, self.rounds[look - 1], decision["open"],
                                         decision.get("open_cells")) if job.path == path]
        if not jobs:
            raise DPClustError(f"{path}: no block of it is open after replication look {look - 1} of {self.key}")
        return RunBatch(tuple(jobs))

    @property
    def kind(self) -> str:
        return self.cfg.get("kind", "figure")

    @property
    def key(self) -> str:
        return f"{self.paper}/{self.item}"

    @property
    def datasets(self) -> list[str]:
        names = {j.dataset for j in self.runs} | set(self.cfg.get("datasets") or [])
        return sorted(names)

    @property
    def run_files(self) -> list[str]:
        """The files of the run batches this item reads, each once, in plan order."""
        return list(dict.fromkeys(job.path for job in self.runs))

    @property
    def data_inputs(self) -> list[str]:
        """Processed datasets the aggregate step reads itself (besides the run records)."""
        return list(self.cfg.get("datasets") or [])

    @property
    def table(self) -> str:
        return f"{self.results_dir}/tables/{self.key}.csv"

    @property
    def figure_stem(self) -> str:
        return f"{self.results_dir}/figures/{self.key}"

    @property
    def figure_files(self) -> list[str]:
        return [self.figure_stem + e for e in (".png", ".pdf", ".md", ".html")]

    @property
    def has_checks(self) -> bool:
        return "checks" in defined_steps(self.module)

    @property
    def checks_stem(self) -> str:
        return f"{self.results_dir}/checks/{self.key}"

    @property
    def outputs(self) -> list[str]:
        out = [self.table, *self.figure_files]
        if self.has_checks:
            out += [self.checks_stem + e for e in (".csv", ".md", ".html")]
        return out

    @cached_property
    def runs_summary(self) -> dict:
        """What was run for this item under the preset: per group its datasets, algorithms, k, ε,
        repetitions and the group's setting overrides per algorithm (`params`; a sweep's value is
        one), for captions and renderers; derived from the planned jobs."""
        groups: dict[str, dict] = {}
        for job in self.runs:
            g = groups.setdefault(job.group, {"datasets": [], "algorithms": [], "k": [], "epsilon": [],
                                              "repetitions": 0, "params": {}})
            overrides = json.loads(job.overrides_json)
            if overrides:
                g["params"].setdefault(job.algorithm, overrides)
            for key, value in (("datasets", job.dataset), ("algorithms", job.algorithm), ("k", job.k),
                               ("epsilon", job.epsilon)):
                if value not in g[key]:
                    g[key].append(value)
            if (job.dataset, job.algorithm, job.k, job.epsilon) == (g["datasets"][0], g["algorithms"][0],
                                                                    g["k"][0], g["epsilon"][0]):
                g["repetitions"] += job.seed_count
        return groups

    def step_names(self) -> dict:
        """The display names this item's jobs can show: its algorithms and datasets (those it runs
        or reads, and those its options mention, e.g. the columns of a paper's printed table)."""
        names = self.names or {}
        known = set(names.get("algorithms") or {}) | set(names.get("datasets") or {})
        mentioned = {word for word in _words(self.cfg) if word in known}
        algs = {j.algorithm for j in self.runs} | mentioned
        datasets = set(self.datasets) | mentioned
        return {"algorithms": {a: n for a, n in (names.get("algorithms") or {}).items() if a in algs},
                "datasets": {d: n for d, n in (names.get("datasets") or {}).items() if d in datasets}}

    def step_spec(self, step: str, look: int = 0) -> dict:
        """Exactly what `step` (aggregate, render, checks) reads: the item keys of STEP_KEYS, the
        display names, and for rendering the runs actually planned under the preset; with
        replication, the checks' level at `look` (0: the item's own checks)."""
        spec = {key: copy.deepcopy(self.cfg[key]) for key in STEP_KEYS[step] if key in self.cfg}
        if step != "checks" and "sensitivity" in spec:
            # the tables and figures read the variant runs only: alternatives of the claims' thresholds
            # reach the checks alone, so that editing one re-runs its checks and nothing else
            declared = sensitivity_declarations(spec["sensitivity"])
            runs = [d for d in declared if "groups" in d]      # data and settings variants, not thresholds
            if not runs:
                del spec["sensitivity"]
            elif len(runs) < len(declared):
                spec["sensitivity"] = runs
        spec.update(paper=self.paper, item=self.item, module=self.module)
        spec["names"] = self.step_names()
        if step == "aggregate":
            spec["dataset_entries"] = {d: self.dataset_entries[d] for d in self.data_inputs}
        if step in ("aggregate", "render") and self.race:
            spec["racing"] = copy.deepcopy(self.race)   # the best cell replays the race; notes say the runs
        if step == "checks" and self.replication:
            spec["alpha"] = self.look_levels[look]   # the paper's runs (look 0) decide at their share of α
        if step == "render":
            spec["preset"] = self.preset
            # what the figure shows was run: the sensitivity's variant groups are not drawn
            # (dpclust.pipeline.sensitivity), so captions and panels leave them out
            variant_groups = {g for d in sensitivity_declarations(self.cfg.get("sensitivity"))
                              for g in d.get("groups") or {}}
            spec["runs"] = {g: v for g, v in self.runs_summary.items() if g not in variant_groups}
        return spec

    def step_spec_json(self, step: str) -> str:
        return canonical_json(self.step_spec(step))

    @property
    def module(self) -> str:
        return item_module(self.paper, self.item)


def _words(obj) -> set[str]:
    """Every string and mapping key inside a config value."""
    if isinstance(obj, dict):
        return set(map(str, obj)) | {w for v in obj.values() for w in _words(v)}
    if isinstance(obj, (list, tuple)):
        return {w for v in obj for w in _words(v)}
    return {obj, obj.rpartition(":")[2]} if isinstance(obj, str) else set()  # "group:algorithm" too


@dataclass
class Plan:
    config: dict
    items: list[ItemTarget]

    @cached_property
    def runs(self) -> list[RunJob]:
        """Every distinct planned block of runs (items that share runs via `runs_from` list them once)."""
        return list({(job.path, job.cell): job for item in self.items for job in item.runs}.values())

    @cached_property
    def batches(self) -> list[RunBatch]:
        """Every `run` job: the blocks grouped by their batch file, in plan order."""
        cells: dict[str, list[RunJob]] = {}
        for job in self.runs:
            cells.setdefault(job.path, []).append(job)
        return [RunBatch(tuple(jobs)) for jobs in cells.values()]

    @cached_property
    def round_batches(self) -> list[RunBatch]:
        """The `run` jobs the replication looks may add: planned in advance, run only when the
        checkpoint `replication_decision` asks for their look."""
        cells: dict[str, list[RunJob]] = {}
        for item in self.items:
            for jobs in item.rounds:
                for job in jobs:
                    cells.setdefault(job.path, []).append(job)
        return [RunBatch(tuple(jobs)) for jobs in cells.values()]

    @cached_property
    def race_batches(self) -> dict[str, tuple[ItemTarget, int]]:
        """The files a racing look may write, each with the item owning the race and the look: their
        blocks are those of the look's decision (`ItemTarget.race_look_batch`), not planned here."""
        return {job.path: (item, look) for item in self.race_owners
                for look, jobs in enumerate(item.race_rounds, start=1) for job in jobs}

    @cached_property
    def replication_batches(self) -> dict[str, tuple[ItemTarget, int]]:
        """The files a replication look may write, each with its item and look: their blocks are those
        the decision before the look leaves open (`ItemTarget.replication_look_batch`)."""
        return {job.path: (item, look) for item in self.replicated
                for look, jobs in enumerate(item.rounds, start=1) for job in jobs}

    @property
    def race_owners(self) -> list[ItemTarget]:
        """The items whose own runs are raced."""
        return [item for item in self.items if item.race and item.race_owner == item.item]

    @cached_property
    def runs_by_path(self) -> dict[str, RunBatch]:
        """The run batch (Snakemake job) of each batch file, replication rounds included."""
        return {batch.path: batch for batch in [*self.batches, *self.round_batches]}

    @property
    def replicated(self) -> list[ItemTarget]:
        """The items whose claims are decided in replication looks."""
        return [item for item in self.items if item.replication and item.has_checks]

    @cached_property
    def items_by_key(self) -> dict[str, ItemTarget]:
        return {item.key: item for item in self.items}

    @property
    def datasets(self) -> list[str]:
        return sorted({d for item in self.items for d in item.datasets})

    @property
    def summary_stem(self) -> str:
        return f"{self.config.get('results_dir', 'results')}/checks/summary"

    @property
    def results_page(self) -> str:
        """The generated results page (`dpclust.pipeline.results_page`)."""
        return f"{self.config.get('results_dir', 'results')}/RESULTS.md"

    def results_page_inputs(self) -> dict[str, str]:
        """The tables the results page reads besides the summary: the leaderboard's best-method table
        and the audit table, when this plan has those items."""
        found = {}
        for key, name in (("leaderboard/best", "leaderboard"), ("audit/audit", "audit")):
            if key in self.items_by_key:
                found[name] = self.items_by_key[key].table
        return found

    @property
    def check_tables(self) -> list[str]:
        return [t.checks_stem + ".csv" for t in self.items if t.has_checks]

    @property
    def outputs(self) -> list[str]:
        """Every final output: each item's files and the summary of all claim checks."""
        items = [path for item in self.items for path in item.outputs]
        return items + [self.summary_stem + e for e in (".csv", ".md", ".html")] + [self.results_page]

    def item(self, paper: str, item: str) -> ItemTarget:
        key = f"{paper}/{item}"
        if key not in self.items_by_key:
            raise DPClustError(f"unknown item {key!r}; known: {', '.join(sorted(self.items_by_key))}")
        return self.items_by_key[key]

    def run(self, path: str) -> RunBatch:
        """The run batch that writes `path`."""
        if path not in self.runs_by_path:
            raise DPClustError(f"{path} is not a planned run of this configuration")
        return self.runs_by_path[path]


def plan_runs(config: dict) -> Plan:
    """Expand every enabled paper's items into run jobs (see module docstring)."""
    results_dir = config.get("results_dir", "results")
    planner = _Planner(config)
    items: list[ItemTarget] = []
    opted_in, declared_opt_ins = set(config.get("opt_in") or []), set()
    for paper, paper_cfg in config["paper_configs"].items():
        for item_name, item in paper_cfg["items"].items():
            item = dict(item)
            check_item_module(paper, item_name)
            claims = item.get("claims") or {}
            parse_declared(claims.get("declared"), claims, f"{paper}/{item_name}")   # one clear error at planning
            target = ItemTarget(paper, item_name, item, results_dir=results_dir,
                                names=config.get("names") or {}, preset=config.get("preset", "full"),
                                dataset_entries={d: planner.entry(d) for d in item.get("datasets") or []})
            for group_name, group in (item.get("runs") or {}).items():
                if group is None:  # a preset may drop a run group with `group: null`
                    continue
                where = f"{paper}/{item_name}/runs/{group_name}"
                if group.get("opt_in") is not None:
                    declared_opt_ins.add(group["opt_in"])
                    if group["opt_in"] not in opted_in:  # a group planned only on request (config `opt_in`)
                        continue
                    group = {k: v for k, v in group.items() if k != "opt_in"}
                if isinstance(group.get("algorithms"), dict):
                    group = dict(group, algorithms=select_algorithms(config, group["algorithms"], where))
                for name, expanded in _expand_sweep(where, group_name, group):
                    target.runs.extend(planner.group_jobs(paper, item_name, name, expanded, results_dir))
            target.runs = link_reference_runs(target.key, target.runs)
            items.append(target)
    unknown = sorted(opted_in - declared_opt_ins)
    if unknown:
        raise DPClustError(f"config opt_in names {unknown}, which no run group of the planned papers declares "
                           f"(known: {sorted(declared_opt_ins) or 'none'}); remove it or fix the name")
    by_key = {t.key: t for t in items}
    for target in items:
        source = target.cfg.get("runs_from")
        if source:
            other = by_key.get(f"{target.paper}/{source}")
            if other is None or other.cfg.get("runs_from"):
                raise DPClustError(f"{target.key}: runs_from {source!r} must name an item of the same "
                                   "paper that has its own runs")
            if target.runs:
                raise DPClustError(f"{target.key}: give either `runs` or `runs_from`, not both")
            target.runs = other.runs
    for target in items:
        decl = target.replication
        if decl:
            if target.cfg.get("runs_from"):
                raise DPClustError(f"{target.key}: replication needs the item's own runs; declare it on "
                                   f"{target.cfg['runs_from']!r}, whose runs this item reads")
            planned = list(target.runs)
            for added in round_jobs(target.key, target.runs, decl):
                linked = link_reference_runs(target.key, planned + added)[len(planned):]
                target.rounds.append(linked)
                planned += linked
    for target in items:
        _plan_race(target)
    for target in items:
        source = by_key.get(f"{target.paper}/{target.cfg.get('runs_from')}")
        if source is not None and source.race:
            target.race, target.race_owner = source.race, source.item
    return Plan(config, items)


def _plan_race(target: ItemTarget) -> None:
    """The racing looks of an item that declares `racing` (dpclust.pipeline.racing), planned in advance."""
    decl = race_declaration(target.cfg.get("racing"))
    if not decl:
        return
    if target.cfg.get("runs_from"):
        raise DPClustError(f"{target.key}: racing needs the item's own runs; declare it on "
                           f"{target.cfg['runs_from']!r}, whose runs this item reads")
    if target.cfg.get("replication"):
        raise DPClustError(f"{target.key}: declare either `replication` (claims) or `racing` (cells), not both")
    objectives = dict((target.cfg.get("table") or {}).get("objectives") or {})
    missing = [g for g in decl["groups"] if g not in objectives]
    if missing:
        raise DPClustError(f"{target.key}: racing groups {missing} have no objective; add them to the item's "
                           "table.objectives (the race compares the methods of one objective's cell)")
    planned = list(target.runs)
    for added in race_jobs(target.key, target.runs, decl):
        linked = link_reference_runs(target.key, planned + added)[len(planned):]
        target.race_rounds.append(linked)
        planned += linked
    target.race = dict(decl, repetitions=race_repetitions(target.runs, decl),
                       objectives={g: objectives[g] for g in decl["groups"]})
    if decl.get("cpu_hours") is not None:   # the cap prices a run by the committed price table
        priced = {price_key(job.group, job.dataset, job.k, job.epsilon, job.algorithm): price_s(job)
                  for job in target.runs if job.group in decl["groups"] and job.epsilon is not None}
        target.race["run_cost_s"] = dict(sorted(priced.items()))
    target.race_owner = target.item


def link_reference_runs(where: str, jobs: list[RunJob]) -> list[RunJob]:
    """Give each block whose spec declares `reference_runs` (label → algorithm; the run group's
    `reference_runs`) the run files of the blocks of this item that run those algorithms at the same
    (dataset, k, ε) and cover its seeds. A seed no such block runs is one clear error: the recorded
    runs are the protocol, never silently replaced by fresh ones."""
    if not any(job.shared.get("reference_runs") for job in jobs):
        return jobs
    by_cell: dict[tuple, list[RunJob]] = {}
    for job in jobs:
        by_cell.setdefault((job.algorithm, job.dataset, job.k, job.epsilon), []).append(job)
    out = []
    for job in jobs:
        declared = job.shared.get("reference_runs")
        if not declared:
            out.append(job)
            continue
        files: list[str] = []
        for label, algorithm in sorted(declared["runs"].items()):
            wanted = set(range(job.seed_start, job.seed_start + job.seed_count))
            for other in by_cell.get((algorithm, job.dataset, job.k, job.epsilon), []):
                seeds = wanted & set(range(other.seed_start, other.seed_start + other.seed_count))
                if seeds:
                    wanted -= seeds
                    files.append(other.path)
            if wanted:
                raise DPClustError(
                    f"{where}/runs/{job.group}: reference_runs {label!r} needs the runs of {algorithm} at "
                    f"({job.dataset}, k={job.k}, epsilon={fmt_epsilon(job.epsilon)}, seeds "
                    f"{min(wanted)}-{max(wanted)}), which no run group of the item plans; run them (same "
                    "datasets, k, epsilon and at least as many repetitions) or drop reference_runs")
        out.append(replace(job, references=tuple(dict.fromkeys(files))))
    return out


def _slug(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", str(value)).strip("_") or "v"


def _expand_sweep(where: str, name: str, group: dict) -> list[tuple[str, dict]]:
    """A group with `sweep:` becomes one group per value of the swept setting."""
    sweep = group.get("sweep")
    if not sweep:
        return [(name, group)]
    setting = sweep["setting"]
    values = sweep["values"]
    named = values.items() if isinstance(values, dict) else ((f"{name}-{setting}={_slug(v)}", v) for v in values)
    targets = sweep.get("algorithms") or group["algorithms"]
    unknown = sorted(set(targets) - set(group["algorithms"]))
    if unknown:
        raise DPClustError(f"{where}: sweep names algorithms {unknown} that the group does not run")
    out = []
    for group_name, value in named:
        g = {k: v for k, v in group.items() if k != "sweep"}
        g["algorithms"] = list(targets)
        params = copy.deepcopy(group.get("params") or {})
        for alg in targets:
            params.setdefault(alg, {})[setting] = value
        g["params"] = {a: p for a, p in params.items() if a in targets}
        g["sweep_value"] = {"setting": setting, "value": value}
        out.append((str(group_name), g))
    return out


class _Planner:
    """Expands run groups into jobs; caches resolved algorithms and registry entries."""

    def __init__(self, config: dict):
        self.config = config
        self._algorithms: dict[tuple[str, str], dict] = {}
        self._entries: dict[str, dict] = {}

    def algorithm(self, name: str, params: dict, where: str) -> dict:
        key = (name, canonical_json(params))
        if key not in self._algorithms:
            self._algorithms[key] = resolve_algorithm(self.config, name, params, where)
        return self._algorithms[key]

    def entry(self, dataset: str) -> dict:
        if dataset not in self._entries:
            self._entries[dataset] = registry_entry(self.config, dataset)
        return self._entries[dataset]

    def datasets(self, spec, where: str) -> tuple[list[str], dict[str, str]]:
        """The group's datasets (`configuration.group_datasets`) and the batch of each dataset of a
        family (`F.1`, `F.2`, ...: at most FAMILY_BATCH datasets each, in registry order)."""
        registry = self.config["registry"]
        found = group_datasets(registry, spec)
        names = [name for name, _ in found]
        batch_of: dict[str, str] = {}
        for family in dict.fromkeys(f for _, f in found if f is not None):
            members = [name for name, f in found if f == family]
            batch_of.update({d: f"{family}.{i // FAMILY_BATCH + 1}" for i, d in enumerate(members)})
        for part in (spec if isinstance(spec, list) else [spec]):
            if isinstance(part, dict) and not any(f == part.get("family") for _, f in found):
                raise DPClustError(f"{where}: no dataset of family {part.get('family')!r} in the registry"
                                   + (f" matches where {part['where']}" if part.get("where") else ""))
        for name, family in found:
            if family is None:
                registry.dataset(name)  # unknown dataset: one clear error naming close matches
        if len(set(names)) != len(names):
            raise DPClustError(f"{where}: a dataset is named twice in datasets {spec}")
        return names, batch_of

    def ks(self, spec, dataset: str, where: str) -> list[int]:
        if isinstance(spec, dict) and set(spec) == {"registry"}:
            paper_k = (self.config["registry"].dataset(dataset).get("paper_k") or {}).get(spec["registry"])
            if not paper_k:
                raise DPClustError(f"{where}: k is taken from the registry's paper_k.{spec['registry']}, "
                                   f"which dataset {dataset!r} does not have")
            spec = paper_k
        elif isinstance(spec, dict):
            if dataset not in spec:
                raise DPClustError(f"{where}: k is given per dataset but has no entry for {dataset!r}")
            spec = spec[dataset]
        ks = spec if isinstance(spec, list) else [spec]
        return [int(k) for k in ks]

    def group_jobs(self, paper, item_name, group_name, group, results_dir) -> list[RunJob]:
        where = f"{paper}/{item_name}/runs/{group_name}"
        reps = int(group["repetitions"])
        block = int(group.get("seed_block", reps))
        if reps < 1 or block < 1:
            raise DPClustError(f"{where}: repetitions and seed_block must be >= 1")
        eps_list = group.get("epsilon")
        eps_list = [None] if eps_list is None else (eps_list if isinstance(eps_list, list) else [eps_list])
        params = group.get("params") or {}
        for alg in params:
            if alg not in group["algorithms"]:
                raise DPClustError(f"{where}: params given for {alg!r}, which is not in the group's algorithms")
        for alg in (group.get("reference_runs") or {}).get("algorithms", []):
            if alg not in group["algorithms"]:
                raise DPClustError(f"{where}: reference_runs names {alg!r}, which is not in the group's algorithms")
        datasets, batch_of = self.datasets(group["datasets"], where)
        batch_by = group.get("batch", "dataset")
        if batch_of and batch_by != "dataset":
            raise DPClustError(f"{where}: batch: {batch_by} splits one dataset's runs, but the group runs a "
                               "dataset family, batched by FAMILY_BATCH datasets: remove `batch`")
        jobs = []
        for alg in group["algorithms"]:
            resolved = self.algorithm(alg, params.get(alg, {}), where)
            private = resolved["private"]
            eps_values = eps_list if private else [None]
            if private and None in eps_values:
                raise DPClustError(f"{where}: private algorithm {alg!r} needs epsilon values")
            shared = {  # the spec without CELL_KEYS: one dict for every block of the algorithm
                "paper": paper, "item": item_name, "group": group_name, "transform": group["transform"],
                **resolved, "delta": group.get("delta", 0.0), "init_sets": group.get("init_sets"),
                "base_seed": int(self.config["base_seed"]),
                "store_centers": bool(group.get("store_centers", True)),
            }
            if "sweep_value" in group:
                shared["sweep"] = group["sweep_value"]
            reference = group.get("reference_runs")
            if reference and alg in reference["algorithms"]:
                shared["reference_runs"] = {"runs": dict(reference["runs"])}
            overrides = canonical_json(params.get(alg, {}))
            for dataset in datasets:
                entry = self.entry(dataset)
                for k in self.ks(group["k"], dataset, where):
                    for eps in eps_values:
                        eps = None if eps is None else float(eps)
                        for b, start in enumerate(range(0, reps, block)):
                            jobs.append(RunJob(
                                paper=paper, item=item_name, group=group_name, dataset=dataset,
                                algorithm=alg, k=k, epsilon=eps, block=b, seed_start=start,
                                seed_count=min(block, reps - start), shared=shared, entry=entry,
                                results_dir=results_dir, overrides_json=overrides,
                                data=batch_of.get(dataset) or batch_data(dataset, k, eps, batch_by)))
        return jobs
