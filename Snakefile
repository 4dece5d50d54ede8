# dpclust: re-run the experiments of five papers on differentially private clustering.
#   snakemake --cores 8                                   full protocol (default config)
#   snakemake --cores 8 --configfile config/quick.yaml    every item, reduced, in minutes
#   snakemake --report report.html                        one HTML report with every figure/table
# Jobs are planned by dpclust.workflow from config/ (validated by workflow/schemas/).
import os
import shlex
import sys
from pathlib import Path

from snakemake.utils import min_version

from dpclust.codehash import code_hash
from dpclust.data import load_registry
from dpclust.pipeline import caption_text
from dpclust.workflow import function_module, load_config, plan

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config", "config.yaml")


CONFIG_DIR = Path(workflow.basedir) / "config"
CFG = load_config(CONFIG_DIR, base=config)
PLAN = plan(CFG)
REGISTRY = load_registry(CONFIG_DIR / "datasets.yaml")
# Params hold only what determines a result, never where things live: the config directory is
# given relative to the working directory, and jobs call the `python3` first on PATH, i.e. the
# interpreter running Snakemake (its directory goes first here) or, under `--sdm conda`, the
# activated environment's. Moving the project or switching interpreters re-runs nothing.
os.environ.update(PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
CONFIG_ARG = os.path.relpath(CONFIG_DIR)
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
include: "workflow/rules/cluster.smk"
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
