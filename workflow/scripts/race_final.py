"""Snakemake script: a race's final list of the looks' run files that ran (what its items also read)."""
from pathlib import Path

from dpclust.fileio import write_json_atomic
from dpclust.pipeline.steps import run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake


def step():
    final = {"runs": list(sm.input.runs), "decisions": list(sm.input.decisions)}
    write_json_atomic(final, sm.output[0])   # one line: integrity.intact tells one cut short
    print(f"{len(final['runs'])} look run files after {len(final['decisions'])} decisions")


run_logged(sm.log[0], f"race of {sm.wildcards.paper}/{sm.wildcards.item} ({Path(sm.output[0]).parent.name})", step)
