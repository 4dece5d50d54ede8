# Cluster execution (`--profile profiles/slurm`): which jobs stay on the submitting node, and what a
# run job asks the scheduler for. Neither changes a local run: `localrules` only matter to cluster
# executors, and a run job's mem_mb/runtime only bound a local run given `--resources`.
# Included by the Snakefile before the rules (run_runtime/run_mem_mb are used by rule `run`).

from dpclust import cluster_resources


# Data jobs need the network or the data mirror, which compute nodes usually lack; aggregating,
# rendering and checking take about a second each, less than one submission's round trip.
# Only `run` jobs are submitted (bundled by the profile's `groups`/`group-components`).
localrules:
    fetch_source,
    prepare_dataset,
    aggregate,
    render,
    check_claims,
    summarize_claims,
    all,


def _planned_run(wildcards):
    """The planned RunJob (dpclust.workflow) of a `run` job's wildcards."""
    w = wildcards
    path = f"{RESULTS}/runs/{w.paper}/{w.item}/{w.group}/{w.dataset}/{w.algorithm}/k{w.k}_e{w.eps}_b{w.block}.json"
    return PLAN.runs_by_path[path]


def run_runtime(wildcards, attempt):
    """Minutes of SLURM wall time for one run job, from its measured cost (doubles on each retry)."""
    return cluster_resources.runtime_min(_planned_run(wildcards), attempt)


def run_mem_mb(wildcards, attempt):
    """MB of memory for one run job (its measured peak and Snakemake's own), more on each retry."""
    return cluster_resources.mem_mb(_planned_run(wildcards), attempt)
