"""Snakemake script (checkpoint): after a look, which claims stay open and whether the next look runs."""
import json

from dpclust.pipeline import replication
from dpclust.pipeline.steps import run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
spec = json.loads(sm.params.spec)


def step():
    previous = replication.read_decision(sm.input.previous[0]) if sm.input.previous else None
    decision = replication.decide(int(sm.params.look), sm.input.checks, previous, spec,
                                  replication.read_decision(sm.input.cells),
                                  replication.read_decision(sm.input.alternatives))
    replication.write_decision(decision, sm.output[0])
    print(json.dumps({k: decision[k] for k in ("look", "open", "next", "stopped", "added_s", "next_s")}, indent=1))


run_logged(sm.log[0], f"replication decision {sm.wildcards.look} of {sm.wildcards.paper}/{sm.wildcards.item}", step)
