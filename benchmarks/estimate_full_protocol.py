"""Estimate what the full protocol (the default config) costs on this machine, before running it.

    .venv/bin/python benchmarks/estimate_full_protocol.py --mirror ../shared/datasets [--all-datasets]
        [--preset full] [--budget-s 0.5] [--top 15] [--data-dir DIR]

For every (algorithm, dataset, transform, k, settings) the blocks of the plan use, the script times
a sample of real runs (a block's own spec at its middle ε, one process, one thread, data loaded once
per dataset as a run job does) and extrapolates to every seed of every block that shares it, adding
the measured process overhead once per run job (a batch of blocks, shared by the groups it runs).
It prints a line per sample as it goes. It prints the estimated
CPU-hours and the wall time on 2 and 8 cores, and the groups that cost most.

Datasets that cannot be had offline are skipped, unless `--all-datasets` is given: they are then
timed on a stand-in of the registry's n × d drawn uniformly in the public box (timing only; such
data never reach a result). Numbers are estimates: runs whose cost depends on the data's structure
(convergence) may differ on the real data.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _prepare(config, names, data_dir: Path, mirror: str | None, all_datasets: bool) -> dict[str, str]:
    """Processed files of the datasets (prepared from the mirror when missing); stand-ins for the
    unavailable ones with --all-datasets."""
    from dpclust.data import fetch_source, prepare_dataset
    from dpclust.data.processed import write_processed
    from dpclust.data.store import content_id

    registry = config["registry"]
    paths = {}
    for name in sorted(names):
        out = data_dir / "processed" / f"{name}.h5"
        if not out.exists():
            for source in registry.sources_for(name):
                if not (data_dir / "raw" / source / "manifest.json").exists():
                    fetch_source(source, raw_dir=data_dir / "raw", mirror=mirror, registry=registry, log=lambda _: None)
            prepare_dataset(name, raw_dir=data_dir / "raw", out_path=out, registry=registry, log=lambda _: None)
        if content_id(out).startswith("unavailable"):
            if not all_datasets:
                continue
            entry = registry.dataset(name)
            standin = data_dir / "standin" / f"{name}.h5"
            if not standin.exists():
                lo, hi = entry.get("bounds") or [0.0, 1.0]
                n, d = int(entry["n"]), int(entry["d"])
                rng = np.random.default_rng(0)
                X = np.concatenate([rng.uniform(lo, hi, size=(min(n - i, 1_000_000), d))
                                    for i in range(0, n, 1_000_000)])
                write_processed(standin, X, None, {"name": name, "source": "stand-in (timing only)"})
            paths[name] = str(standin)
            continue
        paths[name] = str(out)
    return paths


def _process_overhead(spec: dict, data: str) -> float:
    """Seconds one `python -m dpclust run` process costs beyond its runs (interpreter, imports, I/O)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "dpclust", "run", "--spec", json.dumps(dict(spec, seeds=[0, 1])),
               "--data", data, "--allow-unavailable", "--out", str(out)]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        total = time.perf_counter() - t
        runs = sum(r["wall_time_s"] for r in json.loads(out.read_text())["runs"])
    return max(0.0, total - runs)


def _sample_key(spec: dict) -> tuple:
    """What a run's cost depends on: the algorithm, the data (and its transform), k and the settings.
    Items that run the same (algorithm, dataset, k, settings) at other ε or seeds share one sample."""
    return (spec["function"], spec["dataset"], spec["transform"], int(spec["k"]),
            json.dumps(spec["settings"], sort_keys=True))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("DPCLUST_DATA_MIRROR"))
    parser.add_argument("--preset", default="full", choices=["full", "quick", "test"])
    parser.add_argument("--all-datasets", action="store_true", help="time unavailable datasets on stand-ins")
    parser.add_argument("--budget-s", type=float, default=0.5, help="seconds of sampled runs per sample key")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--data-dir", default=None, help="where processed files are (default: a temp dir)")
    parser.add_argument("--json", default=None, help="also write the per-group estimates here")
    parser.add_argument("--quiet", action="store_true", help="no line per sampled key")
    args = parser.parse_args(argv)

    from dpclust.runner import run_spec
    from dpclust.workflow import load_config, plan

    config = load_config(REPO / "config", overrides={"preset": args.preset})
    the_plan = plan(config)
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="dpclust-estimate-"))
    paths = _prepare(config, the_plan.datasets, data_dir, args.mirror, args.all_datasets)
    groups: dict[tuple, list] = defaultdict(list)
    for job in the_plan.runs:
        groups[(job.paper, job.item, job.algorithm, job.dataset, job.k)].append(job)
    # one process per run job (a batch of blocks, dpclust.workflow.RunBatch): its start-up is shared
    # by the groups whose blocks it runs
    groups_of_batch: dict[str, set] = defaultdict(set)
    for key, jobs in groups.items():
        for job in jobs:
            groups_of_batch[job.path].add(key)
    # one timing sample per (algorithm, data, k, settings), at the middle ε of its blocks
    by_key: dict[tuple, list] = defaultdict(list)
    for job in the_plan.runs:
        if job.dataset in paths:
            by_key[_sample_key(job.spec)].append(job)
    overhead = None
    warm: set[str] = set()
    loaded: dict[tuple, dict] = {}  # data loaded once per (dataset, transform), as a batch does
    per_seed: dict[tuple, float] = {}
    t_start = time.perf_counter()
    sampled_cpu = 0.0
    for i, (key, jobs) in enumerate(sorted(by_key.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][3]))):
        jobs = sorted(jobs, key=lambda j: (j.epsilon is None, j.epsilon or 0.0))
        spec = jobs[len(jobs) // 2].spec
        data = paths[spec["dataset"]]
        cache = loaded.setdefault((spec["dataset"], spec["transform"]), {})
        if overhead is None:
            overhead = _process_overhead(spec, data)
        start, count = spec["seeds"]
        if spec["function"] not in warm:  # first use: pays one-off imports, not timed
            run_spec(dict(spec, seeds=[start, 1]), data, _loaded=cache)
            warm.add(spec["function"])
        timed, n_timed = 0.0, 0
        while n_timed < count and (n_timed == 0 or timed < args.budget_s):
            rec = run_spec(dict(spec, seeds=[start + n_timed, 1]), data, _loaded=cache)
            timed += sum(r["wall_time_s"] for r in rec["runs"])
            n_timed += 1
        per_seed[key] = timed / n_timed
        seeds = sum(j.seed_count for j in by_key[key])
        sampled_cpu += per_seed[key] * seeds
        if not args.quiet:
            print(f"[{i + 1}/{len(by_key)} {time.perf_counter() - t_start:5.0f} s] {key[0].rsplit('.', 1)[-1]} "
                  f"{key[1]} k={key[3]}: {per_seed[key]:.4f} s/run x {seeds} = {per_seed[key] * seeds / 60:.1f} "
                  f"CPU-min (running total {sampled_cpu / 3600:.2f} CPU-h)", flush=True)
        if len(loaded) > 2:  # keep the memory of a few datasets only
            loaded.pop(next(iter(loaded)))
    rows = []
    for key, jobs in sorted(groups.items()):
        seeds = sum(j.seed_count for j in jobs)
        if key[3] not in paths:
            rows.append({"group": key, "jobs": len(jobs), "seeds": seeds, "cpu_s": 0.0, "skipped": True})
            continue
        runs = sum(per_seed[_sample_key(j.spec)] * j.seed_count for j in jobs)
        cpu = runs + (overhead or 0.0) * sum(1 / len(groups_of_batch[p]) for p in {j.path for j in jobs})
        rows.append({"group": key, "jobs": len(jobs), "seeds": seeds, "per_seed_s": runs / seeds, "cpu_s": cpu,
                     "skipped": False})
    total = sum(r["cpu_s"] for r in rows)
    skipped = sorted({r["group"][3] for r in rows if r["skipped"]})
    print(f"\npreset {args.preset}: {len(the_plan.batches)} run jobs ({len(the_plan.runs)} blocks) in {len(groups)} groups; "
          f"{len(by_key)} timing samples in {time.perf_counter() - t_start:.0f} s; per-job process overhead "
          f"{overhead or 0:.2f} s")
    if skipped:
        print(f"skipped (data unavailable here; use --all-datasets for stand-ins): {', '.join(skipped)}")
    print(f"estimated run CPU time: {total / 3600:.2f} CPU-hours; wall ≈ {total / 2 / 60:.0f} min on 2 cores, "
          f"{total / 8 / 60:.0f} min on 8 cores (run jobs only)")
    by_algorithm: dict[str, float] = defaultdict(float)
    for r in rows:
        by_algorithm[r["group"][2]] += r["cpu_s"]
    print("\nby algorithm: CPU minutes, share")
    for name, cpu in sorted(by_algorithm.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {name:30s} {cpu / 60:8.1f}  {100 * cpu / max(total, 1e-9):5.1f}%")
    print(f"\ntop {args.top} groups (paper, item, algorithm, dataset, k): CPU minutes, share")
    for r in sorted(rows, key=lambda r: -r["cpu_s"])[: args.top]:
        print(f"  {'/'.join(map(str, r['group'])):70s} {r['cpu_s'] / 60:8.1f}  {100 * r['cpu_s'] / max(total, 1e-9):5.1f}%"
              f"  ({r['jobs']} jobs, {r['seeds']} runs, {r.get('per_seed_s', 0):.3f} s/run)")
    if args.json:
        Path(args.json).write_text(json.dumps([dict(r, group=list(r["group"])) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
