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
