"""Benchmark: one EUGkM synopsis (+ Lloyd from 30 sets) at d = 10, N = 10,000 (target ≤ 1 s).

Data: 10 well-separated Gaussian clusters in [-1, 1]^10 (k = 10), ε ∈ {0.1, 1, 2}. At ε = 1 the
grid of Eq. (4) has 4^10 = 1,048,576 cells, so the exact thresholded synopsis (eugkm.py) is used.
Prints the measured seconds per synopsis (synopsis only, and synopsis + weighted Lloyd).
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from dpclust.accountant import Accountant  # noqa: E402
from dpclust.su2016 import eugkm  # noqa: E402


def main():
    rng = np.random.default_rng(0)
    n, d, k = 10_000, 10, 10
    centres = rng.uniform(-0.7, 0.7, size=(k, d))
    X = np.clip(centres[np.arange(n) % k] + rng.normal(0, 0.05, size=(n, d)), -1, 1)
    st = dict(eugkm.eugkm.settings.defaults(), bounds=[-1.0, 1.0], init_seed=3)   # synopsis() takes complete settings
    print(f"EUGkM, N={n}, d={d}, k={k}")
    for eps in (0.1, 1.0, 2.0):
        reps = 5
        t0 = time.perf_counter()
        for s in range(reps):
            P, w, info = eugkm.synopsis(X, eps, np.random.default_rng(s), st, Accountant(eps))
        t_syn = (time.perf_counter() - t0) / reps
        t0 = time.perf_counter()
        for s in range(reps):
            res = eugkm.eugkm(X, k, eps, 0.0, np.random.default_rng(s), st)
        t_all = (time.perf_counter() - t0) / reps
        print(f"  eps={eps:<4} cells total {info['cells_total']:>9,d} kept {info['cells_kept']:>7,d} "
              f"tau={info['tau']:.2f}: synopsis {t_syn:.3f} s, synopsis + Lloyd(30 sets) {t_all:.3f} s "
              f"per synopsis (target <= 1 s: {'met' if t_all <= 1 else 'NOT met'})")


if __name__ == "__main__":
    main()
