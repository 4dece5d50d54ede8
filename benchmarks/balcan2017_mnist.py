"""Benchmark: Balcan et al. (2017) Algorithm 4 + 8 SuLQ iterations on MNIST 70k × 784, k = 64, ε = 1.

Target (issue 5): ≤ 60 s on one core, peak memory ≤ 4 GB. Run once:

    .venv/bin/python benchmarks/balcan2017_mnist.py [--k 64] [--mirror ../shared/datasets/mnist]

Prints the measured wall time per stage (from the ledger order) and the peak resident memory.
MNIST is parsed directly from the idx files (train + test = 70,000 rows, raw pixels in [0, 255]).
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import gzip  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from dpclust.balcan2017.algorithm import balcan  # noqa: E402
from dpclust.balcan2017.sulq import sulq  # noqa: E402
from dpclust.metrics import kmeans_cost  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def read_idx_images(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    n, rows, cols = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
    return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, rows * cols)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--mirror", default=str(REPO.parent / "shared" / "datasets" / "mnist"))
    args = ap.parse_args()
    mirror = Path(args.mirror)
    t0 = time.perf_counter()
    X = np.concatenate([read_idx_images(mirror / "train-images-idx3-ubyte.gz"),
                        read_idx_images(mirror / "t10k-images-idx3-ubyte.gz")]).astype(np.float64)
    print(f"loaded MNIST {X.shape} in {time.perf_counter() - t0:.2f} s")
    settings = {"bounds": [0.0, 255.0], "init_seed": 1}
    t0 = time.perf_counter()
    res = balcan(X, args.k, 1.0, 1e-6, np.random.default_rng(0), settings)
    wall = time.perf_counter() - t0
    info = res.info["trials"][0]
    print(f"balcan (Alg. 4 + 8 SuLQ steps), k={args.k}: {wall:.2f} s; candidates {info['candidates']}, "
          f"projection dim {info['projection_dim']}, swap rounds {info['swap_rounds']}; "
          f"eps spent {res.epsilon_spent:.6g}, delta spent {res.delta_spent:.3g}; "
          f"k-means objective {kmeans_cost(X, res.centers):.4g}")
    t0 = time.perf_counter()
    res2 = sulq(X, args.k, 1.0, 1e-6, np.random.default_rng(0), settings)   # declared defaults: §7's 20 iterations
    print(f"SuLQ (20 iterations), k={args.k}: {time.perf_counter() - t0:.2f} s; "
          f"objective {kmeans_cost(X, res2.centers):.4g}")
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    print(f"peak resident memory: {peak_gb:.2f} GB (target <= 4 GB); balcan wall time target <= 60 s: "
          f"{'met' if wall <= 60 else 'NOT met'}")


if __name__ == "__main__":
    main()
