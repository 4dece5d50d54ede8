"""The assignment kernels of dpclust.metrics: numpy's argmin semantics (ties to the lowest index,
NaN as argmin), and precomputed row norms giving the same bytes."""
from __future__ import annotations

import numpy as np
import pytest

from dpclust import metrics


@pytest.mark.parametrize("k", [1, 2, 5, 16, 513])
def test_first_argmin_down_is_argmin_with_ties(k):
    rng = np.random.default_rng(k)
    D = rng.integers(0, 4, size=(k, 3000)).astype(float)      # many ties
    lab, m = metrics.first_argmin_down(D)
    assert np.array_equal(lab, D.argmin(axis=0)) and np.array_equal(m, D.min(axis=0))
    lab, m = metrics.first_argmin_down(D[:, ::2])              # a strided view: the same answer
    assert np.array_equal(lab, D[:, ::2].argmin(axis=0))


def test_cluster_sums_refuse_labels_outside_the_clusters():
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="cluster labels"):
        metrics.cluster_sums_in_order(X, np.array([0, 1, 2, 3]), 3)


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
    assert np.array_equal(metrics.cluster_sums_in_order(np.asfortranarray(X), labels, k).view(np.uint64),
                          ref.view(np.uint64))                           # X in column order: the same bytes
    # the check can fail: the same numbers added in another order give other bits
    shuffled = _sequential_sums(X[::-1], labels[::-1], k)
    assert not np.array_equal(shuffled.view(np.uint64), ref.view(np.uint64))


@pytest.mark.parametrize("d", [metrics.SPARSE_SUMS_MIN_D, 784, 40])
@pytest.mark.parametrize("k", [1, 3, 10, 17, 64])
def test_assign_with_sums_gives_the_bytes_of_assign_then_cluster_sums(d, k, monkeypatch):
    """One pass (blocks of rows: GEMM, nearest centre, the block's rows added to their sums) gives
    the labels and sums (bytes) of `assign` and `cluster_sums_in_order`, and their distances to the
    last bits of the GEMM: on row counts whose last block is short
    (joined to the one before) or not, across `assign`'s chunks (a chunk of 997 rows, not a multiple
    of 8), with and without precomputed row norms, with an empty cluster, on data whose sums show
    their order; without SciPy's kernel, and below SPARSE_SUMS_MIN_D (d = 40), the two calls."""
    rng = np.random.default_rng(k * 1000 + d)
    for n in (5, 255, 256, 257, 575, 576, 2047, 2048 + 63, 2048 + 64):
        X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-8, 9, size=(n, 1))
        C = rng.standard_normal((k, d)) * 1e4
        C[-1] = 1e12                                        # never the nearest: an empty cluster
        for chunk_rows in (None, 997):
            if chunk_rows:
                monkeypatch.setattr(metrics, "CHUNK_ENTRIES", k * chunk_rows)
            want_labels, want_d2 = metrics.assign(X, C)
            want_sums = metrics.cluster_sums_in_order(X, want_labels, k)
            for X_sq in (None, metrics.row_norms(X)):
                labels, d2, sums = metrics.assign_with_sums(X, C, X_sq)
                assert labels.tobytes() == want_labels.tobytes()
                assert sums.tobytes() == want_sums.tobytes(), (n, chunk_rows)
                # the distances: bit-identical where the BLAS's GEMM of a block equals the chunk's
                # columns (OpenBLAS's Haswell kernels), else within a few units in the last place of
                # the terms they cancel (its SkylakeX kernels: at most 2 here)
                scale = metrics.row_norms(X) + np.einsum("ij,ij->i", C, C)[labels]
                assert np.all(np.abs(d2 - want_d2) <= 4 * np.finfo(float).eps * scale)
            monkeypatch.undo()
    monkeypatch.setattr(metrics, "csr_accumulate", lambda: None)
    labels, d2, sums = metrics.assign_with_sums(X, C)
    assert sums.tobytes() == metrics.cluster_sums_in_order(X, metrics.assign(X, C)[0], k).tobytes()


def test_add_rows_by_label_continues_one_product_across_blocks():
    """Blocks of rows added in turn (and all rows to one group) are the sequential sums."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((700, 6)) * 10.0 ** rng.integers(-8, 9, size=(700, 1))
    labels = rng.integers(0, 4, 700)
    kernel = metrics.csr_accumulate()
    out, total = np.zeros((4, 6)), np.zeros((1, 6))
    for s in range(0, 700, 64):
        metrics.add_rows_by_label(out, X[s:s + 64], labels[s:s + 64], kernel)
        metrics.add_rows_by_label(total, X[s:s + 64], None, kernel)
    assert out.tobytes() == _sequential_sums(X, labels, 4).tobytes()
    assert total.tobytes() == _sequential_sums(X, np.zeros(700, dtype=int), 1).tobytes()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_both_paths_give_the_same_bytes(compiled, monkeypatch):
    """A process starts in numpy and switches to the compiled kernels for good
    (`metrics.NUMPY_WORK_BUDGET`): both give the same labels, minima and sums, bit for bit, on ties
    (±0 among them), huge and tiny magnitudes, strided views and an empty cluster."""
    monkeypatch.setattr(metrics, "_compiled_pays", lambda entries: compiled)
    rng = np.random.default_rng(11)
    for k, n in ((1, 7), (3, 150), (16, 3000), (40, 257)):
        D = rng.integers(-2, 3, size=(k, n)).astype(float)            # many ties
        D[rng.random((k, n)) < 0.2] = -0.0                            # -0 ties +0
        D *= 10.0 ** rng.integers(-300, 300, size=(k, 1))
        for view in (D, D[:, ::3]):
            lab, m = metrics.first_argmin_down(view)
            assert np.array_equal(lab, view.argmin(axis=0))
            assert m.view(np.uint64).tolist() == view[lab, np.arange(view.shape[1])].view(np.uint64).tolist()
        X = rng.standard_normal((n, 5)) * 10.0 ** rng.integers(-8, 9, size=(n, 1))
        X[rng.random(n) < 0.1] = -0.0
        labels = rng.integers(0, max(k - 1, 1), n)
        assert metrics.cluster_sums_in_order(X, labels, k).view(np.uint64).tolist() == \
            _sequential_sums(X, labels, k).view(np.uint64).tolist()


def test_a_process_switches_to_the_compiled_kernels_after_its_numpy_budget(monkeypatch):
    monkeypatch.setattr(metrics, "_numba_loaded", lambda: False)
    monkeypatch.setattr(metrics, "_numpy_work", 0)
    monkeypatch.setattr(metrics, "NUMPY_WORK_BUDGET", 3 * (300 + metrics._CALL_WORK))
    paths = [metrics._compiled_pays(300) for _ in range(5)]
    assert paths == [False, False, False, True, True]
    monkeypatch.setattr(metrics, "_numpy_work", 0)
    monkeypatch.setattr(metrics, "_numba_loaded", lambda: True)     # numba already paid for: at once
    assert metrics._compiled_pays(300)
