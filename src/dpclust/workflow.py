"""Config loading, validation and job planning, shared by the Snakefile and the CLI.

`load_config` merges `config/config.yaml` (or a config dict Snakemake already holds) with every
paper file in `config/papers/`, the display names (`config/names.yaml`) and the dataset registry
(`config/datasets.yaml`), applies the preset (`full`, `quick`, `test`) by deep-merging each item's
`presets[<preset>]` over it, and validates everything against `workflow/schemas/`.

`plan(config)` expands the run groups into one `RunJob` per (paper, item, group, dataset,
algorithm, k, ε, seed block), and groups them into one `RunBatch` per (paper, item, group, dataset,
algorithm): a batch is one Snakemake job, writing one file, that runs its blocks one after another
in one process (one job per cell made the DAG and the process start-ups cost more than many runs);
a group that runs a dataset family has one batch per FAMILY_BATCH datasets of it, and a group may
split a dataset's batch per k or per (k, ε) cell (`batch: k | cell`) so that a long serial batch
uses more cores.
Every block carries its complete, resolved specification: the run's `spec` holds the algorithm's full settings (declared defaults, the named variant's overrides and
the group's params), the dataset's registry entry, the transform, seeds and budget; an item's
`step_spec(step)` holds exactly what its aggregate, render or check step reads. The Snakefile
passes these to jobs as params, so Snakemake re-runs a job exactly when something it depends on
changed, and no job ever re-reads `config/`.

Run groups (see config/README.md) may name a dataset family (`datasets: {family: su_synth}`),
take k from the registry (`k: {registry: su2016}`: each dataset's `paper_k.su2016`) and sweep one
setting (`sweep: {setting: theta, values: {eugkm_theta5: 5.0, ...}, algorithms: [...]}`: one
group per value, named by the mapping's keys, or `<group>-<setting>=<value>` for a list).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from .api import DPClustError
from .resolve import REPO_ROOT, function_module, import_object, resolve_delta  # noqa: F401 (re-exported)

SCHEMA_DIR = REPO_ROOT / "workflow" / "schemas"
PRESETS = ("full", "quick", "test")
#: Registry keys that document a dataset but do not determine its data or any run.
REGISTRY_DOC_KEYS = ("citation", "note", "paper_k")
#: Item keys read by each step (besides the item's identity); everything else is another step's.
#: `table`, `figure` and `claims` hold the options of one step each; `options` (read by all three)
#: is for options that every step needs.
STEP_KEYS = {
    "aggregate": ("kind", "aggregate", "table", "options", "normalize", "static", "datasets"),
    "render": ("kind", "title", "caption", "reproduces", "render", "figure", "options", "static"),
    "checks": ("kind", "title", "reproduces", "checks", "claims", "options"),
}


# ---------------------------------------------------------------------------------------------
# loading and validation
# ---------------------------------------------------------------------------------------------
def deep_merge(base: dict, override: dict) -> dict:
    """Recursively merge `override` into a copy of `base`; lists and scalars are replaced."""
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _loader():
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=_loader()) or {}
    except yaml.YAMLError as exc:
        raise DPClustError(f"{path}: not valid YAML: {exc}") from None
    except FileNotFoundError:
        raise DPClustError(f"{path} does not exist") from None
    if not isinstance(data, dict):
        raise DPClustError(f"{path}: expected a mapping at the top level")
    return data


def validate(data: dict, schema_name: str, where: str) -> None:
    """Validate against `workflow/schemas/<schema_name>.schema.yaml`; one clear error if invalid."""
    import jsonschema

    schema = _read_yaml(SCHEMA_DIR / f"{schema_name}.schema.yaml")
    validator = jsonschema.Draft202012Validator(schema)
    errors = list(validator.iter_errors(data))
    if errors:
        err = jsonschema.exceptions.best_match(errors)
        while err.context:  # anyOf/oneOf: report the most specific sub-error
            err = jsonschema.exceptions.best_match(err.context)
        loc = "/".join(str(p) for p in err.absolute_path) or "<top level>"
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise DPClustError(f"invalid config in {where} at '{loc}': {err.message}{more}")


def load_papers(config_dir: str | Path | None = None, preset: str = "full",
                check_schema: bool = True) -> tuple[dict, dict]:
    """(algorithms, papers) from every `config/papers/*.yaml`, validated, preset applied to items."""
    config_dir = Path(config_dir) if config_dir else REPO_ROOT / "config"
    algorithms: dict[str, dict] = {}
    papers: dict[str, dict] = {}
    for path in sorted((config_dir / "papers").glob("*.yaml")):
        paper_cfg = _read_yaml(path)
        if check_schema:
            validate(paper_cfg, "paper", str(path))
        name = paper_cfg["paper"]
        if name != path.stem:
            raise DPClustError(f"{path}: `paper: {name}` must match the file name {path.stem!r}")
        for alg, entry in (paper_cfg.get("algorithms") or {}).items():
            if alg in algorithms:
                raise DPClustError(f"algorithm {alg!r} is defined twice (second time in {path})")
            algorithms[alg] = dict(entry, paper=name)
        items = {}
        for item_name, item in (paper_cfg.get("items") or {}).items():
            presets = item.get("presets") or {}
            items[item_name] = deep_merge({k: v for k, v in item.items() if k != "presets"},
                                          presets.get(preset, {}))
        paper_cfg["items"] = items
        papers[name] = paper_cfg
    return algorithms, papers


def load_names(config_dir: str | Path) -> dict:
    """Display names of algorithms and datasets (`config/names.yaml`): the one table every figure,
    table and check uses."""
    path = Path(config_dir) / "names.yaml"
    if not path.exists():
        return {"algorithms": {}, "datasets": {}}
    names = _read_yaml(path)
    return {"algorithms": dict(names.get("algorithms") or {}), "datasets": dict(names.get("datasets") or {})}


def load_config(config_dir: str | Path | None = None, base: dict | None = None,
                overrides: dict | None = None) -> dict:
    """The validated, preset-applied configuration.

    `base` is the top-level config (Snakemake's `config`); when None, `config_dir/config.yaml`
    is read. `overrides` are merged on top (e.g. the contents of `config/quick.yaml`).
    """
    from .data.registry import load_registry

    config_dir = Path(config_dir) if config_dir else REPO_ROOT / "config"
    top = copy.deepcopy(base) if base is not None else _read_yaml(config_dir / "config.yaml")
    top = deep_merge(top, overrides or {})
    for key in ("algorithms", "paper_configs", "config_dir", "registry", "names"):
        top.pop(key, None)  # derived keys of an earlier load (Snakemake may hand them back)
    validate(top, "config", "config")
    registry_path = config_dir / "datasets.yaml"
    validate(_read_yaml(registry_path), "datasets", str(registry_path))
    algorithms, papers = load_papers(config_dir, top.get("preset", "full"))
    unknown = [p for p in top["papers"] if p not in papers]
    if unknown:
        raise DPClustError(f"config 'papers' names {unknown}, but config/papers/ has only {sorted(papers)}")
    top["algorithms"] = algorithms
    top["paper_configs"] = {p: papers[p] for p in top["papers"]}
    top["config_dir"] = str(config_dir)
    top["registry"] = load_registry(registry_path)
    top["names"] = load_names(config_dir)
    return top


# ---------------------------------------------------------------------------------------------
# resolution
# ---------------------------------------------------------------------------------------------
def canonical_json(obj: Any) -> str:
    """The one serialisation of specs (sorted keys, compact): equal specs give equal strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def fmt_epsilon(eps: float | None) -> str:
    """Path token of ε: repr of the float ('0.05', '1.0'), or 'none' for non-private runs."""
    return "none" if eps is None else repr(float(eps))


def resolve_algorithm(config: dict, name: str, params: dict | None = None, where: str = "") -> dict:
    """The complete description of algorithm `name` as a run uses it: function, privacy and the
    full settings (the function's declared defaults, the named variant's overrides from its paper
    config, then `params`)."""
    from .settings import NON_PRIVATE, guarantee_of, settings_of

    algorithms = config["algorithms"]
    if name not in algorithms:
        raise DPClustError(f"{where or 'config'}: unknown algorithm {name!r}; known: {', '.join(sorted(algorithms))}")
    entry = algorithms[name]
    overrides = dict(entry.get("settings") or {})
    overrides.update(params or {})
    function = import_object(entry["function"])
    declared = settings_of(function)
    label = f"{where}: {name}" if where else name
    if declared is None:
        raise DPClustError(f"{label}: {entry['function']} declares no settings; decorate it with "
                           "dpclust.settings.declared (see docs/ADD_AN_ALGORITHM.md)")
    settings = declared.complete(overrides, where=label)
    private = bool(entry.get("private", True))
    guarantee = guarantee_of(function, settings) or (None if private else NON_PRIVATE)
    if guarantee is not None and guarantee.kind == "non-private" and private:
        raise DPClustError(f"{label}: config says private, but its function declares no privacy guarantee")
    resolved = {"algorithm": name, "function": entry["function"], "private": private, "settings": settings}
    if guarantee is not None:
        resolved["guarantee"] = guarantee.as_dict()
    return resolved


def registry_entry(config: dict, dataset: str) -> dict:
    """The dataset's registry entry without its documentation-only keys (what its data and runs
    depend on)."""
    entry = config["registry"].dataset(dataset)
    return {k: v for k, v in entry.items() if k not in REGISTRY_DOC_KEYS}


def source_entry(config: dict, source: str) -> dict:
    """A raw source's registry entry without its documentation-only keys (what a fetch depends on)."""
    entry = config["registry"].source(source)
    return {k: v for k, v in entry.items() if k not in REGISTRY_DOC_KEYS}


def run_spec_for(config: dict, dataset: str, algorithm: str, k: int, epsilon: float | None, *,
                 seeds: tuple[int, int] = (0, 1), transform: str = "raw", delta: Any = 0.0,
                 params: dict | None = None, init_sets: int | None = None, base_seed: int | None = None,
                 store_centers: bool = True, where: str = "") -> dict:
    """A complete run spec (what `dpclust.runner.run_spec` takes) for one cell, outside a plan:
    the same resolution the planner uses (the CLI's flags and the tests use this)."""
    config["registry"].dataset(dataset)  # unknown dataset: one clear error naming close matches
    return {"dataset": dataset, "dataset_entry": registry_entry(config, dataset), "transform": transform,
            **resolve_algorithm(config, algorithm, params, where), "k": int(k),
            "epsilon": None if epsilon is None else float(epsilon), "delta": delta,
            "seeds": [int(seeds[0]), int(seeds[1])], "init_sets": init_sets,
            "base_seed": int(config["base_seed"] if base_seed is None else base_seed),
            "store_centers": bool(store_centers)}


# ---------------------------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------------------------
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

    @property
    def path(self) -> str:
        """The file of the batch (Snakemake job) that runs this block."""
        return run_path(self.results_dir, self.paper, self.item, self.group, self.data or self.dataset,
                        self.algorithm)

    @property
    def cell(self) -> tuple:
        """Identity of the block inside its batch."""
        return (self.dataset, self.k, fmt_epsilon(self.epsilon), self.block)

    @property
    def spec(self) -> dict:
        """The block's complete spec (what `dpclust.runner.run_spec` takes)."""
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
    run one after another in one process (`dpclust.runner.run_batch`) into one file of records;
    `data` is a dataset, a batch `F.i` of up to FAMILY_BATCH datasets of a family (Su et al.'s 81
    synthetic sets: 9 batches per algorithm), or one k (`D.kK`) or cell (`D.kK.eE`) of a dataset
    under the group's `batch` (`batch_data`).

    `spec_json` holds what every block shares (the block spec without CELL_KEYS) once, the registry
    entry of each dataset, and the cells as `[dataset, k, epsilon, seed_start, seed_count]`;
    `dpclust.runner.batch_cells` rebuilds each block's exact spec from it."""

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
        return bool(self.cfg.get("checks"))

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

    def step_spec(self, step: str) -> dict:
        """Exactly what `step` (aggregate, render, checks) reads: the item keys of STEP_KEYS, the
        display names, and for rendering the runs actually planned under the preset."""
        spec = {key: copy.deepcopy(self.cfg[key]) for key in STEP_KEYS[step] if key in self.cfg}
        spec.update(paper=self.paper, item=self.item, module=self.module)
        spec["names"] = self.step_names()
        if step == "aggregate":
            spec["dataset_entries"] = {d: self.dataset_entries[d] for d in self.data_inputs}
        if step == "render":
            spec["preset"] = self.preset
            spec["runs"] = self.runs_summary
        return spec

    def step_spec_json(self, step: str) -> str:
        return canonical_json(self.step_spec(step))

    @property
    def module(self) -> str | None:
        return self.cfg.get("module")


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
    def runs_by_path(self) -> dict[str, RunBatch]:
        """The run batch (Snakemake job) of each batch file."""
        return {batch.path: batch for batch in self.batches}

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
    def check_tables(self) -> list[str]:
        return [t.checks_stem + ".csv" for t in self.items if t.has_checks]

    @property
    def outputs(self) -> list[str]:
        """Every final output: each item's files and the summary of all claim checks."""
        items = [path for item in self.items for path in item.outputs]
        return items + [self.summary_stem + e for e in (".csv", ".md", ".html")]

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


def plan(config: dict) -> Plan:
    """Expand every enabled paper's items into run jobs (see module docstring)."""
    results_dir = config.get("results_dir", "results")
    planner = _Planner(config)
    items: list[ItemTarget] = []
    for paper, paper_cfg in config["paper_configs"].items():
        for item_name, item in paper_cfg["items"].items():
            item = dict(item)
            item.setdefault("module", paper_cfg.get("module"))
            target = ItemTarget(paper, item_name, item, results_dir=results_dir,
                                names=config.get("names") or {}, preset=config.get("preset", "full"),
                                dataset_entries={d: planner.entry(d) for d in item.get("datasets") or []})
            for group_name, group in (item.get("runs") or {}).items():
                if group is None:  # a preset may drop a run group with `group: null`
                    continue
                where = f"{paper}/{item_name}/runs/{group_name}"
                if isinstance(group.get("algorithms"), dict):
                    group = dict(group, algorithms=select_algorithms(config, group["algorithms"], where))
                for name, expanded in _expand_sweep(where, group_name, group):
                    target.runs.extend(planner.group_jobs(paper, item_name, name, expanded, results_dir))
            items.append(target)
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
    return Plan(config, items)


def select_algorithms(config: dict, selection: dict, where: str = "") -> list[str]:
    """Every configured algorithm matching `selection` (sorted): `select` private (takes a budget) |
    nonprivate | all; optional `objective` (kmeans | kmedian, as declared by the function),
    `guarantee` (list of guarantee kinds) and `exclude` (ids). A new algorithm entry joins every
    group that selects it without touching that group."""
    from .settings import guarantee_of

    what = selection.get("select", "all")
    if what not in ("private", "nonprivate", "all"):
        raise DPClustError(f"{where}: algorithms.select must be private, nonprivate or all, got {what!r}")
    exclude = set(selection.get("exclude") or [])
    unknown = sorted(exclude - set(config["algorithms"]))
    if unknown:
        raise DPClustError(f"{where}: algorithms.exclude names unknown algorithms {unknown}")
    out = []
    for name, entry in sorted(config["algorithms"].items()):
        private = bool(entry.get("private", True))
        if name in exclude or (what == "private" and not private) or (what == "nonprivate" and private):
            continue
        function = import_object(entry["function"])
        if "objective" in selection and getattr(function, "objective", "kmeans") != selection["objective"]:
            continue
        if "guarantee" in selection:
            g = guarantee_of(function, resolve_algorithm(config, name)["settings"])
            if g is None or g.kind not in selection["guarantee"]:
                continue
        out.append(name)
    if not out:
        raise DPClustError(f"{where}: no configured algorithm matches {selection}")
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

    def datasets(self, spec, where: str) -> list[str]:
        registry = self.config["registry"]
        if isinstance(spec, dict):
            family = spec.get("family")
            names = [n for n, e in registry.datasets.items() if e.get("family") == family]
            if not names:
                raise DPClustError(f"{where}: no dataset of family {family!r} in the registry")
            return names
        for name in spec:
            registry.dataset(name)  # unknown dataset: one clear error naming close matches
        return list(spec)

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
        datasets = self.datasets(group["datasets"], where)
        family = group["datasets"].get("family", "") if isinstance(group["datasets"], dict) else ""
        batch_of = {d: f"{family}.{i // FAMILY_BATCH + 1}" for i, d in enumerate(datasets)} if family else {}
        batch_by = group.get("batch", "dataset")
        if family and batch_by != "dataset":
            raise DPClustError(f"{where}: batch: {batch_by} splits one dataset's runs, but the group runs the "
                               f"family {family!r}, batched by FAMILY_BATCH datasets: remove `batch`")
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


# Privacy audit jobs (dpclust.audits.plan): items with an `audit:` section also plan audit jobs.
_plan_runs = plan


def plan(config: dict) -> Plan:  # noqa: F811 (the run planner above, with the audit jobs)
    """Expand every enabled paper's items into run jobs (see module docstring) and audit jobs
    (items with an `audit:` section, `dpclust.audits.plan`)."""
    from .audits.plan import with_audits

    return with_audits(config, _plan_runs(config))
