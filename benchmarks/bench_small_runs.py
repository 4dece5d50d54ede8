"""Benchmark: what a small run costs a fresh process, with the assignment kernels' numpy start
(`dpclust.metrics.NUMPY_WORK_BUDGET`, the default) and with numba from the first call (budget 0).
Target: CPU ratio default / numba-first ≤ 0.8 for the small runs, and ≤ 1.1 for the long one
(where the process switches to numba after its numpy budget).

    .venv/bin/python benchmarks/bench_small_runs.py [--repeats 5]

Each case is one process: import dpclust, then DPLloyd (Su et al. 2016, its declared defaults) on
uniform data in its [-1, 1]^d box, as a run job does after loading its data, or (the long case)
300 iterations of non-private Lloyd; CPU time (user + system) of the process, the best of the
repeats.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys

CASES = {"DPLloyd, 150 x 4, k = 3": (150, 4, 3, "dplloyd"), "DPLloyd, 5,000 x 2, k = 15": (5000, 2, 15, "dplloyd"),
         "DPLloyd, 200,000 x 10, k = 10": (200_000, 10, 10, "dplloyd"),
         "long: Lloyd x 300, 200,000 x 10, k = 10": (200_000, 10, 10, "lloyd")}

CHILD = """
import sys
import numpy as np
from dpclust import metrics
if sys.argv[4] == "0":
    metrics.NUMPY_WORK_BUDGET = 0
n, d, k = map(int, sys.argv[1:4])
X = np.random.default_rng(0).uniform(-1, 1, (n, d))
if sys.argv[5] == "dplloyd":
    from dpclust.su2016.dplloyd import dplloyd
    dplloyd(X, k, 1.0, None, np.random.default_rng(1), {"bounds": [-1.0, 1.0], "init_seed": 7})
else:
    from dpclust.baselines import lloyd
    lloyd(X, X[:k].copy(), max_iter=300, tol=-1.0)
"""


def cpu_of(n: int, d: int, k: int, program: str, budget_zero: bool) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", CHILD, str(n), str(d), str(k), "0" if budget_zero else "1", program],
                   check=True, env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"{'case':42s} {'default CPU s':>14s} {'numba-first':>12s} {'ratio':>6s}")
    for name, (n, d, k, program) in CASES.items():
        default = min(cpu_of(n, d, k, program, False) for _ in range(args.repeats))
        numba_first = min(cpu_of(n, d, k, program, True) for _ in range(args.repeats))
        print(f"{name:42s} {default:14.2f} {numba_first:12.2f} {default / numba_first:6.2f}")


if __name__ == "__main__":
    main()
