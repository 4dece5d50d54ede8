"""Snakemake script: one table of every claim check of every item, with the replicated claims'
verdicts after their looks (dpclust.pipeline.replication)."""
from pathlib import Path

from dpclust.pipeline import replication
from dpclust.pipeline.steps import run_logged, summarize_checks

sm = snakemake  # noqa: F821 - injected by Snakemake
# each replicated item's last decision: results/replication/<paper>/<item>/decision<j>.json
decisions = {"/".join(Path(p).parent.parts[-2:]): replication.read_decision(p) for p in sm.input.replications}
table = run_logged(sm.log[0], "summarising the claim checks",
                   lambda: summarize_checks(list(sm.input.checks), str(Path(sm.output.csv).with_suffix("")),
                                            adjust=lambda t: replication.apply(t, decisions)))
