"""Benchmark: dpclust's Lloyd vs scikit-learn's KMeans(algorithm="lloyd") with the same init and
iteration count, on MNIST-size data (70,000 × 784). Target: time ratio dpclust / sklearn ≤ 1.0.

    .venv/bin/python benchmarks/bench_lloyd.py [--k 10] [--iters 20] [--threads 1]

Uses the real MNIST (data/processed/mnist70k.h5) when present, else random data of that shape.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np


def load_data(path: Path) -> tuple[np.ndarray, str]:
    if path.exists():
        from dpclust.data import load_processed

        return load_processed(str(path)).X, "MNIST 70k x 784 (processed)"
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(70_000, 784)).astype(float), "random 70k x 784"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads for both")
    ap.add_argument("--data", default="data/processed/mnist70k.h5")
    args = ap.parse_args()
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    from dpclust.baselines import lloyd

    X, what = load_data(Path(args.data))
    init = X[np.random.default_rng(1).choice(len(X), args.k, replace=False)]
    times = {"dpclust": [], "sklearn": []}
    with threadpool_limits(args.threads):
        for _ in range(args.repeats):
            t = time.perf_counter()
            ours = lloyd(X, init, max_iter=args.iters, tol=-1.0)  # tol < 0: exactly `iters` iterations
            times["dpclust"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ref = KMeans(args.k, init=init, n_init=1, max_iter=args.iters, tol=0.0, algorithm="lloyd").fit(X)
            times["sklearn"].append(time.perf_counter() - t)
    ours_t, ref_t = min(times["dpclust"]), min(times["sklearn"])
    print(f"data: {what}; k={args.k}; iterations={args.iters} (sklearn ran {ref.n_iter_}); threads={args.threads}")
    print(f"dpclust lloyd: {ours_t:.3f} s   sklearn KMeans(lloyd): {ref_t:.3f} s   "
          f"ratio {ours_t / ref_t:.2f} (target <= 1.0)")
    print(f"cost dpclust {ours.cost:.6g}  sklearn {ref.inertia_:.6g}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
