"""Component timings of Cohen-Addad et al. 2022 (quick to run once): private 1-median on a 20k-point
cluster (the §6 cap) for several d, chunked cell indexing, private tree + DP on 1M points.

Usage: python benchmarks/cohenaddad2022_components.py
"""

from __future__ import annotations

import time

import numpy as np

from dpclust.accountant import Accountant
from dpclust.blocks.one_median import private_one_median
from dpclust.cohenaddad2022 import dynamic_program, hst


def timed(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    rng = np.random.default_rng(0)
    for d in (3, 9, 28):
        P = np.clip(rng.normal(0.5, 0.1, size=(20_000, d)), 0, 1)
        s, _ = timed(lambda: private_one_median(P, 0.2, 0.0, [0, 1], np.random.default_rng(1), None,
                                                {"one_median_smooth_lambda": 0.1}))
        print(f"private 1-median, 20k x {d:2d}: {s * 1e3:7.1f} ms")
    X = np.clip(rng.normal(0.5, 0.15, size=(1_000_000, 3)), 0, 1)
    grid = hst.make_grid(3, [0, 1], 10, [1 / 3, 2 / 3], np.random.default_rng(2))
    s, idx = timed(lambda: hst.cell_indices(X, grid))
    print(f"cell indices, 1M x 3 (layers 10): {s:6.3f} s")
    s, tree = timed(lambda: hst.build_private_tree(idx, grid, 0.2, np.random.default_rng(3), Accountant(0.2), 3.0))
    print(f"private tree, 1M x 3, eps 0.2: {s:6.3f} s  ({tree.n_cells} cells, {len(tree.weights)} levels)")
    for k in (10, 50):
        s, _ = timed(lambda: dynamic_program.solve(tree, k, 1, 2.0))
        print(f"dynamic program, k = {k:2d}: {s * 1e3:7.1f} ms")
    big = hst.build_private_tree(idx, grid, 5.0, np.random.default_rng(3), Accountant(5.0), 3.0)
    s, _ = timed(lambda: dynamic_program.solve(big, 50, 1, 2.0), repeat=1)
    print(f"dynamic program on a deep tree (eps 5: {big.n_cells} cells, {len(big.weights)} levels), k = 50: {s:6.3f} s")


if __name__ == "__main__":
    main()
