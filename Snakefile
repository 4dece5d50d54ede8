# dpclust: re-run the experiments of five papers on differentially private clustering.
#   snakemake --cores 8                                   full protocol (default config)
#   snakemake --cores 8 --configfile config/quick.yaml    every item, reduced, in minutes
#   snakemake --report report.html [--configfile ...]     one HTML report with every figure/table
# Jobs are planned by dpclust.workflow from config/ (validated by workflow/schemas/). Every value a
# job depends on reaches it as a param (a resolved spec) or a planned input; no job reads config/.
import os
import sys
from pathlib import Path

from snakemake.utils import min_version

from dpclust.workflow import load_config, plan

min_version("9.0")


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
RESULTS = CFG["results_dir"]
MIRROR = CFG.get("data_mirror") or os.environ.get("DPCLUST_DATA_MIRROR", "")
# Where raw files come from (mirror or canonical URL) and how patiently they are downloaded are not
# part of what they are (checksums are verified), so these reach the fetch jobs through the
# environment, not params: changing or unsetting them never re-runs a fetch and everything after it.
os.environ.update({
    "DPCLUST_DATA_MIRROR": MIRROR,
    "DPCLUST_DOWNLOAD_TIMEOUT": str(CFG.get("download", {}).get("timeout_s", 60)),
    "DPCLUST_DOWNLOAD_RETRIES": str(CFG.get("download", {}).get("retries", 2)),
})


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    localrule: True
    input:
        PLAN.outputs,
        # every processed dataset the plan uses: a deleted or corrupt one is rebuilt (and, being
        # content-addressed, re-runs nothing when its content is unchanged)
        [processed(d) for d in PLAN.datasets],
