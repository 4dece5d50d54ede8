"""benchmarks/bench_float32_labels.py: the float32 path it measures gives the float64 labels (so its
"same labels" column and the ratio it publishes compare like with like)."""
from __future__ import annotations

import numpy as np
import pytest

from dpclust import baselines, metrics

from .conftest import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_float32_labels")


def _float64_labels(X, C):
    return metrics.first_argmin_down(metrics.centre_scores(X, metrics.centre_terms(C)))[0]


def _certified(bench, X, C):
    terms = metrics.centre_terms(C)
    return bench.certified_argmin(X, terms, bench.float32_terms(terms), bench.float32_rows(X))


@pytest.mark.parametrize("d,k", [(64, 2), (100, 10), (784, 10), (300, 57)])
def test_certified_float32_labels_are_the_float64_labels(bench, d, k):
    rng = np.random.default_rng(d * k)
    X = rng.normal(size=(3000, d)) * 10.0 ** rng.integers(-3, 4, size=(3000, 1)) + 5.0
    C = rng.normal(size=(k, d)) + 5.0
    assert np.array_equal(_certified(bench, X, C), _float64_labels(X, C))


def test_certified_float32_labels_at_ties_and_extremes(bench):
    """Exact ties (a duplicate centre, points halfway between two: integer data as MNIST's pixels),
    rows beyond float32's range, subnormal rows, NaN and inf: the float64 labels, ties to the lowest."""
    rng = np.random.default_rng(7)
    C = rng.integers(0, 256, size=(6, 96)).astype(float)
    C[3] = C[1]
    X = rng.integers(0, 256, size=(2000, 96)).astype(float)
    X[:200] = (C[0] + C[2]) / 2
    X[200:210] = C[1]
    X[210:220] *= 1e35
    X[220:230] *= 1e-42
    X[230, 5] = np.nan
    X[231, 7] = np.inf
    got = _certified(bench, X, C)
    assert np.array_equal(got, _float64_labels(X, C))
    assert not got[:200].any() and (got[200:210] == 1).all()


def test_certified_path_settles_most_rows_in_float32_and_keeps_lloyds_bytes(bench, monkeypatch):
    """The certificate is not vacuous (under 1 % of rows scored again on continuous data), and a
    Lloyd step on its labels is `baselines.lloyd_step`'s, to the byte."""
    rng = np.random.default_rng(11)
    X, C = rng.normal(size=(4096, 784)), rng.normal(size=(10, 784))
    redone = []
    real = metrics.centre_scores
    monkeypatch.setattr(metrics, "centre_scores", lambda b, t: redone.append(len(b)) or real(b, t))
    _certified(bench, X, C)
    assert sum(redone) < 0.01 * len(X)
    monkeypatch.setattr(metrics, "centre_scores", real)
    got = bench.lloyd_step_certified(X, C, bench.float32_rows(X))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got, baselines.lloyd_step(X, C)))
