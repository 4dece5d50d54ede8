"""Benchmark: the two ways `dpclust.metrics.cluster_sums_in_order` forms per-cluster sums, one
compiled pass over the rows (`_sums_by_label`; one bincount per coordinate before 2167f99) vs one
sparse one-hot product, over the shapes of the offline datasets and
a sweep of d (random data, labels from k = 10 random centres), in one run; both must give the same
bytes. The measured crossover is `metrics.SPARSE_SUMS_MIN_D` (Lu & Shen's Algorithm 1 and Su et
al.'s DPLloyd take their sums from it).

    .venv/bin/python benchmarks/bench_cluster_sums.py [--repeats 7]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from dpclust import metrics

#: (n, d): Iris, S1, Birch2, Adult-num, Shuttle, Skin, Su et al.'s synthetic, Nguyen et al.'s and
#: Balcan et al.'s synthetic, MNIST; then a sweep of d at MNIST's n.
SHAPES = [(150, 4), (5000, 2), (12000, 2), (48842, 6), (58000, 9), (245057, 3), (10000, 10), (50000, 100),
          (100000, 100), (70000, 784)] + [(70000, d) for d in (32, 64, 128, 256, 512)]


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    threshold = metrics.SPARSE_SUMS_MIN_D
    print(f"SPARSE_SUMS_MIN_D = {threshold}; best of {args.repeats}, ms per call")
    failed = False
    for n, d in SHAPES:
        X = rng.random((n, d))
        labels, _ = metrics.assign(X, X[rng.choice(n, min(args.k, n), replace=False)])
        results, times = {}, {}
        for path, limit in (("compiled", d + 1), ("sparse", 0)):
            metrics.SPARSE_SUMS_MIN_D = limit
            results[path] = metrics.cluster_sums_in_order(X, labels, args.k)
            times[path] = _best(lambda: metrics.cluster_sums_in_order(X, labels, args.k), args.repeats)
        metrics.SPARSE_SUMS_MIN_D = threshold
        same = np.array_equal(results["compiled"].view(np.uint64), results["sparse"].view(np.uint64))
        failed |= not same
        chosen = "sparse" if d >= threshold else "compiled"
        print(f"  n={n:7d} d={d:4d}: compiled {times['compiled'] * 1e3:8.3f}  sparse {times['sparse'] * 1e3:8.3f}  "
              f"compiled/sparse {times['compiled'] / times['sparse']:5.2f}x  chosen: {chosen:8s} same bytes: {same}")
    if failed:
        raise SystemExit("the two paths gave different bytes")


if __name__ == "__main__":
    main()
