"""The reproduction pipeline around the `dpclust` library: what Snakemake runs.

Configuration and planning (`planning`: `load_config`, `plan`; `audit_plan`), the run and audit jobs
(`run_job`, `audit_job`, `records`, `resolve`), the item steps (`steps`, `itemkit`, `aggregate`,
`claims`, `plotting`, and one package per paper under `items/`), hashing and integrity of
intermediates (`codehash`, `integrity`), cluster resources (`cluster_resources`), what the person
running the workflow is told (`status`), the command line (`cli`, `python -m dpclust.pipeline`) and the
workarounds for the tools it runs on (`scheduler_fix`, `heap`).

The library (`dpclust` outside this package) never imports it (tests/test_import_graph.py). This
file imports nothing, so a job's code hash covers only the pipeline modules it really uses.
"""
