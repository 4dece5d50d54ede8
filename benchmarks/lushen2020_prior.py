"""Benchmark: 300 runs of Algorithm 1 (Prior) on S1 (5,000 × 2, k = 15) for one ε, on one core.

Target (issue 4): ≤ 30 s. Prints the measured wall time per run and in total, and the same for
Posterior. Uses the processed S1 from `--workdir` (prepared from the mirror when missing) with the
paper's minmax_01 transform, the configured algorithms' resolved settings (declared defaults and
the config's overrides), and ε_step = 0.5 (cap 50).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/lushen2020_prior.py [--runs 300] [--workdir /tmp/dpclust-bench]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def load_s1(workdir: Path) -> tuple[np.ndarray, list]:
    from dpclust.data import (
        apply_transform,
        fetch_source,
        load_processed,
        load_registry,
        prepare_dataset,
    )

    registry_path = REPO / "config" / "datasets.yaml"
    registry = load_registry(registry_path)
    out = workdir / "data" / "processed" / "s1.h5"
    if not out.exists():
        mirror = os.environ.get("DPCLUST_DATA_MIRROR") or str(REPO.parent / "shared" / "datasets")
        for source in registry.sources_for("s1"):
            fetch_source(source, raw_dir=workdir / "data" / "raw", mirror=mirror, registry=registry)
        prepare_dataset("s1", raw_dir=workdir / "data" / "raw", out_path=out, registry=registry)
    data = load_processed(str(out))
    X, bounds = apply_transform("minmax_01", data.X, registry.dataset("s1"))
    return np.ascontiguousarray(X, dtype=float), [float(bounds[0]), float(bounds[1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--epsilon", type=float, default=50.0, help="run cap (= 100 × ε_step)")
    parser.add_argument("--workdir", default="/tmp/dpclust-bench-lushen2020")
    args = parser.parse_args()
    from dpclust.lushen2020.algorithm import lushen
    from dpclust.pipeline.configuration import load_config, resolve_algorithm

    X, bounds = load_s1(Path(args.workdir))
    config = load_config(REPO / "config")
    print(f"S1: n={X.shape[0]} d={X.shape[1]} k=15, epsilon cap {args.epsilon} (ε_step {args.epsilon / 100:g}), "
          f"{args.runs} runs, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    for name in ("lushen2020.prior", "lushen2020.posterior"):
        for diagnose in (True, False):
            settings = dict(resolve_algorithm(config, name)["settings"], bounds=bounds, diagnose_lloyd=diagnose)
            iters = []
            start = time.perf_counter()
            for seed in range(args.runs):
                res = lushen(X, 15, args.epsilon, 0.0, np.random.default_rng(seed), dict(settings, init_seed=seed))
                iters.append(res.iterations)
            wall = time.perf_counter() - start
            print(f"{name:22s} diagnose_lloyd={diagnose!s:5s}: {wall:6.2f} s total, "
                  f"{1e3 * wall / args.runs:6.1f} ms/run, "
                  f"mean iterations {np.mean(iters):.2f}  (target ≤ 30 s for 300 runs: "
                  f"{'met' if wall * 300 / args.runs <= 30 else 'NOT met'})")


if __name__ == "__main__":
    main()
