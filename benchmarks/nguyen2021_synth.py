"""Benchmark: Nguyen et al. (2021) Algorithm 1 on the synthetic 50,000 × 100 mixture at k = 18.

Target (issue 6): ≤ 10 s on one core and ≤ 1 GB peak memory. Run once:

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/nguyen2021_synth.py [k] [seed]

Prints wall time, process CPU time, peak resident memory and the per-stage statistics. Uses the
registry's `nguyen_synth` generator settings (config/datasets.yaml) directly, so no data files are
needed. The machine may be shared: CPU time is the better measure of the single-core cost.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from dpclust.data import load_registry  # noqa: E402
from dpclust.data.synthetic import nguyen_blocks  # noqa: E402
from dpclust.metrics import kmeans_cost  # noqa: E402
from dpclust.nguyen2021.algorithm import nguyen  # noqa: E402


def main() -> None:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 18
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    entry = load_registry().dataset("nguyen_synth")
    settings = entry["settings"] if isinstance(entry, dict) else entry.settings
    X, _ = nguyen_blocks(settings)
    n = X.shape[0]
    lo, hi = settings["clip"]
    run_settings = {"bounds": [float(lo), float(hi)], "init_seed": 0}  # declared defaults otherwise
    w0, c0 = time.perf_counter(), time.process_time()
    res = nguyen(X, k, 1.0, n ** -1.5, np.random.default_rng(seed), run_settings)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"nguyen2021 Alg. 1, nguyen_synth {X.shape[0]}x{X.shape[1]}, k={k}, eps=1, delta=n^-1.5")
    print(f"wall_s={wall:.2f} cpu_s={cpu:.2f} peak_rss_mb={peak_mb:.0f} (targets: <= 10 s, <= 1024 MB)")
    print(f"eps_spent={res.epsilon_spent:.6g} delta_spent={res.delta_spent:.6g} cost={kmeans_cost(X, res.centers):.6g}")
    slow = [s for s in res.info["scale_trace"] if s["trials"] > 200]
    print("busy scales:", slow)


if __name__ == "__main__":
    main()
