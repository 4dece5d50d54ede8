"""The workflow on a real SLURM cluster: a single-node cluster on localhost (scripts/local-slurm.sh).

One item of the test preset (13 run jobs) runs through `--profile profiles/slurm`, as shipped, in
one temporary copy of the repository and, at the same time, locally (`--cores 1`) in another; then:
* only run jobs went to SLURM, in exactly the planned bundles (dpclust.pipeline.cluster_resources.bundle_ids;
  fewer SLURM jobs than run jobs), each bundle asking for 1 CPU, the sum of its jobs'
  runtimes and the largest of their memories (dpclust.pipeline.cluster_resources);
* every run record and table equals the local run's, wall-time fields aside.

Needs Linux and root (skipped otherwise, saying so); installs the Debian packages with apt-get if
missing (~15 s) and is skipped, with apt-get's last words, only if they cannot be installed.
Runs last (tests/conftest.py): the cluster is stopped afterwards and its slurm.conf put aside, so
later `snakemake` calls do not stall on the SLURM plugin's `scontrol` probe.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from tests.helpers import copy_project

from dpclust.pipeline import cluster_resources
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "local-slurm.sh"
TARGETS = ["results/test/tables/su2016/fig2.csv"]  # 13 run jobs: every run job of two synthetic datasets
WALL_FIELDS = {"wall_time_s", "wall_mean_s", "wall_median_s"}
PACKAGE_BINARIES = ("slurmctld", "slurmd", "sbatch", "munged")
TIMEOUT_S = 420  # per Snakemake run; both take 1-3 min on a loaded 2-core machine


def _skip_reason() -> str | None:
    if not sys.platform.startswith("linux"):
        return "a local SLURM cluster needs Linux"
    if os.geteuid() != 0:
        return "starting a local SLURM cluster needs root (apt-get, munge and SLURM daemons)"
    return None


def _installed() -> bool:
    return all(shutil.which(b) or Path("/usr/sbin", b).exists() for b in PACKAGE_BINARIES)


pytestmark = [
    pytest.mark.slurm, pytest.mark.slow, pytest.mark.workflow,
    pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or ""),
]


def _sh(*args, timeout=600, check=True):
    out = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"local-slurm.sh {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
    return out


@pytest.fixture(scope="module")
def cluster():
    """The local cluster, started (and packages installed) unless it is already up; stopped after."""
    t0 = time.perf_counter()
    if not _installed():  # the one reason to skip: the SLURM binaries cannot be had here
        out = _sh("install", check=False)
        if out.returncode != 0 or not _installed():
            pytest.skip("the SLURM binaries (Debian slurmctld, slurmd, slurm-client, munge) could not be "
                        f"installed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
    was_up = "slurmctld: running" in _sh("status", check=False).stdout
    _sh("up")
    info = {"start_s": time.perf_counter() - t0, "was_up": was_up, "run_ids": []}
    try:
        yield info
    finally:
        for run_id in info["run_ids"]:  # our jobs, should any be left (a failed or timed-out run)
            subprocess.run(["scancel", "--name", run_id], capture_output=True, timeout=60)
        if not was_up:
            _sh("down", check=False, timeout=120)


def _snakemake(work: Path, mirror: Path, *args, timeout: float, run_ids: list | None = None):
    """Run Snakemake on TARGETS in `work`; the SLURM run IDs it prints go to `run_ids` (for scancel)."""
    env = dict(os.environ, PYTHONPATH=str(work / "src"), DPCLUST_DATA_MIRROR=str(mirror))
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-m", "snakemake", *TARGETS, "--configfile",
                              str(work / "config" / "test.yaml"), *args],
                             cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        log, code = out.stdout + out.stderr, out.returncode
    except subprocess.TimeoutExpired as exc:
        parts = [p.decode(errors="replace") if isinstance(p, bytes) else (p or "") for p in (exc.stdout, exc.stderr)]
        log, code = "".join(parts) + f"\n(killed after {timeout} s)", None
    elapsed = time.perf_counter() - t0
    if run_ids is not None:
        run_ids.extend(re.findall(r"SLURM run ID: (\S+)", log))
    if code != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{log[-10000:]}")
    return log, elapsed


def _records(work: Path) -> dict[str, dict]:
    def strip(obj):
        if isinstance(obj, dict):
            return {k: strip(v) for k, v in obj.items() if k not in WALL_FIELDS}
        if isinstance(obj, list):
            return [strip(v) for v in obj]
        return obj

    root = work / "results" / "test" / "runs"
    return {str(p.relative_to(root)): strip(json.loads(p.read_text())) for p in sorted(root.rglob("*.json"))
            if not p.name.endswith(".released.json")}   # the records, not their publishable views


def _without_wall(table: pd.DataFrame) -> pd.DataFrame:
    """A table without timing: wall-time columns, and the rows of tidy tables whose metric is one."""
    def timing(name) -> bool:
        return name in WALL_FIELDS or str(name).startswith("wall_")  # e.g. su2016 Fig. 2's wall_log_mean

    if "metric" in table.columns:
        table = table[~table["metric"].map(timing)]
    return table.drop(columns=[c for c in table.columns if timing(c)]).reset_index(drop=True)


def _slurm_jobs(run_id: str) -> list[dict]:
    """The cluster's view of one Snakemake run's jobs (squeue keeps finished jobs for MinJobAge)."""
    out = subprocess.run(["squeue", "--states=all", "--noheader", "--name", run_id,
                          "--format=%i|%T|%C|%l|%m"], capture_output=True, text=True, timeout=60, check=True)
    jobs = []
    for line in out.stdout.split():
        jobid, state, cpus, limit, mem = line.split("|")
        jobs.append({"id": jobid, "state": state, "cpus": int(cpus), "limit_min": _minutes(limit),
                     "mem_mb": _megabytes(mem)})
    return jobs


def _minutes(limit: str) -> int:
    days, _, hms = limit.rpartition("-")
    parts = [int(p) for p in hms.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts
    return (int(days or 0) * 24 + h) * 60 + m + (1 if s else 0)


def _megabytes(mem: str) -> int:
    unit = mem[-1].upper()
    if unit.isdigit():
        return int(mem)
    return int(float(mem[:-1]) * {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 ** 2}[unit])


def _profile_bundle_size() -> int:
    text = (REPO / "profiles" / "slurm" / "config.yaml").read_text()
    return int(re.search(r"^\s*-\s*runs=(\d+)\s*$", text, re.M).group(1))


def test_test_items_run_bundled_on_slurm_with_local_results(cluster, tmp_path_factory, mirror, capsys):
    work_local = copy_project(tmp_path_factory.mktemp("local"))
    work_slurm = copy_project(tmp_path_factory.mktemp("slurm"))
    the_plan = plan(load_config(work_slurm / "config", overrides={"preset": "test"}))
    items = [the_plan.item(*t.removeprefix("results/test/tables/").removesuffix(".csv").split("/")) for t in TARGETS]
    run_jobs = {path: the_plan.run(path) for item in items for path in item.run_files}  # batches
    # The bundles the profile forms (dpclust.pipeline.cluster_resources.bundle_ids over the whole plan), as far
    # as they hold jobs of TARGETS
    bundle_of = cluster_resources.bundle_ids(the_plan.batches, _profile_bundle_size())
    bundles: dict[str, list] = {}
    for path, job in run_jobs.items():
        bundles.setdefault(bundle_of[path], []).append(job)

    # Both at once: the SLURM run mostly waits (submission, status polls), the local one computes.
    with ThreadPoolExecutor(max_workers=2) as pool:
        slurm = pool.submit(_snakemake, work_slurm, mirror, "--profile", "profiles/slurm",
                            "--slurm-init-seconds-before-status-checks", "2", timeout=TIMEOUT_S,
                            run_ids=cluster["run_ids"])
        local = pool.submit(_snakemake, work_local, mirror, "--cores", "1", timeout=TIMEOUT_S)
        log, slurm_s = slurm.result()
        _, local_s = local.result()

    assert len(cluster["run_ids"]) == 1, log[-4000:]
    run_id = cluster["run_ids"][0]
    submitted = dict(re.findall(r"has been submitted with SLURM jobid (\d+) \(log: .*?/slurm_logs/([^/]+)/", log))
    jobs = {j["id"]: j for j in _slurm_jobs(run_id)}
    with capsys.disabled():
        print(f"\nlocal SLURM cluster: up in {cluster['start_s']:.1f} s; {len(run_jobs)} run jobs: local --cores 1 "
              f"{local_s:.1f} s, SLURM {slurm_s:.1f} s in {len(jobs)} SLURM jobs (side by side)")

    # Only run jobs were submitted, in the planned bundles; the cluster saw exactly those, all completed.
    assert all(re.fullmatch(r"group_runs_.+_run", kind) for kind in submitted.values()), \
        f"jobs other than run bundles went to SLURM: {sorted(set(submitted.values()))}"
    assert sorted(submitted.values()) == sorted(f"group_{b}_run" for b in bundles), (submitted, sorted(bundles))
    assert sorted(jobs) == sorted(submitted)
    assert all(j["state"] == "COMPLETED" for j in jobs.values()), jobs
    assert 0 < len(jobs) < len(run_jobs), f"{len(jobs)} SLURM jobs for {len(run_jobs)} run jobs"
    # Each bundle: one CPU, its jobs' runtimes summed (in series), the largest of their memories.
    for jobid, kind in submitted.items():
        members = bundles[kind.removeprefix("group_").removesuffix("_run")]
        want = (1, sum(cluster_resources.runtime_min(r) for r in members),
                max(cluster_resources.mem_mb(r) for r in members))
        got = jobs[jobid]
        assert (got["cpus"], got["limit_min"], got["mem_mb"]) == want, (kind, got, want)

    # Same results as the local run, wall times aside.
    local_records, slurm_records = _records(work_local), _records(work_slurm)
    assert len(slurm_records) == len(run_jobs) and slurm_records.keys() == local_records.keys()
    for name, record in slurm_records.items():
        assert record == local_records[name], f"run record {name} differs"
    for target in TARGETS:
        a, b = _without_wall(pd.read_csv(work_local / target)), _without_wall(pd.read_csv(work_slurm / target))
        assert len(a) > 0
        pd.testing.assert_frame_equal(a, b, check_exact=True)
