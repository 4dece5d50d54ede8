"""Job planning: one `plan(config)` over the list of planners, shared by the Snakefile and the CLI.

The first planner, `dpclust.pipeline.run_plan.plan_runs`, expands every enabled paper's items into
their run jobs (the `Plan`); each following planner takes the config and the plan so far and returns
it with its own jobs added (`dpclust.pipeline.audit_plan.plan_audits`: the audit jobs of items with
an `audit:` section). A new kind of job is one more planner in `PLANNERS`.
"""

from __future__ import annotations

from dpclust.pipeline.audit_plan import plan_audits
from dpclust.pipeline.run_plan import Plan, plan_runs

#: the planners that add jobs to the run plan, in order
PLANNERS = (plan_audits,)


def plan(config: dict) -> Plan:
    """Every job of `config`: its run jobs, then each planner's jobs over them."""
    result = plan_runs(config)
    for planner in PLANNERS:
        result = planner(config, result)
    return result
