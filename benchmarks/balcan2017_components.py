"""Benchmark of the two inner loops of Balcan et al. (2017): Algorithm 1 (private partition) and one
round of Algorithm 3's swap-gain table, against a direct evaluation of L(Z − x + y) for every pair.

Run once (one core):  .venv/bin/python benchmarks/balcan2017_components.py
Prints measured times; no targets are asserted here (the end-to-end target is in balcan2017_mnist.py).
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from dpclust.accountant import Accountant  # noqa: E402
from dpclust.balcan2017.local_swap import SwapState  # noqa: E402
from dpclust.balcan2017.partition import private_partition  # noqa: E402
from dpclust.metrics import assign  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(0)
    n, p = 100_000, 5
    Y = np.concatenate([c + 0.05 * rng.standard_normal((n // 20, p)) for c in rng.uniform(-0.5, 0.5, (20, p))])
    t0 = time.perf_counter()
    out = private_partition(Y, 0.5, 0.1, -2 * np.ones(p), 4.0, rng, Accountant(1.0), gamma_factor=1.0)
    print(f"Alg. 1 on {n} x {p}: {time.perf_counter() - t0:.3f} s, {out['centers'].shape[0]} candidates, "
          f"active per level {out['active_per_level']}")
    for k, m in [(16, 200), (64, 500)]:
        C = rng.uniform(-0.6, 0.6, (m, p))
        st = SwapState(Y, C, rng.integers(0, m, size=k), 2)
        st.new_losses()                      # fills the distance cache
        t0 = time.perf_counter()
        table = st.new_losses()
        t_inc = time.perf_counter() - t0
        # direct evaluation of a sample of pairs, extrapolated to all k·m pairs
        pairs = [(j, y) for j in range(0, k, max(1, k // 4)) for y in range(0, m, max(1, m // 8))]
        t0 = time.perf_counter()
        for j, y in pairs:
            Z = C[np.r_[np.delete(st.idx, j), y]]
            direct = assign(Y, Z)[1].sum()
            assert abs(direct - table[j, y]) <= 1e-5 * direct
        t_dir = (time.perf_counter() - t0) / len(pairs) * k * m
        print(f"swap-gain table k={k}, |C|={m}, n={n}: incremental {t_inc:.3f} s per round; "
              f"direct evaluation of all {k * m} pairs ≈ {t_dir:.1f} s (extrapolated from {len(pairs)})")


if __name__ == "__main__":
    main()
