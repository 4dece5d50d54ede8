"""Clustering objectives, computed with BLAS in row chunks so memory stays bounded.

* k-means cost: Σ_i min_j ‖x_i − c_j‖² (Balcan et al. §7; Lu & Shen Eq. 2).
* NICV: the k-means cost divided by n (Su et al. §5.1).
* k-median cost: Σ_i min_j ‖x_i − c_j‖ (Cohen-Addad et al. §6).
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from dpclust.compiled import kernel

#: Upper bound on the number of float64 entries of one (chunk × k) distance block (~64 MB).
CHUNK_ENTRIES = 8_000_000


def _chunk_rows(n: int, k: int) -> int:
    return max(1, min(n, CHUNK_ENTRIES // max(k, 1)))


def squared_distances(X: np.ndarray, C: np.ndarray, X_sq: np.ndarray | None = None) -> np.ndarray:
    """‖x − c‖² for every pair via ‖x‖² − 2x·c + ‖c‖² (one GEMM), clipped at 0. Not chunked."""
    if X_sq is None:
        X_sq = np.einsum("ij,ij->i", X, X)
    C_sq = np.einsum("ij,ij->i", C, C)
    D = X @ C.T
    D *= -2.0
    D += X_sq[:, None]
    D += C_sq[None, :]
    np.maximum(D, 0.0, out=D)
    return D


def centre_terms(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The centre side of `centre_scores`: (−2C, ‖c‖² as a column). Scaling by −2 is exact."""
    return -2.0 * C, np.einsum("ij,ij->i", C, C)[:, None]


def centre_scores(block: np.ndarray, terms: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """‖c‖² − 2c·x for every centre and row, laid out (k × rows) by one GEMM, so an argmin runs
    down the columns, vectorised across rows (unlike a per-row argmin over a short k axis)."""
    minus_2C, C_sq = terms
    D = minus_2C @ block.T
    D += C_sq
    return D


def first_argmin_down(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(argmin, min) down the columns of D (k × rows): numpy's argmin (the lowest index on ties),
    by the compiled pass over contiguous rows (`_argmin_down`, faster than argmin along the short
    strided axis) once this process has done enough of them (`_compiled_pays`), else in numpy
    (`_argmin_down_numpy`): the same bytes either way."""
    if _compiled_pays(D.size):
        lab = np.empty(D.shape[1], dtype=np.int64)
        m = np.empty(D.shape[1], dtype=D.dtype)
        _argmin_down_kernel()(np.ascontiguousarray(D), lab, m)
    else:
        lab, m = _argmin_down_numpy(D)
    if not np.isfinite(m).all():              # NaN: argmin's own rule (the first NaN)
        lab = np.argmin(D, axis=0)
        m = D[lab, np.arange(D.shape[1])]
    return lab, m


def _argmin_down_numpy(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_argmin_down` in numpy: the minimum down each column, then the first row equal to it (rows
    visited last to first; ±0 compare equal, as `<` treats them), and the minimum read back from
    that row, so the bytes of the compiled pass for finite D."""
    lowest = D.min(axis=0)
    lab = np.zeros(D.shape[1], dtype=np.int64)
    equal = np.empty(D.shape[1], dtype=bool)
    for j in range(D.shape[0] - 1, 0, -1):
        np.equal(D[j], lowest, out=equal)
        np.copyto(lab, j, where=equal)
    np.equal(D[0], lowest, out=equal)
    np.copyto(lab, 0, where=equal)
    return lab, D[lab, np.arange(D.shape[1])]


#: The compiled kernels cost each process about a second before their first call (importing numba,
#: setting up its target, loading the cached machine code), while numpy does the same work several
#: times slower per entry. So a process does it numpy's way until it has done this much work (entries
#: of D or X, plus `_CALL_WORK` a call: about a second of numpy), then switches for good, as it does at
#: once when numba is already loaded: at most about twice the better of the two choices made in
#: hindsight. The switch changes no bit (tests/test_metrics.py); the many small runs (the test preset,
#: small datasets) never start numba.
NUMPY_WORK_BUDGET = 400_000_000
_CALL_WORK = 4_000
_numpy_work = 0


def _numba_loaded() -> bool:
    return "numba" in sys.modules


def _compiled_pays(entries: int) -> bool:
    """Whether this call takes the compiled kernel (see NUMPY_WORK_BUDGET); counts numpy's work."""
    global _numpy_work
    if _numba_loaded() or _numpy_work >= NUMPY_WORK_BUDGET:
        return True
    _numpy_work += entries + _CALL_WORK
    return False


def _argmin_down(D, lab, m):
    """lab, m = argmin and min down the columns of D: a running minimum over the k rows, each a
    contiguous pass the compiler vectorises; strictly less, so an earlier index keeps a tie."""
    k, n = D.shape
    for i in range(n):
        m[i] = D[0, i]
        lab[i] = 0
    for j in range(1, k):
        for i in range(n):
            v = D[j, i]
            less = v < m[i]
            lab[i] = j if less else lab[i]
            m[i] = v if less else m[i]


def _sums_by_label(X, labels, sums):
    """sums[labels[i]] += X[i] for the rows i in index order (into zeroed sums)."""
    n, d = X.shape
    for i in range(n):
        j = labels[i]
        for f in range(d):
            sums[j, f] += X[i, f]


#: compiled on first use (`dpclust.compiled`): one pass each where numpy took 3(k − 1) (labels) or d
#: bincounts (sums), in the same order, so the same bytes
_argmin_down_kernel = kernel(_argmin_down)
_sums_by_label_kernel = kernel(_sums_by_label)


def row_norms(X: np.ndarray) -> np.ndarray:
    """‖x‖² of every row, as `assign` computes it (a caller running many assignments on one X
    computes it once and passes it)."""
    return np.einsum("ij,ij->i", X, X)


#: From this many coordinates on, `cluster_sums_in_order` forms the sums as one sparse one-hot
#: product (reads X once) instead of one bincount per coordinate (reads the labels d times). Speed
#: only, the bytes are the same; measured (benchmarks/bench_cluster_sums.py): 1.3-1.5x at MNIST's
#: d = 784, no steady gain at d <= 128 (and a fixed cost that dominates small n·d).
SPARSE_SUMS_MIN_D = 256


def cluster_sums_in_order(X: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Per-cluster sums (k, d) of the rows of X, each cluster's rows added in index order from 0.0
    (np.bincount's order, whichever way they are formed: see `SPARSE_SUMS_MIN_D`; below it, one
    compiled pass over the rows, `_sums_by_label`)."""
    n, d = X.shape
    if d >= SPARSE_SUMS_MIN_D:
        sums = np.zeros((k, d))
        add_rows_by_label(sums, np.ascontiguousarray(X, dtype=float), labels, csr_accumulate())
        return sums
    labels = np.asarray(labels)
    if n and (labels.min() < 0 or labels.max() >= k):
        raise ValueError(f"cluster labels must lie in [0, {k}); got [{labels.min()}, {labels.max()}]")
    if not _compiled_pays(n * d):       # one bincount per coordinate: the same additions, in the same order
        return np.stack([np.bincount(labels, weights=X[:, f], minlength=k) for f in range(d)], axis=1) \
            if d else np.zeros((k, 0))
    sums = np.zeros((k, d))
    _sums_by_label_kernel()(np.ascontiguousarray(X, dtype=float), labels, sums)
    return sums


@functools.lru_cache(maxsize=1)
def csr_accumulate():
    """SciPy's kernel behind `csr_matrix @ dense`, which adds A·X into Y in place (Y += A·X, row i
    of A taken nonzero after nonzero), or None where SciPy does not have it or it does not behave
    so on a small check (imported on first use: run jobs on small data never import scipy.sparse).
    A private SciPy function: with None the callers take the public product, the same bytes."""
    try:
        from scipy.sparse._sparsetools import csr_matvecs
        out = np.array([[1.0, 2.0], [3.0, 4.0]])
        csr_matvecs(2, 3, 2, np.array([0, 2, 3], dtype=np.int32), np.array([2, 0, 1], dtype=np.int32),
                    np.ones(3), np.arange(6.0), out.ravel())
        if out.tolist() != [[1.0 + 4.0 + 0.0, 2.0 + 5.0 + 1.0], [3.0 + 2.0, 4.0 + 3.0]]:
            return None  # pragma: no cover
    except Exception:  # pragma: no cover - every SciPy we know has it, with this signature
        return None
    return csr_matvecs


def add_rows_by_label(out: np.ndarray, block: np.ndarray, labels: np.ndarray | None, kernel) -> None:
    """out[j] += block[i] for every row i with labels[i] = j (every row into out[0] when labels is
    None), one row after another in row order: the additions of the one-hot product over these rows.
    With `kernel` (`csr_accumulate()`) they continue in place from what `out` holds, so blocks of rows
    added in turn give the bytes of one product over all of them; without it the public product is
    added to `out` (the same bytes when `out` is zero: one call per sum). out and block C-contiguous
    float64."""
    rows, d = block.shape
    if labels is None:
        indptr, order = np.array([0, rows], dtype=np.int32), np.arange(rows, dtype=np.int32)
    else:
        indptr = np.zeros(out.shape[0] + 1, dtype=np.int32)
        indptr[1:] = np.cumsum(np.bincount(labels, minlength=out.shape[0]))
        order = np.argsort(labels, kind="stable").astype(np.int32)   # ascending row within each group
    if kernel is None:
        from scipy import sparse

        out += sparse.csr_array((np.ones(rows), order, indptr), shape=(out.shape[0], rows)) @ block
        return
    kernel(indptr.size - 1, rows, d, indptr, order, np.ones(rows), block.ravel(), out.ravel())


#: Rows per block of `assign_with_sums`: a block of MNIST's rows (256 × 784 float64, 1.6 MB) stays in
#: cache from its distance GEMM to its sums. A multiple of 8, so every block starts where the GEMM
#: of a whole chunk has a column group boundary (OpenBLAS computes such a column with the same bits
#: wherever it stands); a last block shorter than `_FUSED_MIN_TAIL` rows joins the one before it.
FUSED_BLOCK_ROWS = 256
_FUSED_MIN_TAIL = 64


def assign_with_sums(X: np.ndarray, C: np.ndarray, X_sq: np.ndarray | None = None):
    """(`assign(X, C, X_sq)`, `cluster_sums_in_order(X, labels, k)`) in one pass over X from
    `SPARSE_SUMS_MIN_D` coordinates on: per block of rows, the distance GEMM, the nearest centre,
    then the block's rows added to their clusters' sums (`add_rows_by_label`), so a block is read
    from memory once. The same labels and sums as the two calls (tests/test_metrics.py): the blocks
    lie inside `assign`'s chunks, aligned to them, and the sums add every cluster's rows in index
    order from 0.0. The distances are the same bytes where the BLAS's GEMM of a block is bit-identical
    to the chunk's columns (OpenBLAS's Haswell kernels); its SkylakeX kernels differ in the last bits.
    Below that d (or without SciPy's kernel) the two calls themselves."""
    X = np.asarray(X, dtype=float)
    C = np.atleast_2d(np.asarray(C, dtype=float))
    n, d = X.shape
    k = C.shape[0]
    kernel = csr_accumulate() if d >= SPARSE_SUMS_MIN_D else None
    if kernel is None or not X.flags.c_contiguous:
        labels, d2 = assign(X, C, X_sq)
        return labels, d2, cluster_sums_in_order(X, labels, k)
    labels = np.empty(n, dtype=np.int64)
    d2 = np.empty(n, dtype=float)
    sums = np.zeros((k, d))
    terms = centre_terms(C)
    step = _chunk_rows(n, k)
    for c0 in range(0, n, step):
        c1 = min(n, c0 + step)
        starts = list(range(c0, c1, FUSED_BLOCK_ROWS))
        if len(starts) > 1 and c1 - starts[-1] < _FUSED_MIN_TAIL:
            starts.pop()
        for s0, s1 in zip(starts, starts[1:] + [c1]):
            block = X[s0:s1]
            D = centre_scores(block, terms)
            D += (row_norms(block) if X_sq is None else X_sq[s0:s1])[None, :]
            lab, m = first_argmin_down(D)
            labels[s0:s1] = lab
            np.maximum(m, 0.0, out=d2[s0:s1])
            add_rows_by_label(sums, block, lab, kernel)
    return labels, d2, sums


def assign(X: np.ndarray, C: np.ndarray, X_sq: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Nearest centre of every row and its squared distance, in chunks of rows; `X_sq`, when
    given, is `row_norms(X)` (the same bytes as computing it per chunk)."""
    X = np.asarray(X, dtype=float)
    C = np.atleast_2d(np.asarray(C, dtype=float))
    n = X.shape[0]
    labels = np.empty(n, dtype=np.int64)
    d2 = np.empty(n, dtype=float)
    terms = centre_terms(C)
    step = _chunk_rows(n, C.shape[0])
    for start in range(0, n, step):
        block = X[start:start + step]
        D = centre_scores(block, terms)
        D += (row_norms(block) if X_sq is None else X_sq[start:start + step])[None, :]
        lab, m = first_argmin_down(D)
        labels[start:start + step] = lab
        np.maximum(m, 0.0, out=d2[start:start + step])
    return labels, d2


def nearest(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Index of the nearest centre of every row: argmin_j (‖c_j‖² − 2 x·c_j), one GEMM per chunk
    (‖x‖² does not change the argmin, so it is never computed)."""
    C = np.atleast_2d(np.asarray(C, dtype=float))
    n = X.shape[0]
    labels = np.empty(n, dtype=np.int64)
    terms = centre_terms(C)
    step = _chunk_rows(n, C.shape[0])
    for start in range(0, n, step):
        labels[start:start + step] = first_argmin_down(centre_scores(X[start:start + step], terms))[0]
    return labels


def kmeans_cost(X: np.ndarray, C: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Σ_i w_i min_j ‖x_i − c_j‖²."""
    _, d2 = assign(X, C)
    return float(d2.sum() if weights is None else np.dot(weights, d2))


def nicv(X: np.ndarray, C: np.ndarray) -> float:
    """Normalized intra-cluster variance (Su et al. §5.1): k-means cost / n."""
    return kmeans_cost(X, C) / X.shape[0]


def kmedian_cost(X: np.ndarray, C: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Σ_i w_i min_j ‖x_i − c_j‖."""
    _, d2 = assign(X, C)
    d = np.sqrt(d2)
    return float(d.sum() if weights is None else np.dot(weights, d))


def cluster_sizes(labels: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(labels, minlength=k)


def all_costs(X: np.ndarray, C: np.ndarray) -> dict:
    """Every objective from one assignment pass: k-means cost, NICV, k-median cost, cluster sizes."""
    labels, d2 = assign(X, C)
    kmeans = float(d2.sum())
    return {
        "cost_kmeans": kmeans,
        "nicv": kmeans / X.shape[0],
        "cost_kmedian": float(np.sqrt(d2).sum()),
        "cluster_sizes": cluster_sizes(labels, C.shape[0]).tolist(),
    }


def ratio(value: float, baseline: float) -> float:
    """value / baseline (the papers' normalisation); NaN when the baseline is 0."""
    return float(value / baseline) if baseline else float("nan")
