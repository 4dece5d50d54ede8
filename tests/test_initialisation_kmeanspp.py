"""`kmeans_plus_plus` reproduces scikit-learn's `kmeans_plusplus` bit for bit (issue #42), without
importing scikit-learn (scikit-learn is imported here, in the test only, as the reference)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from dpclust.blocks.initialisation import initial_centers, kmeans_plus_plus

sklearn_cluster = pytest.importorskip("sklearn.cluster")


def _reference(X, k, rng_seed):
    seed = int(np.random.default_rng(rng_seed).integers(2**31 - 1))
    centers, _ = sklearn_cluster.kmeans_plusplus(X, k, random_state=seed)
    return centers


def _assert_identical(X, k, rng_seed):
    ours = kmeans_plus_plus(X, k, np.random.default_rng(rng_seed))
    ref = _reference(X, k, rng_seed)
    assert ours.dtype == ref.dtype == X.dtype
    assert ours.shape == ref.shape == (k, X.shape[1])
    assert np.array_equal(ours, ref)
    assert ours.tobytes() == ref.tobytes()


def _data(kind: str, n: int, d: int, seed: int) -> np.ndarray:
    g = np.random.default_rng(1000 + seed)
    if kind == "uniform":
        return g.random((n, d))
    if kind == "blobs":
        means = g.normal(0, 10, size=(5, d))
        return means[g.integers(5, size=n)] + g.normal(size=(n, d))
    if kind == "offset":      # large common offset: cancellation in ‖x‖² − 2x·c + ‖c‖², clipping at 0
        return 1e6 + g.normal(0, 1e-3, size=(n, d))
    if kind == "duplicates":  # every point four times
        return np.repeat(g.random((max(1, n // 4), d)), 4, axis=0)[:n]
    if kind == "identical":   # zero potential after the first centre
        return np.full((n, d), 0.25)
    if kind == "integers":    # many ties in the distances
        return g.integers(0, 3, size=(n, d)).astype(np.float64)
    if kind == "pixels":      # MNIST-like: sparse-ish values in [0, 1]
        return np.where(g.random((n, d)) < 0.8, 0.0, g.random((n, d)))
    raise AssertionError(kind)


SHAPES = [  # (kind, n, d, k)
    ("uniform", 1, 1, 1), ("uniform", 2, 1, 2), ("uniform", 7, 1, 3), ("uniform", 30, 2, 30),
    ("uniform", 200, 5, 1), ("uniform", 200, 5, 200), ("blobs", 1000, 10, 25), ("blobs", 300, 3, 8),
    ("offset", 150, 4, 10), ("duplicates", 120, 3, 120), ("duplicates", 200, 6, 12),
    ("identical", 40, 3, 1), ("identical", 40, 3, 5), ("identical", 9, 2, 9), ("integers", 300, 4, 20),
    ("pixels", 500, 784, 10), ("blobs", 5000, 3, 8),  # float32: several 1,140-row blocks
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind,n,d,k", SHAPES)
def test_bit_identical_to_sklearn(kind, n, d, k, dtype):
    base = _data(kind, n, d, seed=n + d + k).astype(dtype)
    for order in ("C", "F"):
        X = np.asarray(base, order=order)
        for rng_seed in (0, 1, 12345):
            _assert_identical(X, k, rng_seed)


def test_bit_identical_on_views_and_read_only_arrays():
    X = _data("blobs", 400, 12, seed=3)
    ro = X.copy()
    ro.setflags(write=False)
    for view in (X[:, ::3], X[::2], X[50:350, 2:9], ro):
        for dtype in (np.float64, np.float32):
            V = view if view.dtype == dtype else view.astype(dtype)[::1]
            for rng_seed in (4, 5):
                _assert_identical(V, 6, rng_seed)


def test_many_seeds_small():
    X = _data("blobs", 60, 2, seed=9)
    for rng_seed in range(40):
        _assert_identical(X, 1 + rng_seed % 12, rng_seed)
        _assert_identical(X.astype(np.float32), 1 + rng_seed % 12, rng_seed)


def test_initial_centers_kmeanspp_matches_sklearn():
    X = _data("blobs", 500, 4, seed=1)
    ours = initial_centers(X, 7, "kmeans++", seed=42)
    assert np.array_equal(ours, _reference(X, 7, 42))


def test_inputs_outside_the_reproduced_domain_go_to_sklearn():
    X = _data("integers", 50, 3, seed=2).astype(np.int64)   # int: scikit-learn's own handling
    assert np.array_equal(kmeans_plus_plus(X, 4, np.random.default_rng(0)), _reference(X, 4, 0))
    big_endian = _data("uniform", 30, 2, seed=2).astype(">f8")
    assert np.array_equal(kmeans_plus_plus(big_endian, 3, np.random.default_rng(1)),
                          _reference(big_endian, 3, 1))
    with pytest.raises(ValueError):                           # k > n: scikit-learn's ValueError
        kmeans_plus_plus(_data("uniform", 3, 2, seed=0), 4, np.random.default_rng(0))
    bad = _data("uniform", 10, 2, seed=0)
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):                           # non-finite: scikit-learn's ValueError
        kmeans_plus_plus(bad, 2, np.random.default_rng(0))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # both overflow alike
def test_overflowing_sum_but_finite_data_stays_native():
    X = np.full((20, 2), np.finfo(np.float64).max / 4)
    X[::2] *= -1
    X[0, 0] = np.finfo(np.float64).max                       # the sum overflows, every entry is finite
    _assert_identical(X, 3, 0)


def test_kmeans_plus_plus_does_not_import_sklearn():
    code = ("import sys, numpy as np; from dpclust.blocks.initialisation import kmeans_plus_plus; "
            "kmeans_plus_plus(np.random.default_rng(0).random((50, 3)), 3, np.random.default_rng(1)); "
            "kmeans_plus_plus(np.random.default_rng(0).random((50, 3)).astype(np.float32), 3, "
            "np.random.default_rng(1)); "
            "print(sorted(m for m in sys.modules if m == 'sklearn' or m.startswith('sklearn.')))")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"
