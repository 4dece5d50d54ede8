"""Planning the privacy audit jobs (the `audit` paper, config/papers/audit.yaml).

An item with an `audit:` section (schema: workflow/schemas/paper.schema.yaml `audit`) expands into
one `AuditJob` per (algorithm, neighbouring design), each with a complete spec: the resolved
algorithm (`dpclust.pipeline.configuration.resolve_algorithm`), the design and its sizes, the neighbouring
relation, samples per side, seed, ε and δ. An algorithm whose guarantee needs a public N (held
fixed on both neighbours) can also be audited, per its `n_from_data` designs, with N read from
each neighbour: a labelled run outside its guarantee that shows why N must be public. Any algorithm
can also be audited at settings chosen for the attack's power (`power`: e.g. DPLloyd with one
iteration, the fewest compositions), within its guarantee, which must hold at every setting. An item
with `audits_from: <item>` shares another item's audit jobs (as `runs_from` shares runs). Audit
items are `AuditItemTarget`s (`target.audits`), the plan an `AuditPlan` (`plan.audits`,
`plan.audit(path)`).
`plan_audits` is one of `dpclust.pipeline.planning.PLANNERS`; everything of the audit lives here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property

from dpclust.api import DPClustError
from dpclust.pipeline.audit_labels import N_FROM_DATA, N_FROM_DATA_SOURCE, POWER, PUBLIC_N_FIXED
from dpclust.pipeline.configuration import canonical_json, resolve_algorithm, select_algorithms
from dpclust.pipeline.run_plan import ItemTarget, Plan

#: The neighbouring relations an audit uses (dpclust.audit.designs.RELATIONS), by config name.
AUDIT_RELATIONS = {"add_remove": "add/remove one record", "replace_one": "replace one record (n public)"}


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


def audit_jobs(config: dict, paper: str, item_name: str, audit: dict, results_dir: str) -> list[AuditJob]:
    """The audit jobs of one item's `audit:` section (see config/papers/audit.yaml)."""
    from dpclust.audit.designs import DESIGNS, relation_kind
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
        if "delta" in p:
            delta = float(p["delta"])
        elif guarantee is not None and guarantee.get("kind") == "(ε, δ)-DP":
            delta = float(audit["delta"])
        else:
            delta = 0.0
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

