"""The workflow planned from a fresh copy of the project, without running it: the console, the
default (full) plan with Snakemake's linter, and the rule graph. Apart from tests/test_workflow_e2e.py
(one copy's life, in order) so that the suite's workers run them beside it."""
import re
import subprocess

import pytest
from tests.helpers import SNAKEMAKE, copy_project, project_env

from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan

pytestmark = [pytest.mark.slow]


def test_console_is_compact(tmp_path):
    """The repository's workflow profile (profiles/default) keeps each job's rule block (its params are
    whole resolved specs) off the console: a dry run of the test preset prints a few kB, not 300."""
    work = copy_project(tmp_path)
    args = [*SNAKEMAKE, "-s", str(work / "Snakefile"), "-d", str(work), "-n", "--cores", "2",
            "--configfile", str(work / "config" / "test.yaml")]
    quiet = subprocess.run(args, cwd=work, env=project_env(work), capture_output=True, text=True)
    loud = subprocess.run([*args, "--workflow-profile", "none"], cwd=work, env=project_env(work),
                          capture_output=True, text=True)
    assert quiet.returncode == 0 and loud.returncode == 0, quiet.stderr[-3000:] + loud.stderr[-3000:]
    text = quiet.stdout + quiet.stderr
    assert len(text) < 20_000 and max(map(len, text.splitlines())) < 400, text[:2000]
    assert re.search(r"^run\s+\d+$", text, re.M), "the job counts stay on the console"
    assert len(loud.stdout + loud.stderr) > 10 * len(text)   # what the profile keeps off the console


def test_default_config_plans_every_item_and_lints_clean(tmp_path):
    work = copy_project(tmp_path)
    out = subprocess.run([*SNAKEMAKE, "-s", str(work / "Snakefile"), "-d", str(work), "-n", "--cores", "8",
                          "--quiet", "rules"], cwd=work, env=project_env(work), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    p = plan(load_config(work / "config"))
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", out.stdout + out.stderr, re.M))
    assert int(counts.get("render", 0)) == len(p.items)
    # the job budget (docs/ARCHITECTURE.md): one run job per batch of blocks
    assert int(counts.get("run", 0)) == len(p.batches) <= 1500 and len(p.runs) > 3 * len(p.batches)
    lint = subprocess.run([*SNAKEMAKE, "-s", str(work / "Snakefile"), "-d", str(work), "--lint"], cwd=work,
                          env=project_env(work), capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_the_claim_summary_waits_for_every_data_checkpoint(tmp_path):
    """The summary reads every item's checks, but an item whose data change is re-planned only when
    its data checkpoint finishes; had the summary not waited for every data job, it could be written
    before that item's check re-ran and stay stale (seen in CI after setting the mirror). Its inputs
    therefore hold every processed record (ancient: they re-run nothing by themselves)."""
    work = copy_project(tmp_path)
    out = subprocess.run([*SNAKEMAKE, "-s", str(work / "Snakefile"), "-d", str(work), "--cores", "2",
                          "--workflow-profile", "none", "--configfile", str(work / "config" / "test.yaml"), "-n",
                          "--forceall", "--rulegraph"], cwd=work,
                         env=project_env(work), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    labels = dict(re.findall(r"^\s*(\d+)\[label = \"(\w+)\"", out.stdout, re.M))
    edges = {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", out.stdout, re.M)}
    assert ("check_claims", "summarize_claims") in edges
    assert ("prepare_dataset", "summarize_claims") in edges
