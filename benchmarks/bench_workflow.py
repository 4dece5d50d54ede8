"""Benchmark: Snakemake planning time on the full default config, and what a run job's process costs.

    .venv/bin/python benchmarks/bench_workflow.py [--mirror ../shared/datasets] [--repeat 3]

Prints:
* the wall and CPU time of `snakemake -n --quiet rules` on the default config (target ≤ 10 s), the
  number of jobs, and the time of parsing the workflow alone (`--list-rules`);
* the overhead of one `python -m dpclust.pipeline run` process (interpreter, imports, record writing) over
  the same runs in-process, and the ratio of running the blocks of one batch as one process
  (the layout: `dpclust.pipeline.run_plan.RunBatch`) against one process per block (the layout before).
"""
from __future__ import annotations

import argparse
import json
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


def _timed(cmd: list[str], **kw) -> tuple[float, float, subprocess.CompletedProcess]:
    cpu0, t = _child_cpu(), time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return time.perf_counter() - t, _child_cpu() - cpu0, out


def dry_run_time(repeat: int) -> tuple[float, float, float, str]:
    """Best wall and CPU seconds of `snakemake -n` on the default config, and of parsing alone."""
    runs = [_timed([sys.executable, "-m", "snakemake", "-n", "--cores", "8", "--quiet", "rules"], cwd=REPO)
            for _ in range(repeat)]
    parse = min(_timed([sys.executable, "-m", "snakemake", "--list-rules"], cwd=REPO)[0] for _ in range(repeat))
    text = runs[0][2].stdout + runs[0][2].stderr
    total = [line.strip() for line in text.splitlines() if line.strip().startswith(("total", "run "))]
    return min(r[0] for r in runs), min(r[1] for r in runs), parse, "; ".join(dict.fromkeys(total)) or text[-500:]


def batch_against_blocks(mirror: str) -> tuple[float, float, float]:
    """Wall seconds of one batch of 8 blocks as one process, as 8 processes, and in-process."""
    from dpclust.data import fetch_source, load_registry, prepare_dataset
    from dpclust.pipeline.configuration import load_config, run_spec_for
    from dpclust.pipeline.run_job import run_batch

    tmp = Path(tempfile.mkdtemp())
    reg = load_registry(REPO / "config" / "datasets.yaml")
    for s in reg.sources_for("iris"):
        fetch_source(s, raw_dir=tmp / "raw", mirror=mirror, registry=reg)
    h5 = tmp / "processed" / "iris.h5"
    prepare_dataset("iris", raw_dir=tmp / "raw", out_path=h5, registry=reg)
    config = load_config(REPO / "config")
    cells = [(k, eps) for k in (2, 3, 4, 5) for eps in (0.5, 1.0)]
    specs = [run_spec_for(config, "iris", "su2016.dplloyd", k, eps, seeds=(0, 5), transform="minmax_pm1")
             for k, eps in cells]
    shared = {key: v for key, v in specs[0].items() if key not in ("dataset", "dataset_entry", "k", "epsilon", "seeds")}
    batch = {"spec": shared, "entries": {"iris": specs[0]["dataset_entry"]},
             "cells": [["iris", s["k"], s["epsilon"], 0, 5] for s in specs]}
    base = [sys.executable, "-m", "dpclust.pipeline", "run", "--data-dir", str(tmp), "--out"]
    one = _timed([*base, str(tmp / "batch.json"), "--spec", json.dumps(batch)], cwd=REPO, check=True)[0]
    each = sum(_timed([*base, str(tmp / f"b{i}.json"), "--spec", json.dumps(s)], cwd=REPO, check=True)[0]
               for i, s in enumerate(specs))
    t = time.perf_counter()
    run_batch(batch, {"iris": str(h5)})
    inproc = time.perf_counter() - t
    return one, each, inproc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default=str(REPO.parent / "shared" / "datasets"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    elapsed, cpu, parse, total = dry_run_time(args.repeat)
    print(f"snakemake -n (default config): {elapsed:.1f} s wall, {cpu:.1f} s CPU (best of {args.repeat}; "
          f"target <= 10 s); parsing alone {parse:.1f} s; {total}")
    one, each, inproc = batch_against_blocks(args.mirror)
    print(f"8 blocks of DPLloyd on Iris: one batch process {one:.2f} s, one process per block {each:.2f} s "
          f"(ratio {each / one:.1f}x); in-process {inproc:.2f} s, so a process costs ~{(one - inproc):.2f} s")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
