"""Snakemake script: aggregate one item's run records into its tidy table (spec from params)."""
import json

from dpclust.pipeline import aggregate_item, run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
spec = json.loads(sm.params.spec)
# the declared data inputs are the processed files' records; the data are the .h5 beside each
datasets = {name: str(record)[: -len(".json")] + ".h5" for name, record in zip(spec.get("datasets") or [], sm.input.data)}


def step():
    table = aggregate_item(spec, list(sm.input.runs), datasets, sm.output[0])
    print(f"{spec['paper']}/{spec['item']}: {len(sm.input.runs)} run records -> {len(table)} rows")


run_logged(sm.log[0], f"aggregating {spec['paper']}/{spec['item']}", step)
