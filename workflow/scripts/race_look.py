"""Snakemake script: after a racing look, the cells still open and the methods still contending (the
checkpoint race_decision publishes it)."""
import json

from dpclust.pipeline import racing
from dpclust.pipeline.aggregate import Context
from dpclust.pipeline.integrity import load_records
from dpclust.pipeline.steps import run_logged, step_function

sm = snakemake  # noqa: F821 - injected by Snakemake
spec = json.loads(sm.params.spec)   # the owner item's aggregate spec, with its `racing`


def step():
    board = step_function(spec, "aggregate")
    records = load_records(list(sm.input.runs))
    decision = racing.decide(records, spec["racing"], spec["racing"]["repetitions"],
                             lambda recs: board(recs, spec, Context(dataset_paths={}, dataset_entries={})),
                             int(sm.params.look))
    racing.write_decision(decision, sm.output[0])
    print(json.dumps({k: decision[k] for k in ("look", "next", "cells")}, indent=1),
          f"open cells: {len(decision['open'])}, their contenders: {sum(map(len, decision['open'].values()))}")


run_logged(sm.log[0], f"race look {sm.wildcards.look} of {sm.wildcards.paper}/{sm.wildcards.item}", step)
