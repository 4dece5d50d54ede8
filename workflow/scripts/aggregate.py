"""Snakemake script: aggregate one item's run records into its tidy table (spec from params)."""
import json
from pathlib import Path

from dpclust.pipeline.steps import aggregate_item, run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
spec = json.loads(sm.params.spec)
# the declared data inputs are the processed files' records (data/processed/<dataset>.json) of every
# dataset the item's runs read; the step reads only the datasets its spec names, the .h5 beside each
records = {Path(record).stem: str(record) for record in sm.input.data}
datasets = {name: records[name][: -len(".json")] + ".h5" for name in spec.get("datasets") or []}


# a raced item (dpclust.pipeline.racing) reads the looks' runs its race's final list names too
raced = [path for listed in sm.input.get("race", []) for path in json.loads(Path(listed).read_text())["runs"]]


def step():
    table = aggregate_item(spec, list(dict.fromkeys([*sm.input.runs, *raced])), datasets, sm.output[0])
    print(f"{spec['paper']}/{spec['item']}: {len(sm.input.runs)} run records -> {len(table)} rows")


run_logged(sm.log[0], f"aggregating {spec['paper']}/{spec['item']}", step)
