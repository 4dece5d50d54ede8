"""The whole Snakemake workflow, from nothing, in a temporary copy of the repository.

* the test preset completes with every item's table, figure and checks, and the report builds;
* a second dry run has nothing to do, also after every source file got a new timestamp
  (a fresh checkout), without the data mirror and after moving the project, while editing one module re-runs exactly the jobs that depend on it;
* the default (full) config plans jobs for every item, and `snakemake --lint` is clean.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpclust.codehash import closure
from dpclust.workflow import function_module, load_config, plan

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.workflow]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def _copy_repo(dst: Path) -> Path:
    for name in ("Snakefile", "config", "workflow", "src", "pyproject.toml"):
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dst / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(src, dst / name)
    return dst


def _env(work: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(work / "src")
    env.pop("DPCLUST_DATA_MIRROR", None)
    return env


def _snakemake(work: Path, *args, check=True, timeout=1500):
    out = subprocess.run([*SNAKEMAKE, "-s", str(work / "Snakefile"), "-d", str(work), *args],
                         cwd=work, env=_env(work), capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{out.stdout[-4000:]}\n{out.stderr[-6000:]}")
    return out


def _job_counts(text: str) -> dict[str, int]:
    """Parse Snakemake's 'Job stats' table of a dry run."""
    counts = {}
    block = text.split("Job stats:", 1)[1] if "Job stats:" in text else ""
    for line in block.splitlines():
        m = re.match(r"^([A-Za-z_][\w]*)\s+(\d+)\s*$", line.strip())
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
    return counts


def _dry(work, *extra):
    out = _snakemake(work, "-n", "--cores", "2", *extra)
    return _job_counts(out.stdout + out.stderr), out.stdout + out.stderr


@pytest.fixture(scope="module")
def test_run(tmp_path_factory, mirror):
    work = _copy_repo(tmp_path_factory.mktemp("wf"))
    common = ["--configfile", str(work / "config" / "test.yaml"), "--config", f"data_mirror={mirror}"]
    _snakemake(work, "--cores", "2", *common)
    return work, common


def test_every_item_is_rendered_and_checked(test_run):
    work, _ = test_run
    config = load_config(work / "config", overrides={"preset": "test"})
    targets = plan(config).items
    assert {t.paper for t in targets} == set(config["papers"])
    for out in plan(config).outputs:
        path = work / out
        assert path.exists() and path.stat().st_size > 0, f"missing {out}"
    summary = (work / "results" / "checks" / "summary.csv").read_text()
    assert summary.count("\n") > len([t for t in targets if t.has_checks])  # a row per claim


def test_report_builds(test_run):
    work, common = test_run
    _snakemake(work, "--report", "report.html", *common)
    html = (work / "report.html").read_text(encoding="utf-8", errors="replace")
    assert "baselines" in html and len(html) > 100_000


def test_nothing_reruns_after_fresh_checkout_timestamps(test_run):
    work, common = test_run
    counts, text = _dry(work, *common)
    assert not counts, f"expected nothing to do, got {counts}\n{text[-2000:]}"
    for path in list((work / "src").rglob("*.py")) + list((work / "config").rglob("*.yaml")) + [work / "Snakefile"]:
        os.utime(path)  # a fresh checkout gives every file a new mtime
    counts, text = _dry(work, *common)
    assert not counts, f"new timestamps alone must not rerun anything, got {counts}"
    slow_net = work / "slow_net.yaml"
    slow_net.write_text("download: {timeout_s: 7, retries: 0}\n")
    counts, text = _dry(work, "--configfile", str(work / "config" / "test.yaml"), str(slow_net))
    assert not counts, f"unsetting the mirror or changing download settings must not re-fetch, got {counts}"


def test_moving_the_project_reruns_nothing(test_run, tmp_path_factory, mirror):
    work, _ = test_run
    moved = tmp_path_factory.mktemp("moved") / "elsewhere"
    shutil.copytree(work, moved, symlinks=True)  # copy2 keeps the timestamps, .snakemake included
    counts, text = _dry(moved, "--configfile", str(moved / "config" / "test.yaml"),
                        "--config", f"data_mirror={mirror}")
    assert not counts, f"a moved project must not rerun anything, got {counts}\n{text[-2000:]}"


def test_editing_a_module_reruns_exactly_its_dependents(test_run):
    work, common = test_run
    target = work / "src" / "dpclust" / "baseline_items.py"
    original = target.read_text()
    try:
        target.write_text(original + "\n# edited\n")
        counts, text = _dry(work, *common)
        assert "run" not in counts, f"editing item rendering must not rerun experiments: {counts}"
        assert counts.get("render", 0) >= 2 and counts.get("aggregate", 0) >= 2
    finally:
        target.write_text(original)
    target = work / "src" / "dpclust" / "workflow.py"  # the job planner
    original = target.read_text()
    try:
        target.write_text(original + "\n# edited\n")
        counts, _ = _dry(work, *common)
        assert "run" not in counts, f"editing the planner must not rerun experiments: {counts}"
    finally:
        target.write_text(original)
    config = load_config(work / "config", overrides={"preset": "test"})
    dependent = {name for name, e in config["algorithms"].items()
                 if "dpclust.baselines" in closure(function_module(e["function"]))}
    expected = sum(1 for j in plan(config).runs if j.algorithm in dependent)
    target = work / "src" / "dpclust" / "baselines.py"
    original = target.read_text()
    try:
        target.write_text(original + "\n# edited\n")
        counts, _ = _dry(work, *common)
        assert counts.get("run", 0) == expected > 0
    finally:
        target.write_text(original)


def test_default_config_plans_every_item_and_lints_clean(tmp_path):
    work = _copy_repo(tmp_path)
    out = _snakemake(work, "-n", "--cores", "8", "--quiet", "rules")
    config = load_config(work / "config")
    p = plan(config)
    assert len(p.runs) <= 5200, f"full default DAG has {len(p.runs)} run jobs"
    counts = _job_counts(out.stdout + out.stderr)
    assert counts.get("render") == len(p.items)
    lint = _snakemake(work, "--lint", check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
