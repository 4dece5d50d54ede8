"""Snakemake script: one replication look of an item: its table and checks on all its runs so far."""
import json
from pathlib import Path

from dpclust.pipeline import replication
from dpclust.pipeline.steps import aggregate_item, check_item, run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
aggregate, checks = json.loads(sm.params.aggregate), json.loads(sm.params.checks)
records = {Path(record).stem: str(record) for record in sm.input.data}
datasets = {name: records[name][: -len(".json")] + ".h5" for name in aggregate.get("datasets") or []}


def step():
    table = aggregate_item(aggregate, list(sm.input.runs), datasets, sm.output.table)
    # the cells earlier looks settled keep their verdicts, the claims and alternatives they stopped their results
    # (dpclust.pipeline.replication)
    previous = replication.read_decision(sm.input.previous)
    frame = check_item(checks, sm.output.table, str(Path(sm.output.checks).with_suffix("")),
                       previous.get("settled") or {}, replication.stopped_results(previous))
    print(f"{checks['paper']}/{checks['item']} look {sm.wildcards.look} (alpha {checks['alpha']:g}): "
          f"{len(sm.input.runs)} run records -> {len(table)} rows")
    print(frame[["claim", "result"]].to_string())


run_logged(sm.log[0], f"replication look {sm.wildcards.look} of {aggregate['paper']}/{aggregate['item']}", step)
