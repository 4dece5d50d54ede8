"""Config loading, validation and resolution, shared by the planners, the Snakefile and the CLI.

`load_config` merges `config/config.yaml` (or a config dict Snakemake already holds) with every
paper file in `config/papers/`, the display names (`config/names.yaml`) and the dataset registry
(`config/datasets.yaml`), applies the preset (`full`, `quick`, `test`) by deep-merging each item's
`presets[<preset>]` over it, and validates everything against `workflow/schemas/`.
`resolve_algorithm`, `run_spec_for` and `select_algorithms` turn a configured algorithm into the
complete spec a job receives. Planning is in `dpclust.pipeline.planning`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from dpclust.api import DPClustError
from dpclust.pipeline.resolve import REPO_ROOT, import_object

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
    from dpclust.data.registry import load_registry

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
    from dpclust.settings import NON_PRIVATE, guarantee_of, settings_of

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
    """A complete run spec (what `dpclust.pipeline.run_job.run_spec` takes) for one cell, outside a plan:
    the same resolution the planner uses (the CLI's flags and the tests use this)."""
    config["registry"].dataset(dataset)  # unknown dataset: one clear error naming close matches
    return {"dataset": dataset, "dataset_entry": registry_entry(config, dataset), "transform": transform,
            **resolve_algorithm(config, algorithm, params, where), "k": int(k),
            "epsilon": None if epsilon is None else float(epsilon), "delta": delta,
            "seeds": [int(seeds[0]), int(seeds[1])], "init_sets": init_sets,
            "base_seed": int(config["base_seed"] if base_seed is None else base_seed),
            "store_centers": bool(store_centers)}


def select_algorithms(config: dict, selection: dict, where: str = "") -> list[str]:
    """Every configured algorithm matching `selection` (sorted): `select` private (takes a budget) |
    nonprivate | all; optional `objective` (kmeans | kmedian, as declared by the function),
    `guarantee` (list of guarantee kinds) and `exclude` (ids). A new algorithm entry joins every
    group that selects it without touching that group."""
    from dpclust.settings import guarantee_of

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
