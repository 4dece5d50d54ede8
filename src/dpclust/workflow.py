"""Config loading, validation and job planning, shared by the Snakefile and the CLI.

`load_config` merges `config/config.yaml` (or a config dict Snakemake already holds) with every
paper file in `config/papers/`, applies the preset (`full`, `quick`, `test`) by deep-merging each
item's `presets[<preset>]` over it, and validates everything against `workflow/schemas/`.
`plan(config)` expands the run groups into one `RunJob` per (paper, item, group, dataset,
algorithm, k, ε, seed block); `ItemTarget`s name each item's tables, figures and checks.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from .api import DPClustError
from .resolve import REPO_ROOT, function_module, import_object, resolve_delta  # noqa: F401 (re-exported)

SCHEMA_DIR = REPO_ROOT / "workflow" / "schemas"
PRESETS = ("full", "quick", "test")


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


def _read_yaml(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh) or {}
    except yaml.YAMLError as exc:
        raise DPClustError(f"{path}: not valid YAML: {exc}") from None
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
    """(algorithms, papers) from every `config/papers/*.yaml`, validated, preset applied to items.

    `check_schema=False` skips the JSON-schema pass (the run path: Snakemake validated the config
    when it planned the job, and jsonschema's import costs ~0.15 s per job)."""
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


def load_config(config_dir: str | Path | None = None, base: dict | None = None,
                overrides: dict | None = None) -> dict:
    """The validated, preset-applied configuration.

    `base` is the top-level config (Snakemake's `config`); when None, `config_dir/config.yaml`
    is read. `overrides` are merged on top (e.g. the contents of `config/quick.yaml`).
    """
    config_dir = Path(config_dir) if config_dir else REPO_ROOT / "config"
    top = copy.deepcopy(base) if base is not None else _read_yaml(config_dir / "config.yaml")
    top = deep_merge(top, overrides or {})
    validate(top, "config", "config")
    validate(_read_yaml(config_dir / "datasets.yaml"), "datasets", str(config_dir / "datasets.yaml"))
    algorithms, papers = load_papers(config_dir, top.get("preset", "full"))
    unknown = [p for p in top["papers"] if p not in papers]
    if unknown:
        raise DPClustError(f"config 'papers' names {unknown}, but config/papers/ has only {sorted(papers)}")
    top["algorithms"] = algorithms
    top["paper_configs"] = {p: papers[p] for p in top["papers"]}
    top["config_dir"] = str(config_dir)
    return top


# ---------------------------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------------------------
def fmt_epsilon(eps: float | None) -> str:
    """Path token of ε: repr of the float ('0.05', '1.0'), or 'none' for non-private runs."""
    return "none" if eps is None else repr(float(eps))


@dataclass(frozen=True)
class RunJob:
    """One Snakemake job: a block of seeds of one (dataset, algorithm, k, ε) cell."""

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
    delta: Any
    transform: str
    init_sets: int | None
    params_json: str
    store_centers: bool
    results_dir: str = "results"

    @property
    def path(self) -> str:
        return (f"{self.results_dir}/runs/{self.paper}/{self.item}/{self.group}/{self.dataset}/"
                f"{self.algorithm}/k{self.k}_e{fmt_epsilon(self.epsilon)}_b{self.block}.json")

    def cli_args(self) -> list[str]:
        args = ["--paper", self.paper, "--item", self.item, "--group", self.group,
                "--dataset", self.dataset, "--algorithm", self.algorithm, "--k", str(self.k),
                "--epsilon", fmt_epsilon(self.epsilon), "--delta", str(self.delta),
                "--seed", str(self.seed_start), "--repetitions", str(self.seed_count),
                "--transform", self.transform]
        if self.init_sets:
            args += ["--init-sets", str(self.init_sets)]
        for key, value in sorted(json.loads(self.params_json).items()):
            args += ["--param", f"{key}={json.dumps(value, sort_keys=True)}"]
        if not self.store_centers:
            args.append("--no-centers")
        return args


@dataclass
class ItemTarget:
    paper: str
    item: str
    cfg: dict
    runs: list[RunJob] = field(default_factory=list)
    results_dir: str = "results"

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
    def table(self) -> str:
        return f"{self.results_dir}/tables/{self.key}.csv"

    @property
    def figure_stem(self) -> str:
        return f"{self.results_dir}/figures/{self.key}"

    @property
    def figure_files(self) -> list[str]:
        return [self.figure_stem + e for e in (".png", ".pdf", ".md")]

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


@dataclass
class Plan:
    config: dict
    items: list[ItemTarget]

    @cached_property
    def runs(self) -> list[RunJob]:
        """Every distinct run job (items that share runs via `runs_from` list them once)."""
        return list({job.path: job for item in self.items for job in item.runs}.values())

    @cached_property
    def runs_by_path(self) -> dict[str, RunJob]:
        return {job.path: job for job in self.runs}

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


def _ks_for(spec, dataset: str) -> list[int]:
    if isinstance(spec, dict):
        if dataset not in spec:
            raise DPClustError(f"k is given per dataset but has no entry for {dataset!r}")
        spec = spec[dataset]
    ks = spec if isinstance(spec, list) else [spec]
    return [int(k) for k in ks]


def plan(config: dict) -> Plan:
    """Expand every enabled paper's items into run jobs (see module docstring)."""
    algorithms = config["algorithms"]
    results_dir = config.get("results_dir", "results")
    items: list[ItemTarget] = []
    for paper, paper_cfg in config["paper_configs"].items():
        for item_name, item in paper_cfg["items"].items():
            target = ItemTarget(paper, item_name, item, results_dir=results_dir)
            for group_name, group in (item.get("runs") or {}).items():
                if group is None:  # a preset may drop a run group with `group: null`
                    continue
                target.runs.extend(_expand_group(paper, item_name, group_name, group, algorithms, results_dir))
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


def _expand_group(paper, item_name, group_name, group, algorithms, results_dir) -> list[RunJob]:
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
    jobs = []
    for alg in group["algorithms"]:
        if alg not in algorithms:
            raise DPClustError(f"{where}: unknown algorithm {alg!r}; known: {', '.join(sorted(algorithms))}")
        entry = algorithms[alg]
        private = entry.get("private", True)
        alg_params = params.get(alg, {})
        unknown = sorted(set(alg_params) - set(entry.get("settings") or {}))
        if unknown:
            raise DPClustError(f"{where}: {alg} has no setting(s) {unknown}; its settings are "
                               f"{sorted(entry.get('settings') or {})}")
        eps_values = eps_list if private else [None]
        if private and None in eps_values:
            raise DPClustError(f"{where}: private algorithm {alg!r} needs epsilon values")
        for dataset in group["datasets"]:
            for k in _ks_for(group["k"], dataset):
                for eps in eps_values:
                    for b, start in enumerate(range(0, reps, block)):
                        jobs.append(RunJob(
                            paper=paper, item=item_name, group=group_name, dataset=dataset,
                            algorithm=alg, k=k, epsilon=None if eps is None else float(eps), block=b,
                            seed_start=start, seed_count=min(block, reps - start),
                            delta=group.get("delta", 0.0), transform=group["transform"],
                            init_sets=group.get("init_sets"),
                            params_json=json.dumps(alg_params, sort_keys=True),
                            store_centers=bool(group.get("store_centers", True)),
                            results_dir=results_dir,
                        ))
    return jobs


