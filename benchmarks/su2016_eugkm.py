"""Benchmark: one EUGkM synopsis over EVERY grid cell (+ weighted Lloyd from 30 sets) at d = 10,
N = 10,000 (target ≤ 1 s per synopsis at the paper's ε = 1 of Figure 2).

Data: 10 well-separated Gaussian clusters in [-1, 1]^10 (k = 10), ε ∈ {0.1, 1, 2}. With the
declared `round_log` rounding the grid of Eq. (4) has 2^10 = 1,024 cells at ε = 0.1, 3^10 = 59,049
at ε = 1 (Figure 2's setting) and 4^10 = 1,048,576 at ε = 2; the synopsis releases the noisy count of
every one of them (eugkm.py), so the cost grows with the grid: about n_init_sets × lloyd_max_iter
labelling passes over all cells (the weighted Lloyd rarely settles on a noise-dominated synopsis).

Prints CPU seconds (time.process_time: less sensitive to other processes than wall time) and wall
seconds per synopsis, for the synopsis alone and with the weighted Lloyd.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from dpclust.accountant import Accountant  # noqa: E402
from dpclust.su2016 import eugkm  # noqa: E402

TARGET_S = 1.0
TARGET_EPSILON = 1.0     # Figure 2's ε (the paper's d = 10, N = 10,000 runs)


def main(epsilons=(0.1, 1.0, 2.0), reps: int = 3):
    rng = np.random.default_rng(0)
    n, d, k = 10_000, 10, 10
    centres = rng.uniform(-0.7, 0.7, size=(k, d))
    X = np.clip(centres[np.arange(n) % k] + rng.normal(0, 0.05, size=(n, d)), -1, 1)
    st = dict(eugkm.eugkm.settings.defaults(), bounds=[-1.0, 1.0], init_seed=3)   # synopsis() takes complete settings
    print(f"EUGkM (every cell), N={n}, d={d}, k={k}")
    out = {}
    for eps in epsilons:
        t0, c0 = time.perf_counter(), time.process_time()
        for s in range(reps):
            syn = eugkm.synopsis(X, eps, np.random.default_rng(s), st, Accountant(eps))
        t_syn, c_syn = (time.perf_counter() - t0) / reps, (time.process_time() - c0) / reps
        t0, c0 = time.perf_counter(), time.process_time()
        for s in range(reps):
            res = eugkm.eugkm(X, k, eps, 0.0, np.random.default_rng(s), st)
        t_all, c_all = (time.perf_counter() - t0) / reps, (time.process_time() - c0) / reps
        out[eps] = c_all
        verdict = ""
        if eps == TARGET_EPSILON:
            verdict = f" (target <= {TARGET_S:g} s CPU: {'met' if c_all <= TARGET_S else 'NOT met'})"
        print(f"  eps={eps:<4} cells {syn.info['cells_total']:>9,d}: synopsis {c_syn:.3f} s CPU ({t_syn:.3f} s wall), "
              f"synopsis + Lloyd(30 sets) {c_all:.3f} s CPU ({t_all:.3f} s wall), "
              f"Lloyd steps of the chosen set {res.info['lloyd_iterations']}{verdict}")
    return out


if __name__ == "__main__":
    main()
