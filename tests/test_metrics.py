"""The assignment kernels of dpclust.metrics: numpy's argmin semantics (ties to the lowest index,
NaN as argmin), and precomputed row norms giving the same bytes."""
from __future__ import annotations

import numpy as np
import pytest

from dpclust import metrics


@pytest.mark.parametrize("k", [1, 2, 5, 16, metrics._PASSES_UP_TO + 1])
def test_first_argmin_down_is_argmin_with_ties(k):
    rng = np.random.default_rng(k)
    D = rng.integers(0, 4, size=(k, 3000)).astype(float)      # many ties
    lab, m = metrics.first_argmin_down(D)
    assert np.array_equal(lab, D.argmin(axis=0)) and np.array_equal(m, D.min(axis=0))


def test_first_argmin_down_treats_nan_as_argmin_does():
    D = np.array([[1.0, np.nan, 2.0], [np.nan, 0.0, 1.0]])
    lab, _ = metrics.first_argmin_down(D)
    assert np.array_equal(lab, D.argmin(axis=0))


def test_assign_with_precomputed_row_norms_gives_the_same_bytes(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5003, 7))
    C = rng.normal(size=(6, 7))
    monkeypatch.setattr(metrics, "CHUNK_ENTRIES", 6 * 701)      # several chunks
    a = metrics.assign(X, C)
    b = metrics.assign(X, C, metrics.row_norms(X))
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
    d2 = ((X[:, None, :] - C[None]) ** 2).sum(axis=2)
    assert np.array_equal(a[0], d2.argmin(axis=1)) and np.allclose(a[1], d2.min(axis=1))
    assert np.array_equal(metrics.nearest(X, C), a[0])


def _sequential_sums(X, labels, k):
    """The reference order: each cluster's rows added one after another, in index order, from 0.0."""
    out = np.zeros((k, X.shape[1]))
    for i in range(X.shape[0]):
        out[labels[i]] += X[i]
    return out


@pytest.mark.parametrize("d", [3, metrics.SPARSE_SUMS_MIN_D])
def test_cluster_sums_in_order_adds_in_index_order_on_both_paths(d):
    # magnitudes 1e-8 .. 1e8 make float addition order visible: a pairwise or blocked sum differs
    rng = np.random.default_rng(3)
    n, k = 3000, 5
    X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-8, 9, size=(n, 1))
    labels = rng.integers(0, k - 1, n)             # cluster k-1 stays empty
    ref = _sequential_sums(X, labels, k)
    got = metrics.cluster_sums_in_order(X, labels, k)
    assert got.view(np.uint64).tolist() == ref.view(np.uint64).tolist()
    assert not got[k - 1].any()
    XT = np.ascontiguousarray(X.T)
    assert np.array_equal(metrics.cluster_sums_in_order(X, labels, k, XT).view(np.uint64), ref.view(np.uint64))
    # the check can fail: the same numbers added in another order give other bits
    shuffled = _sequential_sums(X[::-1], labels[::-1], k)
    assert not np.array_equal(shuffled.view(np.uint64), ref.view(np.uint64))
