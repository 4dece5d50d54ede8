"""Snakemake script: the results page of this run (dpclust.pipeline.results_page)."""
from dpclust.pipeline.results_page import write_results_page
from dpclust.pipeline.steps import run_logged

sm = snakemake  # noqa: F821 - injected by Snakemake
run_logged(sm.log[0], "writing the results page",
           lambda: write_results_page(sm.input.summary, sm.output[0], sm.params.preset,
                                      leaderboard_best_csv=getattr(sm.input, "leaderboard", None),
                                      audit_csv=getattr(sm.input, "audit", None), scope=list(sm.params.scope)))
