"""Benchmark: the full §5.1 protocol for one (dataset, ε) cell of Su et al. Figure 1 on S1.

One cell = 3,000 DPLloyd runs (30 sphere-packing sets × 100), 10 EUGkM synopses (each with Lloyd
from 30 sets), 100 runs each of GkM, GkM-3K and PGkM, and the 30-run Lloyd baseline, plus the NICV
of every output (as the runner computes it). Target: ≤ 30 s on one core. Prints measured seconds.

Usage: python benchmarks/su2016_protocol.py [--epsilon 0.1] [--data PATH_TO_s1.txt]
S1 is read from the shared mirror (sipu/s1.data.gz) or a processed .h5 and mapped to [-1, 1]^2 (min-max, as minmax_pm1).
Set OMP_NUM_THREADS=1 / OPENBLAS_NUM_THREADS=1 for a one-core measurement.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from dpclust.metrics import all_costs  # noqa: E402
from dpclust.su2016 import dplloyd, eugkm, gupt, lloyd, privgene  # noqa: E402


def load_s1(path):
    if str(path).endswith(".h5"):
        from dpclust.data import load_processed
        X = load_processed(path).X
    else:
        X = np.loadtxt(path, dtype=float)                            # e.g. the mirror's s1.data.gz
    lo, hi = X.min(axis=0), X.max(axis=0)
    return 2.0 * (X - lo) / (hi - lo) - 1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--data", default="/work/shared/datasets/sipu/s1.data.gz")
    ap.add_argument("--dplloyd-runs", type=int, default=3000)
    args = ap.parse_args()
    X = load_s1(args.data)
    k, eps = 15, args.epsilon
    base = {"bounds": [-1.0, 1.0]}          # the algorithms fill their declared defaults
    init_seeds = [1000 + j for j in range(30)]
    timings = {}

    def timed(name, fn, n):
        t = time.perf_counter()
        for s in range(n):
            res = fn(s)
            all_costs(X, res.centers)
        timings[name] = (time.perf_counter() - t, n)

    timed("baseline Lloyd (30 sets)",
          lambda s: lloyd.lloyd(X, k, None, 0.0, None, dict(base, init_seed=init_seeds[s])), 30)
    timed("DPLloyd (30 x 100)",
          lambda s: dplloyd.dplloyd(X, k, eps, 0.0, np.random.default_rng(s), dict(base, init_seed=init_seeds[s % 30])),
          args.dplloyd_runs)
    timed("EUGkM (10 synopses)",
          lambda s: eugkm.eugkm(X, k, eps, 0.0, np.random.default_rng(s), dict(base, init_seed=7)), 10)
    timed("GkM (100)", lambda s: gupt.gkm(X, k, eps, 0.0, np.random.default_rng(s), dict(base, init_seed=0)), 100)
    timed("GkM-3K (100)",
          lambda s: gupt.gkm(X, k, eps, 0.0, np.random.default_rng(s), dict(base, blocks="n/3k", init_seed=0)), 100)
    timed("PGkM (100)", lambda s: privgene.pgkm(X, k, eps, 0.0, np.random.default_rng(s), dict(base, init_seed=0)), 100)
    total = sum(t for t, _ in timings.values())
    print(f"S1 (N={X.shape[0]}, d=2, k={k}), epsilon={eps}: full §5.1 protocol of one Figure 1 cell")
    for name, (t, n) in timings.items():
        print(f"  {name:28s} {t:7.2f} s  ({1000 * t / n:7.2f} ms per run)")
    print(f"  {'TOTAL':28s} {total:7.2f} s  (target <= 30 s on one core: {'met' if total <= 30 else 'NOT met'})")


if __name__ == "__main__":
    main()
