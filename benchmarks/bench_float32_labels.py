"""Benchmark: float32 labels with a certificate against the float64 labels they would replace (the
performance issue's item 4), in one run, on one thread.

A labels-only assignment (`metrics.nearest`, `baselines.lloyd_step`) costs, per block of rows, the
float64 GEMM of the scores ‖c‖² − 2x·c and an argmin down them. The float32 path here
(`certified_argmin`: float32 GEMM on rows kept in float32, a compiled pass for the argmin, the
runner-up and a rounding bound, the uncertain rows scored again in float64) gives the float64 labels;
this prints, per (data, k), the CPU time of the float64 labels, of uncertified float32 labels (the
ceiling of any float32 path), of the certified path, whether its labels are the float64 ones and the
share of rows it scored again, and the same for a whole Lloyd step (`baselines.lloyd_step`, whose
one-hot sums read the float64 rows whatever the labels). The path lives here, not in `dpclust`,
because it did not pay where the protocol runs Lloyd (MNIST at k = 10: the step is slower; the results
are in benchmarks/results/float32_labels.json and docs/PERFORMANCE.md).

    .venv/bin/python benchmarks/bench_float32_labels.py [--mnist ../shared/datasets/mnist/train-images-idx3-ubyte.gz]
        [--repeats 5] [--json benchmarks/results/float32_labels.json]

MNIST is its 60,000 training images when the file is there (else uniform integers 0..255 of that
shape); the blobs are 10 Gaussian clusters.
"""
from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from dpclust import baselines, metrics

_UNIT32 = 2.0 ** -24      # unit roundoffs of float32 and float64
_UNIT64 = 2.0 ** -53


def float32_terms(terms: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, float]:
    """The float32 side of `centre_terms`: (−2C, ‖c‖²) rounded to float32, and max_j ‖c_j‖ (float64)."""
    minus_2C, C_sq = terms
    return (minus_2C.astype(np.float32), C_sq.astype(np.float32),
            float(np.sqrt(C_sq.max())) if C_sq.size else 0.0)


def float32_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row side of `certified_argmin`, for a caller that assigns the same rows many times: the
    rows in float32 and their norms ‖x‖ (float64)."""
    return X.astype(np.float32), np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))


def certified_argmin(block: np.ndarray, terms: tuple[np.ndarray, np.ndarray],
                     terms32: tuple[np.ndarray, np.ndarray, float],
                     rows32: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The first argmin down the columns of `centre_scores(block, terms)`, found in float32 where
    that is certain; `rows32` = `float32_rows(block)`.

    A float32 score s̃_j = fl32(‖c_j‖² − 2x·c_j) (x and −2c rounded to float32, one float32 GEMM,
    then ‖c_j‖² rounded to float32 added) is within e₃₂(x) = 1.05·(d + 5)·u₃₂·(2‖x‖·max‖c‖ + max‖c‖²)
    of the exact score (rounding of the inputs, a d-term dot product in any order of summation,
    Higham 2002 Eq. 3.5, ‖c‖² and the addition), and the float64 score within e₆₄, the same with u₆₄.
    So where the float32 runner-up exceeds the float32 minimum by more than 2(e₃₂ + e₆₄), the
    float64 scores have their minimum alone at the same index (`_certified_argmin_down`). The other
    rows (near ties, non-finite or overflowing scores) are scored again in float64 (`centre_scores`
    of those rows) and take their first argmin. The GEMM of a subset of rows may differ from the
    block's in the last bit (OpenBLAS), so a row whose float64 scores tie to the last bit may take
    the other of the tied centres: the only way a label can differ from the float64 path's."""
    minus_2C32, C_sq32, c_max = terms32
    x32, x_norm = rows32
    d = block.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):          # such rows fail the certificate
        S = minus_2C32 @ x32.T                                  # (k, rows)
        S += C_sq32
    labels = np.empty(block.shape[0], dtype=np.int64)
    unsure = np.empty(block.shape[0], dtype=np.bool_)
    _certified_argmin_down_kernel()(S, x_norm, c_max, 2.1 * (d + 5) * (_UNIT32 + _UNIT64),
                                    (d + 5) * 2.0 ** -120 * (1.0 + c_max), labels, unsure)
    redo = np.flatnonzero(unsure)
    if redo.size:
        labels[redo] = metrics.first_argmin_down(metrics.centre_scores(block[redo], terms))[0]
    return labels


def _certified_argmin_down(S, x_norm, c_max, scale, slack, lab, unsure):
    """lab = the first argmin down the columns of the float32 scores S (k × rows); unsure[i] unless
    column i is finite and its runner-up exceeds its minimum by more than the rounding bound
    scale·(2‖x_i‖·c_max + c_max²) + slack·(1 + ‖x_i‖) (slack: float32 subnormals)."""
    k, n = S.shape
    best = np.empty(n)
    second = np.full(n, np.inf)
    finite = np.ones(n, dtype=np.bool_)
    for i in range(n):
        v = S[0, i]
        best[i] = v
        lab[i] = 0
        finite[i] = abs(v) < np.inf
    for j in range(1, k):
        for i in range(n):
            v = np.float64(S[j, i])
            finite[i] = finite[i] and abs(v) < np.inf
            if v < best[i]:
                second[i] = best[i]
                best[i] = v
                lab[i] = j
            elif v < second[i]:
                second[i] = v
    for i in range(n):
        bound = scale * (2.0 * x_norm[i] * c_max + c_max * c_max) + slack * (1.0 + x_norm[i])
        unsure[i] = not (finite[i] and second[i] - best[i] > bound)


@functools.lru_cache(maxsize=1)
def _certified_argmin_down_kernel():
    """`_certified_argmin_down` compiled by numba, without an on-disk cache (a script imported under
    two names, as a test's module and as __main__, cannot share one)."""
    import numba

    return numba.njit(nogil=True)(_certified_argmin_down)


def lloyd_step_certified(X, C, rows32):
    """`baselines.lloyd_step` (unweighted, dense one-hot sums below LLOYD_SPARSE_SUMS_MIN_K centres)
    with `certified_argmin` labels."""
    k, d = C.shape
    terms = metrics.centre_terms(C)
    terms32 = float32_terms(terms)
    sums, counts = np.zeros((k, d)), np.zeros(k)
    sparse = None
    if k >= baselines.LLOYD_SPARSE_SUMS_MIN_K:
        from scipy import sparse
    step = baselines.LLOYD_BLOCK_ROWS
    for start in range(0, X.shape[0], step):
        block = X[start:start + step]
        m = block.shape[0]
        lab = certified_argmin(block, terms, terms32, (rows32[0][start:start + step], rows32[1][start:start + step]))
        if sparse is None:
            onehot = np.zeros((k, m))
            onehot[lab, np.arange(m)] = 1.0
        else:
            onehot = sparse.csr_matrix((np.ones(m), lab, np.arange(m + 1)), shape=(m, k)).T
        sums += onehot @ block
        counts += np.bincount(lab, minlength=k)
    return sums, counts


def mnist(path: Path) -> tuple[np.ndarray, str]:
    if path.exists():
        with gzip.open(path, "rb") as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
        return raw.reshape(-1, 784).astype(float), "MNIST 60,000 x 784"
    return np.random.default_rng(0).integers(0, 256, size=(60_000, 784)).astype(float), "uniform 60,000 x 784"


def blobs(n: int, d: int, rng) -> tuple[np.ndarray, str]:
    centres = rng.normal(scale=4.0, size=(10, d))
    return centres[rng.integers(0, 10, n)] + rng.normal(size=(n, d)), f"blobs 60,000 x {d}"


def cpu_s(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def measure(X: np.ndarray, k: int, repeats: int, rng) -> dict:
    C = X[rng.choice(len(X), k, replace=False)]
    terms = metrics.centre_terms(C)
    terms32 = float32_terms(terms)
    rows = baselines.LLOYD_BLOCK_ROWS
    starts = range(0, len(X), rows)
    b64 = [X[s:s + rows] for s in starts]
    x32, x_norm = float32_rows(X)
    b32 = [(x32[s:s + rows], x_norm[s:s + rows]) for s in starts]
    c32_cols = np.ascontiguousarray(terms32[0].T)                   # (d, k): rows @ it is (rows, k)
    c32_sq = terms32[1]
    f64 = cpu_s(lambda: [metrics.first_argmin_down(metrics.centre_scores(b, terms)) for b in b64], repeats)
    ceiling = min(cpu_s(lambda: [np.argmin(b @ c32_cols + c32_sq.T, axis=1) for b, _ in b32], repeats),
                  cpu_s(lambda: [metrics.first_argmin_down(terms32[0] @ b.T + c32_sq) for b, _ in b32], repeats))
    certified = cpu_s(lambda: [certified_argmin(b, terms, terms32, r) for b, r in zip(b64, b32)], repeats)
    same = all(np.array_equal(certified_argmin(b, terms, terms32, r),
                              metrics.first_argmin_down(metrics.centre_scores(b, terms))[0]) for b, r in zip(b64, b32))
    redone = []
    real = metrics.centre_scores
    metrics.centre_scores = lambda b, t: redone.append(len(b)) or real(b, t)
    try:
        [certified_argmin(b, terms, terms32, r) for b, r in zip(b64, b32)]
    finally:
        metrics.centre_scores = real
    rows32 = float32_rows(X)
    step32 = cpu_s(lambda: lloyd_step_certified(X, C, rows32), repeats)
    step64 = cpu_s(lambda: baselines.lloyd_step(X, C), repeats)
    same_step = all(a.tobytes() == b.tobytes()
                    for a, b in zip(lloyd_step_certified(X, C, rows32), baselines.lloyd_step(X, C)))
    return {"k": k, "float64_labels_s": f64, "float32_uncertified_s": ceiling, "certified_s": certified,
            "ceiling": ceiling / f64, "ratio": certified / f64, "same_labels": bool(same and same_step),
            "redone_share": sum(redone) / len(X), "lloyd_step_float64_s": step64, "lloyd_step_certified_s": step32,
            "lloyd_step_ratio": step32 / step64}


def metrics_warm() -> None:
    """Compile (or load) the kernels before timing: both paths then run compiled."""
    X = np.random.default_rng(0).normal(size=(64, 64))
    terms = metrics.centre_terms(X[:3])
    certified_argmin(X, terms, float32_terms(terms), float32_rows(X))
    metrics.first_argmin_down(np.ones((2, 8)))
    metrics._numpy_work = metrics.NUMPY_WORK_BUDGET


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mnist", default="../shared/datasets/mnist/train-images-idx3-ubyte.gz")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=None, help="also write the table here")
    args = ap.parse_args()
    from threadpoolctl import threadpool_info, threadpool_limits


    rng = np.random.default_rng(1)
    rows = []
    print("| data | k | float64 labels (s) | float32 uncertified | certified | ratio | same labels | rows redone "
          "| Lloyd step f64 (s) | certified | ratio |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    metrics_warm()
    with threadpool_limits(1):
        for X, what in (mnist(Path(args.mnist)), blobs(60_000, 128, rng), blobs(60_000, 64, rng)):
            for k in (3, 10, 50):
                r = dict(measure(X, k, args.repeats, rng), data=what)
                rows.append(r)
                print(f"| {what} | {k} | {r['float64_labels_s']:.4f} | {r['float32_uncertified_s']:.4f} "
                      f"| {r['certified_s']:.4f} | {r['ratio']:.2f} | {'yes' if r['same_labels'] else 'NO'} "
                      f"| {100 * r['redone_share']:.3f} % | {r['lloyd_step_float64_s']:.4f} "
                      f"| {r['lloyd_step_certified_s']:.4f} | {r['lloyd_step_ratio']:.2f} |", flush=True)
    if args.json:
        blas = [(i.get("internal_api"), i.get("version"), i.get("architecture")) for i in threadpool_info()]
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        Path(args.json).write_text(json.dumps({"commit": commit, "machine": platform.processor() or platform.machine(),
                                               "blas": blas, "rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
