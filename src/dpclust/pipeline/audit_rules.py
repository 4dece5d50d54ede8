"""Functions of the audit rules (workflow/rules/audit.smk), kept out of the Snakefile as
`snakemake --lint` asks. Every param is a function of the wildcards only."""

from __future__ import annotations

import re
import shlex
from types import SimpleNamespace


def audit_rule_functions(plan, results_dir: str, algorithms: dict) -> SimpleNamespace:
    """The input, param and wildcard functions of the audit rules for a planned workflow:

    * ``args(w)``: the audit job's command-line arguments: its complete spec (dpclust.pipeline.planning
      AuditJob) and the hash of the algorithm's module (for the floating-point design's positive control,
      which is no configured algorithm: its function's, dpclust.audit.floating_point), every dpclust
      module it imports and the audit runner;
    * ``records(w)``, ``spec(w)``, ``code(w)``: an audit item's planned audit records, its
      aggregate step spec and the hash of its items module and the step runner;
    * ``keys``: a pattern matching exactly the "<paper>/<item>" keys of the audit items (nothing when
      none is planned).
    """
    from dpclust.pipeline.audit_plan import audit_path
    from dpclust.pipeline.codehash import DRAWS_NOTHING, code_hash
    from dpclust.pipeline.resolve import function_module

    def code_of(job) -> str:
        # the planned function (the configured algorithm's, or the floating-point design's positive control,
        # dpclust.audit.floating_point, which is no configured algorithm)
        function = algorithms[job.algorithm]["function"] if job.algorithm in algorithms else job.spec["function"]
        return code_hash(function_module(function), "dpclust.pipeline.audit_job")

    def args(w) -> str:
        job = plan.audit(audit_path(results_dir, w.algorithm, w.design))
        return f"--spec {shlex.quote(job.spec_json)} --code-hash {code_of(job)}"

    def item(w):
        return plan.items_by_key[w.audit_key]

    def records(w) -> list[str]:
        return [job.path for job in item(w).audits]

    def spec(w) -> str:
        return item(w).step_spec_json("aggregate")

    def code(w) -> str:
        module = item(w).module
        return code_hash(*([module] if module else []), "dpclust.pipeline.steps", exclude=DRAWS_NOTHING)

    keys = "|".join(re.escape(t.key) for t in plan.audit_items) or "(?!)"
    return SimpleNamespace(args=args, records=records, spec=spec, code=code, keys=keys)
