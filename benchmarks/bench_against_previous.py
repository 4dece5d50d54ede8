"""Benchmark speed-ups as ratios against an earlier commit, in one run: real blocks of the full
protocol (the planned run specs, a middle ε) run through the runner of each implementation, in a
child process of its own (`PYTHONPATH` = that commit's `src/`), best of a few repetitions; the two
records must be the same bytes (centres and costs; wall times and versions aside).

    .venv/bin/python benchmarks/bench_against_previous.py [--previous COMMIT] [--data-dir DIR]
        [--cell ALGORITHM:DATASET:K ...] [--seeds 20] [--repeats 3]

The default cells are where the full protocol spends most (benchmarks/estimate_full_protocol.py).
Processed files come from --data-dir (the workflow's data/processed or the estimator's).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from previous import previous_src

REPO = Path(__file__).resolve().parents[1]
CELLS = ["su2016.dplloyd:adult_num:5", "su2016.dplloyd:s1:15", "su2016.dplloyd:su_synth_k5_d5:5",
         "su2016.gkm:adult_num:5", "su2016.gkm3k:adult_num:5", "leaderboard.gkm3k:balcan_synth:16",
         "lushen2020.prior:mnist70k:10", "lushen2020.posterior:mnist70k:10", "leaderboard.pgkm:mnist70k:10",
         "leaderboard.privgene:mnist70k:10", "leaderboard.dwork:mnist70k:10", "leaderboard.ours_authors:shuttle:10",
         "balcan2017.balcan_kmedian:skin:20"]

CHILD = r"""
import hashlib, json, sys, time
from dpclust.pipeline.run_job import run_spec
spec, data, repeats = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
loaded = {}
run_spec(dict(spec, seeds=[spec["seeds"][0], 1]), data, _loaded=loaded)   # warm: imports, data
best = float("inf")
for _ in range(repeats):
    t = time.perf_counter()
    rec = run_spec(spec, data, _loaded=loaded)
    best = min(best, time.perf_counter() - t)
for r in rec["runs"]:
    r.pop("wall_time_s", None)
for key in ("git_commit", "versions", "dpclust_version"):
    rec.pop(key, None)
digest = hashlib.sha256(json.dumps(rec, sort_keys=True).encode()).hexdigest()
print(json.dumps({"seconds": best, "digest": digest, "runs": len(rec["runs"])}))
"""


def _spec(the_plan, cell: str, seeds: int) -> dict | None:
    name, dataset, k = cell.split(":")
    alg_ok = (lambda j: j.algorithm == name) if "." in name and not name.startswith("leaderboard.") else \
        (lambda j: j.paper == "leaderboard" and j.algorithm.split(".")[-1] == name.split(".")[-1])
    jobs = sorted((j for j in the_plan.runs if alg_ok(j) and j.dataset == dataset and j.k == int(k)),
                  key=lambda j: (j.item, j.epsilon or 0.0))
    if not jobs:
        return None
    spec = jobs[len(jobs) // 2].spec
    return dict(spec, seeds=[spec["seeds"][0], min(seeds, spec["seeds"][1])])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--previous", default="d2fb5e7", help="commit of the implementation to compare with")
    ap.add_argument("--data-dir", default="data/processed")
    ap.add_argument("--cell", action="append", help="ALGORITHM:DATASET:K (repeatable; default: the costliest)")
    ap.add_argument("--seeds", type=int, default=20, help="runs per cell (at most the block's)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    the_plan = plan(load_config(REPO / "config"))
    old_src, now_src = previous_src(args.previous), str(REPO / "src")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    print(f"best of {args.repeats}, one thread: previous ({args.previous}) vs now; same bytes = same records")
    failed = False
    for cell in args.cell or CELLS:
        spec = _spec(the_plan, cell, args.seeds)
        data = Path(args.data_dir) / f"{cell.split(':')[1]}.h5"
        if spec is None or not data.exists():
            print(f"  {cell}: {'not in the plan' if spec is None else f'no {data}'}, skipped")
            continue
        out = {}
        for label, src in (("previous", old_src), ("now", now_src)):
            res = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec), str(data), str(args.repeats)],
                                 env=dict(env, PYTHONPATH=src), check=True, capture_output=True, text=True)
            out[label] = json.loads(res.stdout.strip().splitlines()[-1])
        a, b = out["previous"]["seconds"], out["now"]["seconds"]
        same = out["previous"]["digest"] == out["now"]["digest"]
        failed |= not same
        n = out["now"]["runs"]
        print(f"  {cell:36s} {n:3d} runs: {a / n:8.4f} -> {b / n:8.4f} s per run  ratio {a / b:5.2f}x  "
              f"same bytes: {same}", flush=True)
    if failed:
        raise SystemExit("different bytes: a speed-up changed a result")


if __name__ == "__main__":
    main()
