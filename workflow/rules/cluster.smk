# Cluster execution (`--profile profiles/slurm`): which jobs stay on the submitting node, and what a
# run job asks the scheduler for. Neither changes a local run: `localrules` only matter to cluster
# executors, and a run job's mem_mb/runtime only bound a local run given `--resources`.
# Included by the Snakefile after common.smk (run_job) and before the rules (rule `run` uses
# run_runtime/run_mem_mb).

from dpclust.pipeline import cluster_resources


# Data jobs need the network or the data mirror, which compute nodes usually lack; aggregating,
# rendering and checking take about a second each, less than one submission's round trip.
# Only `run` jobs (bundled by the profile's `groups`/`group-components`) and the audit's `audit_run`
# jobs are submitted; the other rules say `localrule: True` themselves.
localrules:
    fetch_source,
    prepare_dataset,
    aggregate,
    render,
    check_claims,
    summarize_claims,
    replication_look,
    replication_decision,
    all,


# Requests only matter to a scheduler: a cluster executor (which takes --jobs, as the profile does)
# or a local run bounded with --resources. Otherwise run jobs carry fixed nominal values: two
# functions fewer to evaluate per job saves a fifth of a dry run of the full protocol.
_RS = workflow.resource_settings
REQUESTS_MATTER = _RS.nodes is not None or bool({"mem_mb", "mem_mib", "mem", "runtime"} & set(_RS.resources or {}))
NOMINAL_MEM_MB, NOMINAL_RUNTIME_MIN = 1000, 60


def run_runtime(wildcards, attempt):
    """Minutes of SLURM wall time for one run job, from its measured cost (doubles on each retry)."""
    return cluster_resources.runtime_min(run_job(wildcards), attempt)


def run_mem_mb(wildcards, attempt):
    """MB of memory for one run job (its measured peak and Snakemake's own), more on each retry."""
    return cluster_resources.mem_mb(run_job(wildcards), attempt)


# Bundles: under `--group-components runs=N` (profiles/slurm) each run job gets a fixed bundle of at
# most N jobs of one dataset (dpclust.pipeline.cluster_resources.bundle_ids; why fixed: its docstring), and
# every bundle id counts as group `runs` for `--group-components`. Without it (or in a local run,
# where Snakemake ignores groups) run jobs have no group. Computed at the first call: Snakemake
# sets the group settings after reading the Snakefile.
_RUN_BUNDLES = []


def run_group(wildcards):
    """The bundle (group id) of one run job, or None (not bundled)."""
    if not _RUN_BUNDLES:
        settings = workflow.group_settings
        size = int(settings.group_components.get("runs", 1)) if settings else 1
        bundles = cluster_resources.bundle_ids(PLAN.batches, size) if size > 1 else {}
        for bundle in set(bundles.values()):
            workflow.parent_groupids[bundle] = "runs"
        _RUN_BUNDLES.append(bundles)
    return _RUN_BUNDLES[0].get(run_job(wildcards).path)
