"""The audit rules in the Snakemake workflow (workflow/rules/audit.smk): a dry run of the test
preset plans one `audit_run` job per planned audit and aggregates the audit items with
`audit_aggregate` (never the run aggregate), and the audit jobs' params carry the spec and code hash."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.workflow]


def _dry_run(targets: list[str], configfile: str, workdir: Path) -> str:
    """`snakemake -n -p TARGETS --configfile config/CONFIGFILE` in `workdir`: its output (it must succeed)."""
    out = subprocess.run([sys.executable, "-m", "snakemake", *targets, "-s", str(REPO / "Snakefile"),
                          "-d", str(workdir), "-n", "-p", "--cores", "1",
                          "--workflow-profile", "none",   # the job blocks (profiles/default keeps them quiet)
                          "--configfile", str(REPO / "config" / configfile)],
                         capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO / "src"),
                              "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")},
                         cwd=workdir, timeout=600)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    return text


def test_dry_run_plans_the_audit_jobs(tmp_path):
    p = plan(load_config(REPO / "config", overrides={"preset": "test"}))
    audits = p.audits
    assert audits, "the test preset audits at least one algorithm"
    targets = ["results/test/tables/audit/audit.csv", "results/test/figures/audit/audit_figure.png",
               "results/test/checks/audit/audit.html"]
    text = _dry_run(targets, "test.yaml", tmp_path)
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", text, re.M))
    assert int(counts["audit_run"]) == len(audits)
    assert int(counts["audit_aggregate"]) == 2 and "aggregate" not in counts
    for job in audits:
        assert job.path in text
        assert "--code-hash" in text and f'"design":"{job.design}"' in text


def test_dry_run_plans_the_audit_variants_on_their_own_paths(tmp_path):
    """The `<design>.<variant>.json` audit records (n_from_data, power: dpclust.pipeline.audit_labels) match
    the audit rule's design wildcard and carry their own spec."""
    from dpclust.pipeline.audit_labels import N_FROM_DATA, VARIANTS

    p = plan(load_config(REPO / "config", overrides={"preset": "quick"}))
    variants = [j for j in p.audits if j.variant]
    assert {j.variant for j in variants} == set(VARIANTS)                    # n_from_data and power
    text = _dry_run([j.path for j in variants], "quick.yaml", tmp_path)
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", text, re.M))
    assert int(counts["audit_run"]) == len(variants)
    for job in variants:
        assert job.path in text and f"design={job.design}.{job.variant}" in text
    assert text.count('"public_n":null') >= sum(j.variant == N_FROM_DATA for j in variants)
