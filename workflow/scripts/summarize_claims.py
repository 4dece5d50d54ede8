"""Snakemake script: one table of every claim check of every item."""
from pathlib import Path

from dpclust.pipeline.steps import run_logged, summarize_checks

sm = snakemake  # noqa: F821 - injected by Snakemake
table = run_logged(sm.log[0], "summarising the claim checks",
                   lambda: summarize_checks(list(sm.input.checks), str(Path(sm.output.csv).with_suffix(""))))

