# dpclust: re-run the experiments of five papers on differentially private clustering.
#   snakemake --cores 8                                   full protocol (default config)
#   snakemake --cores 8 --configfile config/quick.yaml    every item, reduced, in minutes
#   snakemake --report report.html [--configfile ...]     one HTML report with every figure/table
# Jobs are planned by dpclust.pipeline.planning from config/ (validated by workflow/schemas/). Every value a
# job depends on reaches it as a param (a resolved spec) or a planned input; no job reads config/.
import os
import sys
import time
from pathlib import Path

STARTED = time.time()   # this invocation's start, for the cost line of the final summary

from snakemake.utils import min_version

from dpclust.pipeline import status
from dpclust.pipeline.records import released_path
from dpclust.pipeline.run_job import git_commit
from dpclust.pipeline.scheduler_fix import keep_one_reevaluation_timer
from dpclust.pipeline.configuration import load_config, run_scope
from dpclust.pipeline.planning import plan

min_version("9.0")
keep_one_reevaluation_timer()   # Snakemake's scheduler would add a timer chain per finished job


configfile: os.path.join(workflow.basedir, "config", "config.yaml")


CONFIG_DIR = Path(workflow.basedir) / "config"
CFG = load_config(CONFIG_DIR, base=config)
PLAN = plan(CFG)
REGISTRY = CFG["registry"]
# Params hold only what determines a result, never where things live: jobs call the `python3`
# first on PATH, i.e. the interpreter running Snakemake (its directory goes first here) or, under
# `--sdm conda`, the activated environment's. Moving the project or switching interpreters re-runs
# nothing.
os.environ.update(PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
DATA = CFG["data_dir"]
RESULTS = CFG["results_dir"]   # <results_dir>/<preset>: two presets never mix their files
if any(arg == "--report" or arg.startswith("--report=") for arg in sys.argv) and not os.path.exists(
        f"{PLAN.summary_stem}.csv"):
    _preset = CFG.get("preset", "full")
    sys.exit(f"dpclust: no results of the {_preset} preset in {RESULTS}/ to report; run it first "
             f"(snakemake --cores 8{'' if _preset == 'full' else f' --configfile config/{_preset}.yaml'})")
# the report's first page: the papers' claims tallied per paper (workflow/report/workflow.rst)
config["dpclust_report_tallies"] = status.report_tallies(f"{PLAN.summary_stem}.csv")
MIRROR = CFG.get("data_mirror") or os.environ.get("DPCLUST_DATA_MIRROR", "")
# Where raw files come from (mirror or canonical URL) and how patiently they are downloaded are not
# part of what they are (checksums are verified), so these reach the fetch jobs through the
# environment, not params: changing or unsetting them never re-runs a fetch and everything after it.
os.environ.update({
    "DPCLUST_DATA_MIRROR": MIRROR,
    "DPCLUST_DOWNLOAD_TIMEOUT": str(CFG.get("download", {}).get("timeout_s", 60)),
    "DPCLUST_DOWNLOAD_RETRIES": str(CFG.get("download", {}).get("retries", 2)),
})


# Data that could not be had: a source recorded as unavailable is fetched again as soon as a run
# could succeed (the mirror now has it, or the network may be back): `fetch_source` takes how it
# could succeed as a param (dpclust.pipeline.status.fetch_attempts), so Snakemake re-runs it, and what reads
# it, exactly when that changed; a dry run lists those jobs and changes nothing. The datasets still
# missing are listed once, here, and in the final summary.
FETCH_ATTEMPTS = {}
if workflow.is_main_process:
    _sources = sorted({s for d in PLAN.datasets for s in REGISTRY.sources_for(d)})
    FETCH_ATTEMPTS = status.fetch_attempts(REGISTRY, _sources, f"{DATA}/raw", MIRROR)
    for _source, _why in status.retried_sources(FETCH_ATTEMPTS, f"{DATA}/raw").items():
        print(f"dpclust: dataset source {_source!r} was unavailable; {_why}: fetching it again", file=sys.stderr)
    _missing = status.unavailable_datasets(PLAN.datasets, DATA)
    if _missing:
        print(f"dpclust: {len(_missing)} dataset(s) were unavailable in the last run (their panels say "
              "\"data unavailable\"):", *status.unavailable_lines(_missing), sep="\n", file=sys.stderr)


onsuccess:
    print(status.final_summary(PLAN.datasets, DATA, f"{PLAN.summary_stem}.csv",
                               status.cost_line(STARTED, workflow.local_exec)), file=sys.stderr)
    if workflow.local_exec and not workflow.dryrun:
        # what this run cost, for the performance page (benchmarks/performance_page.py --add-run FILE)
        _cost = status.record_invocation("logs/invocations", STARTED, CFG.get("preset", "full"),
                                         git_commit(), f"{PLAN.summary_stem}.csv")
        print(f"  (recorded in {_cost})", file=sys.stderr)


onerror:
    print(f"dpclust: stopped with errors (see above); {status.cost_line(STARTED, workflow.local_exec)}",
          file=sys.stderr)


include: "workflow/rules/common.smk"
include: "workflow/rules/cluster.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/replicate.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    localrule: True
    input:
        # every final output; a table cut short (results/tables, results/checks) is made again
        [checked_intermediate(path) for path in PLAN.outputs],
        # every processed dataset the plan uses: a deleted or corrupt one is rebuilt (and, being
        # content-addressed, re-runs nothing when its content is unchanged)
        [processed(d) for d in PLAN.datasets],
        # every run and audit record: a deleted or damaged one is rebuilt (same seed, same released
        # outputs) and the items that read it are aggregated again
        [checked_intermediate(batch.path) for batch in PLAN.batches],
        [checked_intermediate(str(released_path(batch.path))) for batch in PLAN.batches],
        [checked_intermediate(job.path) for job in PLAN.audits],
        # every race's looks, decisions, look run records and final list, as far as the race ran
        race_intermediates,
