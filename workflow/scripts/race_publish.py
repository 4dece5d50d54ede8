"""Snakemake script (checkpoint race_decision): publish a racing look's decision as it was made."""
import shutil

from dpclust.pipeline.steps import run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
run_logged(sm.log[0], f"race decision {sm.wildcards.look} of {sm.wildcards.paper}/{sm.wildcards.item}",
           lambda: shutil.copyfile(sm.input[0], sm.output[0]))
