"""Benchmark: GkM's block k-means (Su et al. 2016 §4.1.2, `dpclust.su2016.gupt.block_kmeans`) now
vs at an earlier commit, on the blocks of the full protocol's costliest GkM cells. Prints the time
of each and the ratio, and checks that both give the same bytes.

    .venv/bin/python benchmarks/bench_gkm_blocks.py [--previous COMMIT] [--data-dir DIR] [--repeats 3]

Cells: GkM (ℓ = N^0.4) and GkM-3K (blocks of 3k points) on Adult-num (k = 5) and S1 (k = 15), and
GkM-3K on Balcan et al.'s 100,000 × 100 synthetic set at k = 16 (the leaderboard's cell), from
processed files in --data-dir (the estimator's, or the workflow's data/processed).
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from previous import load_previous  # noqa: E402

CELLS = [("adult_num", 5, "n^0.4"), ("adult_num", 5, "n/3k"), ("s1", 15, "n^0.4"), ("s1", 15, "n/3k"),
         ("balcan_synth", 16, "n/3k")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--previous", default="3013163", help="commit of the implementation to compare with")
    ap.add_argument("--data-dir", default="data/processed")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from dpclust.data import load_processed
    from dpclust.su2016 import gupt

    old = load_previous("dpclust.su2016.gupt", args.previous)
    print(f"block k-means (20 restarts, 10 iterations), best of {args.repeats}: previous ({args.previous}) vs now")
    for name, k, blocks in CELLS:
        path = Path(args.data_dir) / f"{name}.h5"
        if not path.exists():
            print(f"  {name}: no {path}, skipped")
            continue
        X = load_processed(str(path)).X
        lo, hi = X.min(axis=0), X.max(axis=0)
        X = 2 * (X - lo) / np.where(hi > lo, hi - lo, 1) - 1
        ell = gupt.num_blocks(blocks, X.shape[0], k)
        times = {}
        outs = {}
        for label, mod in (("previous", old), ("now", gupt)):
            best = np.inf
            for r in range(args.repeats):
                t = time.perf_counter()
                outs[label] = mod.block_kmeans(X, ell, k, 20, 10, np.random.default_rng(r))
                best = min(best, time.perf_counter() - t)
            times[label] = best
        same = outs["previous"].tobytes() == outs["now"].tobytes()
        print(f"  {name:13s} k={k:<3d} blocks {blocks:6s} (ℓ = {ell:5d}): {times['previous']:7.3f} s -> "
              f"{times['now']:7.3f} s  ratio {times['previous'] / times['now']:5.2f}x  same bytes: {same}")
        if not same:
            raise SystemExit("different bytes: the speed-up changed the result")


if __name__ == "__main__":
    main()
