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
import difflib
import json
import math
import os
from collections.abc import Iterable
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
    "aggregate": ("kind", "table", "options", "normalize", "static", "datasets", "sensitivity"),
    "render": ("kind", "title", "caption", "reproduces", "figure", "options", "static", "sensitivity"),
    "checks": ("kind", "title", "reproduces", "claims", "options", "sensitivity"),
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


def yaml_error(path: str | Path, exc: yaml.YAMLError) -> str:
    """One line saying where a YAML file is broken and how (PyYAML's own text spans four lines)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
    context = getattr(exc, "context", None)
    text = f"{path}: not valid YAML{where}: {problem}" + (f" ({' '.join(str(context).split())})" if context else "")
    if "\t" in problem or "'\\t'" in problem:
        text += "; YAML does not allow tabs for indentation: indent with spaces"
    return text


def close_matches(name: str, known: Iterable[str]) -> str:
    """'; did you mean a, b?' for the known names close to `name` ('' when none is close)."""
    found = difflib.get_close_matches(str(name), list(known), n=3, cutoff=0.75)
    return f"; did you mean {', '.join(found)}?" if found else ""


def _read_yaml(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=_loader()) or {}
    except yaml.YAMLError as exc:
        raise DPClustError(yaml_error(path, exc)) from None
    except FileNotFoundError:
        raise DPClustError(f"{path} does not exist") from None
    if not isinstance(data, dict):
        raise DPClustError(f"{path}: expected a mapping at the top level")
    return data


_VALIDATORS: dict[tuple, Any] = {}


def _validator(schema_name: str, ref: str | None = None):
    """A validator of `workflow/schemas/<schema_name>.schema.yaml`, or of its definition `$defs/<ref>`
    (with every definition it may refer to); cached per schema file version."""
    import jsonschema

    path = SCHEMA_DIR / f"{schema_name}.schema.yaml"
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise DPClustError(f"{path} does not exist") from None
    key = (str(path), stat.st_mtime_ns, stat.st_size, ref)
    if key not in _VALIDATORS:
        schema = _read_yaml(path)
        if ref is not None:
            schema = {"$schema": schema.get("$schema"), "$defs": schema.get("$defs", {}),
                      "$ref": f"#/$defs/{ref}"}
        _VALIDATORS[key] = jsonschema.Draft202012Validator(schema)
    return _VALIDATORS[key]


def _describe(schema: Any, defs: dict | None = None) -> str:
    """What a (sub)schema allows, in a few words: 'integer >= 1', 'null | number > 0 | list of number > 0';
    with the schema's `defs`, a reference to a mapping shows its required keys ('{family: ...}')."""
    if not isinstance(schema, dict):
        return "anything"
    if "anyOf" in schema or "oneOf" in schema:
        return " | ".join(_describe(s, defs) for s in schema.get("anyOf") or schema.get("oneOf") or [])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        target = (defs or {}).get(name)
        if isinstance(target, dict) and target.get("type") == "object" and target.get("required"):
            return "{" + ", ".join(f"{key}: ..." for key in target["required"]) + "}"
        return name
    types = schema.get("type", "")
    text = " or ".join(types) if isinstance(types, list) else str(types)
    text = {"object": "mapping", "array": "list"}.get(text, text)
    bounds = [f"{op} {schema[key]}" for key, op in (("exclusiveMinimum", ">"), ("minimum", ">="),
                                                    ("exclusiveMaximum", "<"), ("maximum", "<="))
              if key in schema]
    if bounds:
        text += " " + " and ".join(bounds)
    if text == "list" and "items" in schema:
        items = _describe(schema["items"], defs)
        text = f"list of ({items})" if " | " in items else f"list of {items}"
    if text == "mapping" and "properties" in schema and schema.get("additionalProperties") is False:
        text = "mapping with keys " + ", ".join(schema["properties"])
    if "description" in schema and text == "string" and "pattern" in schema:
        text = schema["description"]  # what the pattern means, not the pattern
    elif "description" in schema and text in ("mapping", ""):
        text = f"{text} ({schema['description']})".strip()
    return text or "anything"


def _most_specific(err, defs: dict | None = None):
    """The error to report for `err`: below an anyOf/oneOf, the error of the alternative whose type
    matches the value (not "-1 is not of type 'null'" when the value is a number out of range)."""
    import jsonschema

    while err.context:
        branches: dict[Any, list] = {}
        for sub in err.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        matching = [subs for subs in branches.values()
                    if not any(s.validator == "type" and len(s.relative_schema_path) == 2 for s in subs)]
        if not matching:  # the value has none of the allowed types: say what they are
            return err, _describe(err.schema, defs)
        err = jsonschema.exceptions.best_match([s for subs in matching for s in subs])
    if err.validator == "additionalProperties" and isinstance(err.schema.get("properties"), dict):
        return err, "keys " + ", ".join(err.schema["properties"])
    if err.validator in ("required", "minProperties", "propertyNames"):
        return err, ""
    return err, _describe(err.schema, defs)


def _number_text_hint(value: Any) -> str:
    """For a string that reads as a finite number, how to write it as a number in YAML ('' otherwise)."""
    if not isinstance(value, str):
        return ""
    try:
        number = float(value)
    except ValueError:
        return ""
    if not math.isfinite(number):
        return ""
    mantissa, e, _ = value.strip().lower().partition("e")
    if e and "." not in mantissa:  # PyYAML (YAML 1.1) reads 1e-6, even unquoted, as a string
        return f" (YAML reads {value.strip()} as a string: write {mantissa}.0e{value.strip()[len(mantissa) + 1:]})"
    return " (a number in quotes is a string: write it without quotes)"


def _message(err, allowed: str) -> str:
    """jsonschema's message for `err`, in the words of the config: no regular expressions, and a hint
    for a number written as a string."""
    if err.validator == "pattern":
        return f"{err.instance!r} is not of the allowed form"
    if err.validator in ("anyOf", "oneOf"):
        message = f"{err.instance!r} is none of the allowed forms"
    else:
        message = err.message
    properties = err.schema.get("properties") if isinstance(err.schema, dict) else None
    if err.validator == "additionalProperties" and isinstance(properties, dict) and isinstance(err.instance, dict):
        message += "".join(close_matches(key, properties) for key in err.instance if key not in properties)
    if "number" in allowed or "integer" in allowed:
        message += _number_text_hint(err.instance)
    return message


def _non_finite(data: Any, path: tuple = ()) -> tuple | None:
    """The path of the first infinite or NaN number in `data` (YAML .inf, .nan), or None: no spec may
    hold one (specs are JSON) and no budget, k or threshold is meant to be infinite."""
    if isinstance(data, float) and not math.isfinite(data):
        return path
    items: Iterable[tuple[Any, Any]]
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return None
    for key, value in items:
        found = _non_finite(value, (*path, key))
        if found is not None:
            return found
    return None


def refuse_non_finite(data: Any, where: str) -> None:
    """One clear error if `data` holds an infinite or NaN number (JSON Schema's `number` admits them)."""
    bad = _non_finite(data)
    if bad is not None:
        value = data
        for key in bad:
            value = value[key]
        loc = "/".join(str(p) for p in bad) or "<top level>"
        raise DPClustError(f"invalid config in {where} at '{loc}': {value!r} is not a finite number "
                           "(allowed: finite numbers only; .inf and .nan are refused)")


def validate(data: dict, schema_name: str, where: str, ref: str | None = None, finite: bool = True) -> None:
    """Validate against `workflow/schemas/<schema_name>.schema.yaml` (or its definition `$defs/<ref>`)
    and, with `finite`, refuse infinite and NaN numbers; one clear error line if invalid."""
    import jsonschema

    validator = _validator(schema_name, ref)
    errors = list(validator.iter_errors(data))
    if errors:
        err, allowed = _most_specific(jsonschema.exceptions.best_match(errors), validator.schema.get("$defs"))
        loc = "/".join(str(p) for p in err.absolute_path) or "<top level>"
        message = _message(err, allowed)
        allowed = f" (allowed: {allowed})" if allowed else ""
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise DPClustError(f"invalid config in {where} at '{loc}': {message}{allowed}{more}")
    if finite:
        refuse_non_finite(data, where)


def group_datasets(registry: Any, spec) -> list[tuple[str, str | None]]:
    """(dataset, its family or None) of a run group's `datasets`: a name, a family `{family: F}`
    (optionally `where: [{VAR: [values]}, ...]`: the members whose template variables match one of
    the alternatives; a variable whose values are mappings matches by its `suffix`), or a list of
    both; names unchecked (the planner checks them), families in registry order."""
    out: list[tuple[str, str | None]] = []
    for part in (spec if isinstance(spec, list) else [spec]):
        if isinstance(part, dict):
            out += [(n, part.get("family")) for n, e in registry.datasets.items()
                    if e.get("family") == part.get("family") and _matches(e.get("template_vars") or {},
                                                                          part.get("where"))]
        else:
            out.append((part, None))
    return out


def _matches(template_vars: dict, where: list | None) -> bool:
    if not where:
        return True

    def value(var):
        v = template_vars.get(var)
        return v.get("suffix") if isinstance(v, dict) else v

    return any(all(value(var) in allowed for var, allowed in alternative.items()) for alternative in where)


def _check_k_within_n(item: dict, registry: Any, where: str) -> None:
    """Every k of every run group of `item` is at most the n of each dataset it is run on (n from the
    registry). Datasets, families and `k: {registry: <key>}` resolve as in the run planner; what the
    planner refuses itself (an unknown dataset, a dataset without a k) is left to it."""
    for group_name, group in (item.get("runs") or {}).items():
        if not isinstance(group, dict) or "datasets" not in group or "k" not in group:
            continue
        datasets = [d for d, _ in group_datasets(registry, group["datasets"]) if d in registry.datasets]
        for dataset in datasets:
            entry = registry.datasets[dataset]
            k_spec, source = group["k"], ""
            if isinstance(k_spec, dict) and set(k_spec) == {"registry"}:
                source = f" (the registry's paper_k.{k_spec['registry']} of {dataset!r})"
                k_spec = (entry.get("paper_k") or {}).get(k_spec["registry"])
            elif isinstance(k_spec, dict):
                k_spec = k_spec.get(dataset)
            for k in k_spec if isinstance(k_spec, list) else [k_spec]:
                if isinstance(k, int) and not isinstance(k, bool) and k > entry["n"]:
                    raise DPClustError(
                        f"invalid config in {where} at 'runs/{group_name}/k': k = {k}{source} exceeds the "
                        f"n = {entry['n']} points of dataset {dataset!r} (allowed: 1 <= k <= n)")


#: keys every run group needs (workflow/schemas/paper.schema.yaml, $defs/group)
GROUP_REQUIRED = ("datasets", "transform", "algorithms", "k", "repetitions")


def _check_preset_groups(bare: dict, preset_cfg: dict, where: str) -> None:
    """A preset may override a run group of the item or add a complete new one: a group it names
    that the item does not have, and that lacks a required key, is a misspelt group name (one error
    naming the item's groups, not "'transform' is a required property")."""
    groups = bare.get("runs") or {}
    for name, group in ((preset_cfg or {}).get("runs") or {}).items():
        if name in groups or not isinstance(group, dict):
            continue
        missing = [key for key in GROUP_REQUIRED if key not in group]
        if missing:
            raise DPClustError(
                f"invalid config in {where} at 'runs/{name}': the item has no run group {name!r}"
                f"{close_matches(name, groups)} (its groups: {', '.join(groups) or 'none'}); fix the name, "
                f"or give the new group every required key (missing: {', '.join(missing)})")


def delta_problem(delta: Any, n: int | None = None) -> str | None:
    """What is wrong with a run group's `delta` (None if nothing): a string must be a number, 'n^e'
    or 'c/n'; with the dataset's `n`, the value must be in [0, 1) (checked when planning, not when
    the run job reads it)."""
    if not isinstance(delta, str):
        return None
    text = delta.replace(" ", "")
    try:
        number = float(text[2:] if text.startswith("n^") else text[:-2] if text.endswith("/n") else text)
    except ValueError:
        return (f"delta {delta!r} is not a number, 'n^<exponent>' or '<c>/n' (write e.g. 1e-6, 'n^-1.5' "
                "or '0.1/n')")
    if n is None:
        return None
    try:
        value = float(n) ** number if text.startswith("n^") else number / n if text.endswith("/n") else number
    except OverflowError:
        value = math.inf
    if not (math.isfinite(value) and 0 <= value < 1):
        return f"delta {delta!r} is {value:g} for n = {n}, not in [0, 1) (allowed: 0 <= delta < 1)"
    return None


def _check_group_values(item: dict, registry: Any, where: str, algorithms: dict | None = None) -> None:
    """What the schema cannot say about each run group of `item`: `params` only for the group's own
    algorithms (a sweep would drop the others unseen), and a `delta` that resolves, for each dataset
    of the group (its n from the registry), to a number in [0, 1) (else the run jobs would fail)."""
    for group_name, group in (item.get("runs") or {}).items():
        if not isinstance(group, dict):
            continue
        loc = f"invalid config in {where} at 'runs/{group_name}"
        names = group.get("algorithms")
        if isinstance(names, list):
            for alg in group.get("params") or {}:
                if alg not in names:
                    raise DPClustError(f"{loc}/params': {alg!r} is not one of the group's algorithms"
                                       f"{close_matches(alg, names)} (allowed: {', '.join(map(str, names))})")
        if "delta" not in group:
            continue
        problem = delta_problem(group["delta"])
        if problem:
            raise DPClustError(f"{loc}/delta': {problem}")
        # δ of an expression of n is resolved from the public size when an algorithm sets public_n
        public_n = any("public_n" in (p or {}) for p in (group.get("params") or {}).values()) or any(
            "public_n" in ((algorithms or {}).get(a) or {}).get("settings", {}) for a in (names or []))
        if registry is None or public_n or "datasets" not in group:
            continue
        for dataset, _ in group_datasets(registry, group["datasets"]):
            if dataset in registry.datasets:
                problem = delta_problem(group["delta"], int(registry.datasets[dataset]["n"]))
                if problem:
                    raise DPClustError(f"{loc}/delta': on dataset {dataset!r}, {problem}")


def load_papers(config_dir: str | Path | None = None, preset: str = "full",
                check_schema: bool = True, registry: Any = None) -> tuple[dict, dict]:
    """(algorithms, papers) from every `config/papers/*.yaml`, validated, preset applied to items.

    With `check_schema`, every item is validated again after each of its presets (not only
    `preset`) is merged over it, against the same schema as the item itself; with a `registry`
    (`dpclust.data.registry.Registry`), every k of a run group must also be at most the n of each
    of its datasets.
    """
    config_dir = Path(config_dir) if config_dir else REPO_ROOT / "config"
    algorithms: dict[str, dict] = {}
    papers: dict[str, dict] = {}
    checked: list[tuple[dict, str]] = []  # (item, where): values checked once every algorithm is known
    for path in sorted((config_dir / "papers").glob("*.yaml")):
        paper_cfg = _read_yaml(path)
        if check_schema:  # the items' numbers are checked below, each with its preset named
            validate(paper_cfg, "paper", str(path), finite=False)
            refuse_non_finite({k: v for k, v in paper_cfg.items() if k != "items"}, str(path))
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
            bare = {k: v for k, v in item.items() if k != "presets"}
            items[item_name] = deep_merge(bare, presets.get(preset, {}))
            if not check_schema:
                continue
            # every preset, not only `preset` (a typo under presets.test is an error in a full run too);
            # the item as written (a preset it has no entry for) was validated with its paper
            refuse_non_finite(bare, f"{path}: paper {name!r}, item {item_name!r} (as written, without a preset)")
            bare_checked = False
            for other in PRESETS:
                if other in presets:
                    merged = items[item_name] if other == preset else deep_merge(bare, presets[other] or {})
                    where = (f"{path}: paper {name!r}, item {item_name!r}, preset {other!r} "
                             f"(items.{item_name}.presets.{other} merged over the item)")
                    _check_preset_groups(bare, presets[other], where)
                    validate(merged, "paper", where, ref="item")
                elif bare_checked:
                    continue
                else:
                    merged, bare_checked = bare, True
                    where = (f"{path}: paper {name!r}, item {item_name!r}, preset {other!r} "
                             f"(the item has no presets.{other})")
                if registry is not None:
                    _check_k_within_n(merged, registry, where)
                checked.append((merged, where))
        paper_cfg["items"] = items
        papers[name] = paper_cfg
    for item, where in checked:
        _check_group_values(item, registry, where, algorithms)
    return algorithms, papers


def load_names(config_dir: str | Path, registry: Any = None) -> dict:
    """Display names of algorithms and datasets (`config/names.yaml`): the one table every figure,
    table and check uses. With the dataset `registry`, the name of each dataset it marks
    `origin: unverified` ends in "(origin unverified)"."""
    from dpclust.data.registry import UNVERIFIED_LABEL, origin_unverified

    path = Path(config_dir) / "names.yaml"
    names = _read_yaml(path) if path.exists() else {}
    out = {"algorithms": dict(names.get("algorithms") or {}), "datasets": dict(names.get("datasets") or {})}
    # Every figure, table and claim on such data must say so: the display name is what all of them
    # show, and deriving it from the registry keeps one home for the mark (names.yaml has the plain
    # name, so no dataset can be marked in one file and forgotten in the other).
    for dataset, entry in (registry.datasets if registry is not None else {}).items():
        label = str(out["datasets"].get(dataset, dataset))
        if origin_unverified(entry) is not None and UNVERIFIED_LABEL not in label:
            out["datasets"][dataset] = f"{label} ({UNVERIFIED_LABEL})"
    return out


def load_config(config_dir: str | Path | None = None, base: dict | None = None,
                overrides: dict | None = None) -> dict:
    """The validated, preset-applied configuration.

    `base` is the top-level config (Snakemake's `config`); when None, `config_dir/config.yaml`
    is read. `overrides` are merged on top (e.g. the contents of `config/quick.yaml`).
    """
    from dpclust.data.registry import load_registry

    config_dir = Path(config_dir) if config_dir else REPO_ROOT / "config"
    main_file = config_dir / "config.yaml"
    if not config_dir.is_dir():
        raise DPClustError(f"config directory {config_dir} does not exist: give the directory that holds config.yaml "
                           "and papers/ (default: config)")
    if not main_file.exists() and (base is None or any(key not in base for key in ("preset", "base_seed", "papers"))):
        # (Snakemake skips a missing `configfile:` without a word; its config is then only the preset's)
        raise DPClustError(f"{main_file} does not exist: restore it (git checkout -- {main_file}); the presets "
                           "(--configfile config/quick.yaml, config/test.yaml) only override its values")
    top = copy.deepcopy(base) if base is not None else _read_yaml(main_file)
    top = deep_merge(top, overrides or {})
    for key in ("algorithms", "paper_configs", "config_dir", "registry", "names", "dpclust_report_tallies"):
        top.pop(key, None)  # derived keys of an earlier load (Snakemake may hand them back)
    root = top.pop("results_root", None) or top.get("results_dir")
    if root is not None:
        top["results_dir"] = root
    validate(top, "config", "config")
    mirror = top.get("data_mirror")
    if mirror and not os.path.isdir(mirror):
        raise DPClustError(f"invalid config in config at 'data_mirror': {mirror!r} is not a directory (allowed: the "
                           "path of a local mirror of the raw dataset files, e.g. ../shared/datasets, or null to "
                           "download them from their URLs)")
    # each preset writes under its own directory, so that runs of two presets never mix
    top["results_root"] = top["results_dir"]
    top["results_dir"] = f"{top['results_dir']}/{top['preset']}"
    registry_path = config_dir / "datasets.yaml"
    validate(_read_yaml(registry_path), "datasets", str(registry_path))
    registry = load_registry(registry_path)
    algorithms, papers = load_papers(config_dir, top.get("preset", "full"), registry=registry)
    unknown = [p for p in top["papers"] if p not in papers]
    if unknown:
        raise DPClustError(f"config 'papers' names {unknown}, but config/papers/ has only {sorted(papers)}")
    top["algorithms"] = algorithms
    top["paper_configs"] = select_items({p: papers[p] for p in top["papers"]}, top.get("items") or [])
    top["config_dir"] = str(config_dir)
    top["registry"] = registry
    top["names"] = load_names(config_dir, registry)
    return top


def select_items(paper_configs: dict[str, dict], selected: list[str]) -> dict[str, dict]:
    """The planned papers with only the items config `items` names ("paper/item"): a paper it names
    keeps just those items, one it does not name keeps all of them (so that a working session can run
    part of a paper: `--config 'papers=[su2016]' 'items=[su2016/fig1, su2016/fig5]'`). An item that
    reads another's runs or audits (`runs_from`, `audits_from`) needs that item named too."""
    if not selected:
        return paper_configs
    keep: dict[str, list[str]] = {}
    for entry in selected:
        paper, _, item = str(entry).partition("/")
        if paper not in paper_configs:
            raise DPClustError(f"config 'items' names {entry!r}, but config 'papers' does not name {paper!r}: add it "
                               f"to papers, or remove the item (planned papers: {', '.join(paper_configs)})")
        known = paper_configs[paper]["items"]
        if item not in known:
            raise DPClustError(f"config 'items' names {entry!r}, but {paper} has no item {item!r}"
                               f"{close_matches(item, known)} (its items: {', '.join(known)})")
        keep.setdefault(paper, []).append(item)
    out = dict(paper_configs)
    for paper, names in keep.items():
        items = paper_configs[paper]["items"]
        for name in names:
            for key in ("runs_from", "audits_from"):
                source = items[name].get(key)
                if source and source not in names:
                    raise DPClustError(f"config 'items' names {paper}/{name}, which reads the {key.split('_')[0]} "
                                       f"of {paper}/{source} ({key}): add {paper}/{source} to items")
        out[paper] = dict(paper_configs[paper], items={n: i for n, i in items.items() if n in names})
    return out


def run_scope(cfg: dict) -> list[str]:
    """What a run was limited to, for its results page: its `items`, else its `papers` when they are not
    every paper the config schema knows; [] for the whole protocol."""
    if cfg.get("items"):
        return [str(i) for i in cfg["items"]]
    known = _read_yaml(SCHEMA_DIR / "config.schema.yaml")["properties"]["papers"]["items"]["enum"]
    return [] if set(known) <= set(cfg["papers"]) else [str(p) for p in cfg["papers"]]


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
        raise DPClustError(f"{where or 'config'}: unknown algorithm {name!r}{close_matches(name, algorithms)} "
                           f"(known: {', '.join(sorted(algorithms))}; `python -m dpclust.pipeline list algorithms`)")
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
