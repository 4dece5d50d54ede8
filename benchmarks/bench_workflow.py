"""Benchmark: Snakemake planning time on the full default config, and per-job overhead.

    .venv/bin/python benchmarks/bench_workflow.py [--mirror ../shared/datasets]

Prints: number of planned jobs and the wall time of `snakemake -n` on the default config (target
≤ 15 s), and the overhead of one `python -m dpclust run` process (interpreter + imports + record
writing) against the same run in-process.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _child_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def dry_run_time() -> tuple[float, float, str]:
    """Wall and CPU seconds of `snakemake -n` on the default config (CPU is robust to machine load)."""
    cpu0, t = _child_cpu(), time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "8", "--quiet", "rules"],
                         cwd=REPO, capture_output=True, text=True)
    elapsed, cpu = time.perf_counter() - t, _child_cpu() - cpu0
    total = [line for line in (out.stdout + out.stderr).splitlines() if line.strip().startswith("total")]
    return elapsed, cpu, (total[0].strip() if total else out.stderr[-500:])


def job_overhead(mirror: str) -> tuple[float, float]:
    from dpclust.data import fetch_source, load_registry, prepare_dataset
    from dpclust.runner import RunRequest, run_block
    from dpclust.workflow import load_config

    tmp = Path(tempfile.mkdtemp())
    reg = load_registry(REPO / "config" / "datasets.yaml")
    for s in reg.sources_for("iris"):
        fetch_source(s, raw_dir=tmp / "raw", mirror=mirror, registry=reg)
    h5 = tmp / "iris.h5"
    prepare_dataset("iris", raw_dir=tmp / "raw", out_path=h5, registry=reg)
    args = [sys.executable, "-m", "dpclust", "run", "--dataset", "iris", "--algorithm", "baselines.lloyd",
            "--k", "3", "--epsilon", "none", "--transform", "minmax_01", "--data", str(h5),
            "--config-dir", str(REPO / "config"), "--out", str(tmp / "r.json")]
    times, cpus = [], []
    for _ in range(5):
        cpu0, t = _child_cpu(), time.perf_counter()
        subprocess.run(args, check=True, cwd=REPO)
        times.append(time.perf_counter() - t)
        cpus.append(_child_cpu() - cpu0)
    config = load_config(REPO / "config")
    req = RunRequest(dataset="iris", algorithm="baselines.lloyd", k=3, epsilon=None, seeds=[0],
                     data_path=str(h5), transform="minmax_01")
    t = time.perf_counter()
    for _ in range(5):
        run_block(req, config["algorithms"])
    return min(times), min(cpus), (time.perf_counter() - t) / 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default=str(REPO.parent / "shared" / "datasets"))
    args = ap.parse_args()
    elapsed, cpu, total = dry_run_time()
    print(f"snakemake -n (default config): {elapsed:.1f} s wall, {cpu:.1f} s CPU; {total}  (target <= 15 s)")
    proc, proc_cpu, inproc = job_overhead(args.mirror)
    print(f"one `python -m dpclust run` process: {proc:.2f} s wall, {proc_cpu:.2f} s CPU; same run in-process: "
          f"{inproc * 1000:.1f} ms; per-job overhead ~{proc - inproc:.2f} s")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
