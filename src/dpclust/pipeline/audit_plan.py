"""Planning the privacy audit jobs (the `audit` paper, config/papers/audit.yaml).

An item with an `audit:` section (schema: workflow/schemas/paper.schema.yaml `audit`) expands into
one `AuditJob` per (algorithm, neighbouring design), each with a complete spec: the resolved
algorithm (`dpclust.pipeline.configuration.resolve_algorithm`), the design and its sizes, the neighbouring
relation, samples per side, seed, ε and δ. An algorithm whose guarantee needs a public N (held
fixed on both neighbours) can also be audited, per its `n_from_data` designs, with N read from
each neighbour: a labelled run outside its guarantee that shows why N must be public. Any algorithm
can also be audited at settings chosen for the attack's power (`power`: e.g. DPLloyd with one
iteration, the fewest compositions), within its guarantee, which must hold at every setting. An item
with `audits_from: <item>` shares another item's audit jobs (as `runs_from` shares runs). The item's
`table: floating_point:` declares the floating-point design (`floating_point_jobs`, Mironov 2012): its
positive controls (raw-float Laplace and Gaussian samplers) and, for every audited algorithm, the design
(one more job, variant "floating_point", with a Laplace or a Gaussian event)
or "not applicable: <why>" (no job; the table shows the reason). Audit
items are `AuditItemTarget`s (`target.audits`), the plan an `AuditPlan` (`plan.audits`,
`plan.audit(path)`).
`plan_audits` is one of `dpclust.pipeline.planning.PLANNERS`; everything of the audit lives here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dpclust.api import DPClustError
from dpclust.audit.floating_point import MECHANISMS
from dpclust.pipeline.audit_labels import (
    CONTROL_ALGORITHM,
    CONTROL_KIND,
    FLOATING_POINT,
    FLOATING_POINT_DESIGN,
    N_FROM_DATA,
    N_FROM_DATA_SOURCE,
    NOT_APPLICABLE,
    POWER,
    PUBLIC_N_FIXED,
)
from dpclust.pipeline.configuration import canonical_json, resolve_algorithm, select_algorithms
from dpclust.pipeline.run_plan import ItemTarget, Plan

#: The neighbouring relations an audit uses (dpclust.audit.designs.RELATIONS), by config name.
AUDIT_RELATIONS = {"add_remove": "add/remove one record", "replace_one": "replace one record (n public)"}
ADD_REMOVE_TEXT = AUDIT_RELATIONS["add_remove"]


@dataclass(frozen=True)
class AuditJob:
    """One Snakemake job: the privacy audit of one algorithm on one neighbouring design."""

    algorithm: str
    design: str
    spec_json: str
    results_dir: str = "results"
    variant: str = ""       # "", N_FROM_DATA or POWER (dpclust.pipeline.audit_labels)

    @property
    def path(self) -> str:
        return audit_path(self.results_dir, self.algorithm, self.design, self.variant)

    @property
    def spec(self) -> dict:
        return json.loads(self.spec_json)


def audit_path(results_dir: str, algorithm: str, design: str, variant: str = "") -> str:
    """results/audits/<algorithm>/<design>.json, or <design>.<variant>.json for an audit variant."""
    return f"{results_dir}/audits/{algorithm}/{design}{'.' + variant if variant else ''}.json"


@dataclass
class AuditItemTarget(ItemTarget):
    """An item whose aggregate reads audit records (`audits`) instead of (or besides) run records."""

    audits: list[AuditJob] = field(default_factory=list)

    def step_names(self) -> dict:
        names = super().step_names()
        table = (self.names or {}).get("algorithms") or {}
        audited = {job.algorithm for job in self.audits}
        names["algorithms"].update({a: n for a, n in table.items() if a in audited})
        return names


@dataclass
class AuditPlan(Plan):
    @cached_property
    def audits(self) -> list[AuditJob]:
        """Every distinct audit job (items that share audits via `audits_from` list them once)."""
        return list({job.path: job for item in self.items for job in getattr(item, "audits", [])}.values())

    @cached_property
    def audits_by_path(self) -> dict[str, AuditJob]:
        return {job.path: job for job in self.audits}

    @property
    def audit_items(self) -> list[ItemTarget]:
        return [t for t in self.items if isinstance(t, AuditItemTarget)]

    def audit(self, path: str) -> AuditJob:
        if path not in self.audits_by_path:
            raise DPClustError(f"{path} is not a planned audit of this configuration")
        return self.audits_by_path[path]


def n_public_add_remove(guarantee: dict | None) -> bool:
    """True for a declared guarantee "add/remove one record, N public": its N-dependent choices are
    meant to come from a public N, which the audit holds fixed on both neighbours (setting `public_n`)."""
    from dpclust.audit.designs import ADD_REMOVE, relation_kind

    text = str((guarantee or {}).get("relation", ""))
    return relation_kind(text) == ADD_REMOVE and "n public" in text.lower()


def _audit_algorithms(config: dict, selection, where: str) -> list[str]:
    """A list of algorithm ids, or a selection as in run groups (`select`, `objective`,
    `guarantee`, `exclude`) plus `include`: explicit algorithms added to the selection."""
    if isinstance(selection, list):
        names = list(selection)
    else:
        base = {k: v for k, v in selection.items() if k != "include"}
        names = select_algorithms(config, base, where) if base else []
        names += [a for a in selection.get("include") or [] if a not in names]
    unknown = sorted(set(names) - set(config["algorithms"]))
    if unknown:
        raise DPClustError(f"{where}: unknown algorithm(s) {unknown}")
    return names


def _relation(resolved: dict, p: dict) -> tuple[str, str, bool, str]:
    """(relation, its source, whether the public N is held fixed, the source of the `n_from_data`
    variant) of a resolved algorithm, from its declared guarantee or (while undeclared) its params."""
    from dpclust.audit.designs import relation_kind

    guarantee = resolved.get("guarantee")
    if guarantee is not None:
        relation, source = relation_kind(guarantee.get("relation")), "declared guarantee"
    elif "relation" in p:
        relation, source = AUDIT_RELATIONS[p["relation"]], "audit config (guarantee undeclared)"
    else:
        relation, source = AUDIT_RELATIONS["add_remove"], "default (guarantee undeclared)"
    # "add/remove one record, N public": an algorithm that takes the public N (setting `public_n`) gets
    # N = |D| on both neighbours; one that reads N from its data is audited with each neighbour's size
    n_public = n_public_add_remove(guarantee)
    fixed_n = n_public and "public_n" in resolved["settings"]
    variant_source = f"{source}: {N_FROM_DATA_SOURCE}"
    if n_public:
        source += (f": N public, {PUBLIC_N_FIXED}" if fixed_n
                   else ": N public, but the algorithm reads N from each dataset (no public_n setting)")
    return relation, source, fixed_n, variant_source


def audit_jobs(config: dict, paper: str, item_name: str, audit: dict, results_dir: str) -> list[AuditJob]:
    """The audit jobs of one item's `audit:` section (see config/papers/audit.yaml)."""
    from dpclust.audit.designs import DESIGNS
    from dpclust.pipeline.run_job import derive_seed

    where = f"{paper}/{item_name}/audit"
    params_all = audit.get("params") or {}
    algorithms = _audit_algorithms(config, audit["algorithms"], f"{where}/algorithms")
    stray = sorted(set(params_all) - set(algorithms))
    if stray:
        raise DPClustError(f"{where}/params: {stray} are not audited by this item (algorithms: {algorithms})")
    jobs = []
    for alg in algorithms:
        p = params_all.get(alg) or {}
        resolved = resolve_algorithm(config, alg, p.get("settings"), f"{where}/params/{alg}")
        if not resolved["private"]:
            raise DPClustError(f"{where}: {alg} takes no privacy budget (private: false); there is nothing to audit")
        guarantee = resolved.get("guarantee")
        relation, source, fixed_n, variant_source = _relation(resolved, p)
        delta = _delta(p, guarantee, audit)
        variant_designs = p.get(N_FROM_DATA) or []
        if variant_designs and not fixed_n:
            raise DPClustError(f"{where}/params/{alg}/{N_FROM_DATA}: the variant 'N read from each dataset' is for "
                               "algorithms whose guarantee is 'add/remove one record, N public' and that take the "
                               f"public N (setting public_n); {alg} is not one: remove {N_FROM_DATA}")
        power = p.get(POWER)
        runs = [(name, "", {}) for name in p.get("designs") or audit["designs"]]
        runs += [(name, N_FROM_DATA, {}) for name in variant_designs]
        if power:
            runs.append((power["design"], POWER, {key: power[key] for key in ("n", "k", "samples") if key in power}))
        for name, variant, own_sizes in runs:
            if name not in DESIGNS:
                raise DPClustError(f"{where}: unknown design {name!r}; known: {', '.join(DESIGNS)}")
            sizes = {"n": DESIGNS[name].n, "k": DESIGNS[name].k, "samples": p.get("samples", audit["samples"])}
            sizes.update((audit.get("design_params") or {}).get(name) or {})
            sizes.update((p.get("design_params") or {}).get(name) or {})
            sizes.update(own_sizes)
            n, k = int(sizes["n"]), int(sizes["k"])
            if not 1 <= k <= n:
                raise DPClustError(f"{where}: design {name} for {alg} needs 1 <= k <= n, got n={n}, k={k}")
            alg_spec = resolved
            extra = {}
            if variant == POWER:
                # the same algorithm at the settings chosen for power (resolved, so unknown names and bad
                # values are refused like any other setting)
                alg_spec = resolve_algorithm(config, alg, {**(p.get("settings") or {}), **power["settings"]},
                                             f"{where}/params/{alg}/{POWER}")
                extra = {"variant": {"name": POWER, "settings": dict(power["settings"])}}
            public_n = ({"settings": {**alg_spec["settings"], "public_n": n}}
                        if fixed_n and variant != N_FROM_DATA else {})
            spec = {**alg_spec, **public_n, "design": name, "n": n, "k": k, "relation": relation,
                    "relation_source": variant_source if variant == N_FROM_DATA else source,
                    "epsilon": float((power if variant == POWER else {}).get(
                        "epsilon", p.get("epsilon", audit["epsilon"]))),
                    "delta": delta,
                    "samples": int(sizes["samples"]),
                    "confidence": float(audit.get("confidence", 0.95)),
                    "seed": derive_seed(int(config["base_seed"]), "audit", alg, name, *([variant] if variant else [])),
                    "note": power.get("note", "") if variant == POWER else p.get("note", ""), **extra}
            jobs.append(AuditJob(alg, name, canonical_json(spec), results_dir, variant))
    return jobs


#: Keys of the floating-point declaration (`table: floating_point:` of an audit item), of one covered
#: algorithm's entry and of the positive control's.
FLOATING_POINT_KEYS = ("samples", "epsilon", "bounds", "control", "gaussian_control", "algorithms")
FLOATING_POINT_ENTRY_KEYS = ("records", "copies", "target", "from_D", "from_Dp", "every_coordinate", "mechanism",
                             "floor", "settings", "samples", "epsilon", "delta", "k", "note")
FLOATING_POINT_CONTROL_KEYS = ("records", "target", "from_D", "samples", "note")
#: The positive control's function: the legacy raw-float Laplace sampler (audit package only).
CONTROL_FUNCTION = "dpclust.audit.floating_point:legacy_laplace_release"
CONTROL_NAME = "Legacy raw-float Laplace sampler (positive control)"
#: The Gaussian event's positive control (`gaussian_control`): the legacy raw-float Gaussian sampler.
GAUSSIAN_CONTROL_ALGORITHM = "control.legacy_gaussian"
GAUSSIAN_CONTROL_FUNCTION = "dpclust.audit.floating_point:legacy_gaussian_release"
GAUSSIAN_CONTROL_NAME = "Legacy raw-float Gaussian sampler (positive control)"


def _points(value, where: str, what: str, bounds: tuple[float, float], many: bool) -> list:
    """A list of points (`many`) or one point, every coordinate a finite number in the public box."""
    pts = value if many else [value]
    ok = isinstance(pts, list) and pts and all(isinstance(q, list) and q for q in pts)
    ok = ok and len({len(q) for q in pts}) == 1 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and bounds[0] <= v <= bounds[1]
        for q in pts for v in q)
    if not ok:
        raise DPClustError(f"{where}: `{what}` must be {'a list of points' if many else 'a point'} ([x, y, ...]) with "
                           f"coordinates in the design's box {list(bounds)}, got {value!r}")
    return [[float(v) for v in q] for q in pts] if many else [float(v) for v in pts[0]]


def _values(value, where: str, what: str, required: bool) -> list[float]:
    if value is None and not required:
        return []
    if not (isinstance(value, list) and (value or not required) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)):
        raise DPClustError(f"{where}: `{what}` must be a {'non-empty ' if required else ''}list of numbers, "
                           f"got {value!r}")
    return [float(v) for v in value]


def _unknown_keys(entry: dict, allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(entry) - set(allowed))
    if unknown:
        raise DPClustError(f"{where}: unknown key(s) {unknown}; known: {', '.join(allowed)}")


def _delta(declared: dict, guarantee: dict | None, audit: dict) -> float:
    """The δ an audit job runs at: the one `declared` for it, else the audit's δ for an (ε, δ)-DP
    algorithm, else 0."""
    if "delta" in declared:
        return float(declared["delta"])
    if guarantee is not None and guarantee.get("kind") == "(ε, δ)-DP":
        return float(audit["delta"])
    return 0.0


def _event(entry: dict, at: str) -> dict:
    """The event of a floating-point entry: from_D, from_Dp, every_coordinate and, when not the default
    (so the Laplace entries' specs are unchanged), `mechanism` ("gaussian": the low-order-bit grid of D's
    values, dpclust.audit.floating_point (d)) and `floor` (|y| >= floor)."""
    event: dict[str, Any] = {"from_D": _values(entry.get("from_D"), at, "from_D", True),
                             "from_Dp": _values(entry.get("from_Dp"), at, "from_Dp", False),
                             "every_coordinate": bool(entry.get("every_coordinate", False))}
    mechanism = entry.get("mechanism", "laplace")
    if mechanism not in MECHANISMS:
        raise DPClustError(f"{at}/mechanism: expected one of {list(MECHANISMS)}, got {mechanism!r}")
    if mechanism == "gaussian":
        if any(x == 0 for x in event["from_D"]) or event["from_Dp"]:
            raise DPClustError(f"{at}: the Gaussian event needs D's values (from_D) != 0 and no from_Dp "
                               "(dpclust.audit.floating_point, (d))")
        event["mechanism"] = mechanism
    floor = entry.get("floor", 0.0)
    if not (isinstance(floor, (int, float)) and not isinstance(floor, bool) and math.isfinite(floor) and floor >= 0):
        raise DPClustError(f"{at}/floor: expected a number >= 0, got {floor!r}")
    if floor:
        event["floor"] = float(floor)
    return event


def floating_point_jobs(config: dict, paper: str, item_name: str, audit: dict, fp, algorithms: list[str],
                        results_dir: str) -> list[AuditJob]:
    """The floating-point design's jobs of an audit item (`table: floating_point:`, config/papers/audit.yaml;
    dpclust.audit.floating_point.release_audit): the positive controls (`control`, the legacy raw-float
    Laplace sampler; `gaussian_control`, the legacy raw-float Gaussian sampler with the Gaussian event), and
    one job per audited algorithm whose entry declares the design (the datasets D = `records` (each
    `copies` times, default 1) and D′ = D and `target` under the algorithm's neighbouring relation, the
    values a released coordinate takes on D (`from_D`, and on D′, `from_Dp`), the releases the event is for
    (`mechanism`: laplace or gaussian), `floor`, settings, samples). Every audited algorithm must have an
    entry: the design or "not applicable: <why>" (shown as its row)."""
    from dpclust.pipeline.run_job import derive_seed

    where = f"{paper}/{item_name}/table/floating_point"
    if not isinstance(fp, dict):
        raise DPClustError(f"{where}: expected a mapping (samples, epsilon, bounds, control, algorithms), got {fp!r}")
    _unknown_keys(fp, FLOATING_POINT_KEYS, where)
    bounds_v = fp.get("bounds", [-1.0, 1.0])
    if not (isinstance(bounds_v, list) and len(bounds_v) == 2 and all(isinstance(v, (int, float)) for v in bounds_v)
            and float(bounds_v[0]) < float(bounds_v[1])):
        raise DPClustError(f"{where}/bounds: expected [lo, hi] with lo < hi, got {bounds_v!r}")
    bounds = (float(bounds_v[0]), float(bounds_v[1]))
    entries = fp.get("algorithms") or {}
    if not isinstance(entries, dict):
        raise DPClustError(f"{where}/algorithms: expected a mapping algorithm -> entry, got {entries!r}")
    unknown = sorted(set(entries) - set(config["algorithms"]))
    if unknown:
        raise DPClustError(f"{where}/algorithms: unknown algorithm(s) {unknown}")
    missing = [a for a in algorithms if a not in entries]
    if missing:
        raise DPClustError(f"{where}/algorithms: declare the floating-point design for {missing}: an entry "
                           f"(records, target, from_D, ...) or \"{NOT_APPLICABLE}: <why>\"")
    samples_all = fp.get("samples", audit["samples"])
    eps_all = float(fp.get("epsilon", audit["epsilon"]))
    confidence = float(audit.get("confidence", 0.95))
    base_seed = int(config["base_seed"])

    def sizes(entry: dict, at: str) -> int:
        samples = entry.get("samples", samples_all)
        if not (isinstance(samples, int) and not isinstance(samples, bool) and samples >= 4):
            raise DPClustError(f"{at}/samples: expected an integer >= 4, got {samples!r}")
        return samples

    def datasets(entry: dict, at: str) -> tuple[list, list]:
        if "records" not in entry or "target" not in entry:
            raise DPClustError(f"{at}: give `records` (D) and `target` (the record D′ differs by)")
        records = _points(entry["records"], at, "records", bounds, many=True)
        target = _points(entry["target"], at, "target", bounds, many=False)
        if len(target) != len(records[0]):
            raise DPClustError(f"{at}: `target` has {len(target)} coordinates, the records {len(records[0])}")
        return records, target

    jobs = []
    for key, alg_id, function, name, mechanism in (
            ("control", CONTROL_ALGORITHM, CONTROL_FUNCTION, CONTROL_NAME, "laplace"),
            ("gaussian_control", GAUSSIAN_CONTROL_ALGORITHM, GAUSSIAN_CONTROL_FUNCTION, GAUSSIAN_CONTROL_NAME,
             "gaussian")):
        control = fp.get(key)
        if control is None:
            continue
        at = f"{where}/{key}"
        if not isinstance(control, dict):
            raise DPClustError(f"{at}: expected a mapping (records, target, from_D, samples), got {control!r}")
        _unknown_keys(control, FLOATING_POINT_CONTROL_KEYS, at)
        records, target = datasets(control, at)
        event = _event({**control, "mechanism": mechanism}, at)
        gaussian = mechanism == "gaussian"
        note = ("the Gaussian mechanism as released before the grid: fl(sum + N(0, σ²)), (ε, δ)-DP on the reals only"
                if gaussian else "the Laplace mechanism as released before the grid: fl(sum + N), ε-DP on the reals "
                "only") + " (Mironov 2012)"
        spec = {"algorithm": alg_id, "function": function, "private": True, "settings": {},
                "guarantee": {"kind": CONTROL_KIND, "note": note, "relation": ADD_REMOVE_TEXT},
                "name": name, "control": True, "design": FLOATING_POINT_DESIGN, "records": records,
                "target": target, "n": len(records), "k": 1, "relation": ADD_REMOVE_TEXT,
                "relation_source": "positive control", "epsilon": eps_all,
                "delta": float(audit["delta"]) if gaussian else 0.0, "samples": sizes(control, at),
                "confidence": confidence, "bounds": list(bounds), "event": event,
                "seed": derive_seed(base_seed, "audit", alg_id, FLOATING_POINT_DESIGN, FLOATING_POINT),
                "variant": {"name": FLOATING_POINT, "settings": {}}, "note": str(control.get("note", ""))}
        jobs.append(AuditJob(alg_id, FLOATING_POINT_DESIGN, canonical_json(spec), results_dir, FLOATING_POINT))
    params_all = audit.get("params") or {}
    for alg in algorithms:
        entry = entries[alg]
        at = f"{where}/algorithms/{alg}"
        if isinstance(entry, str):
            if not entry.startswith(f"{NOT_APPLICABLE}: ") or not entry[len(NOT_APPLICABLE) + 2:].strip():
                raise DPClustError(f"{at}: an entry that is not a design must read \"{NOT_APPLICABLE}: <why>\", "
                                   f"got {entry!r}")
            continue
        if not isinstance(entry, dict):
            raise DPClustError(f"{at}: expected the design (a mapping) or \"{NOT_APPLICABLE}: <why>\", got {entry!r}")
        _unknown_keys(entry, FLOATING_POINT_ENTRY_KEYS, at)
        records, target = datasets(entry, at)
        copies = entry.get("copies", 1)
        if not (isinstance(copies, int) and not isinstance(copies, bool) and copies >= 1):
            raise DPClustError(f"{at}/copies: expected an integer >= 1 (D = the records, each that many times), "
                               f"got {copies!r}")
        n_D = len(records) * copies
        event = _event(entry, at)
        own = entry.get("settings") or {}
        p = params_all.get(alg) or {}
        resolved = resolve_algorithm(config, alg, {**(p.get("settings") or {}), **own}, at)
        if not resolved["private"]:
            raise DPClustError(f"{at}: {alg} takes no privacy budget (private: false); there is nothing to audit")
        relation, source, fixed_n, _ = _relation(resolved, p)
        guarantee = resolved.get("guarantee")
        delta = _delta(entry, guarantee, audit)
        k = entry.get("k", 1)
        if not (isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n_D):
            raise DPClustError(f"{at}/k: expected an integer in [1, {n_D}] (the records of D), got {k!r}")
        public_n = {"settings": {**resolved["settings"], "public_n": n_D}} if fixed_n else {}
        spec = {**resolved, **public_n, "design": FLOATING_POINT_DESIGN, "records": records,
                **({"copies": copies} if copies > 1 else {}), "target": target,
                "n": n_D, "k": k, "relation": relation, "relation_source": source,
                "epsilon": float(entry.get("epsilon", eps_all)), "delta": delta, "samples": sizes(entry, at),
                "confidence": confidence, "bounds": list(bounds), "event": event,
                "seed": derive_seed(base_seed, "audit", alg, FLOATING_POINT_DESIGN, FLOATING_POINT),
                "variant": {"name": FLOATING_POINT, "settings": dict(own)}, "note": str(entry.get("note", ""))}
        jobs.append(AuditJob(alg, FLOATING_POINT_DESIGN, canonical_json(spec), results_dir, FLOATING_POINT))
    return jobs


def plan_audits(config: dict, base: Plan) -> AuditPlan:
    """The run plan `base` with the audit jobs of every item that has an `audit:` section."""
    results_dir = config.get("results_dir", "results")
    items: list[ItemTarget] = []
    for target in base.items:
        cfg = target.cfg
        if "audit" in cfg or "audits_from" in cfg:
            target = AuditItemTarget(**{f: getattr(target, f) for f in target.__dataclass_fields__})
            if "audit" in cfg:
                target.audits = audit_jobs(config, target.paper, target.item, cfg["audit"], results_dir)
                fp = (cfg.get("table") or {}).get(FLOATING_POINT)
                if fp is not None:   # the floating-point design (`table: floating_point:`; null: none)
                    audited = list(dict.fromkeys(job.algorithm for job in target.audits))
                    target.audits += floating_point_jobs(config, target.paper, target.item, cfg["audit"], fp, audited,
                                                         results_dir)
        items.append(target)
    by_key = {t.key: t for t in items}
    for target in items:
        source = target.cfg.get("audits_from")
        if source:
            other = by_key.get(f"{target.paper}/{source}")
            if other is None or "audit" not in other.cfg:
                raise DPClustError(f"{target.key}: audits_from {source!r} must name an item of the same paper "
                                   "that has its own `audit:` section")
            if "audit" in target.cfg:
                raise DPClustError(f"{target.key}: give either `audit` or `audits_from`, not both")
            target.audits = other.audits
    seen: dict[str, AuditJob] = {}
    for job in (j for t in items for j in getattr(t, "audits", [])):
        if job.path in seen and seen[job.path].spec_json != job.spec_json:
            raise DPClustError(f"two items plan the audit {job.path} with different specs")
        seen[job.path] = job
    return AuditPlan(config, items)

