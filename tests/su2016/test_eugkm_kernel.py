"""EUGkM's labelling + sums kernel (`eugkm._GridLayout.sums`, compiled `_label_and_sum`) against a
brute-force float64 reference over the materialised cell centres (`Grid.centres()`): every cell's
label is a nearest centre (the first one on exact ties, as numpy's argmin), and the per-cluster
weighted counts, coordinate sums and cost are those of the reference, negative weights included.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpclust.su2016 import eugkm


def _weights(rng, n):
    """Noisy counts as the synopsis releases them: Lap noise, some cells with points, many < 0."""
    return rng.laplace(0, 1, n) + rng.poisson(3, n) * (rng.random(n) < 0.3)


def _kernel(grid, w, C):
    lay = eugkm._GridLayout(grid, w, len(C))
    labels = np.full(grid.total, -1, dtype=np.intp)
    count, total, cost = lay.sums(C, labels)
    return labels, count, total, cost


def _brute_force(grid, w, C):
    """Squared distances of every cell centre to every centre, written directly (float64)."""
    X = grid.centres()
    D = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    return X, D


def _sums(X, w, labels, k):
    count = np.zeros(k)
    total = np.zeros((k, X.shape[1]))
    np.add.at(count, labels, w)
    np.add.at(total, labels, w[:, None] * X)
    return count, total


def _close(got, want, scale):
    """Equal within 1e-12 relative to the sum of the magnitudes (noisy counts cancel)."""
    return np.allclose(got, want, rtol=1e-12, atol=1e-12 * scale)


def test_cells_are_numbered_u_times_m2_plus_v():
    """The kernel's split: cell u·M2 + v of `Grid` is (P1[u], P2[v]) — the grid's own order."""
    for m, d in [(3, 1), (4, 2), (2, 5), (3, 6)]:
        grid = eugkm.Grid(m, d, -1.0, 2.0 / m)
        lay = eugkm._GridLayout(grid, np.zeros(grid.total), 2)
        X = grid.centres()
        u, v = np.divmod(np.arange(grid.total), lay.M2)
        assert lay.M1 * lay.M2 == grid.total
        assert X.tobytes() == np.hstack([lay.P1[u], lay.P2[v]]).tobytes()
        assert (grid.cell_of(X) == np.arange(grid.total)).all()


@pytest.mark.parametrize("d", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("m", [2, 3, 4, 5])
@pytest.mark.parametrize("k", [1, 2, 4, 6])
def test_labels_and_sums_are_the_brute_force_ones(d, m, k):
    rng = np.random.default_rng(1000 * d + 100 * m + k)
    grid = eugkm.Grid(m, d, -1.0, 2.0 / m)
    w = _weights(rng, grid.total)
    C = rng.uniform(-1.0, 1.0, (k, d))
    if k >= 3:
        C[2] = C[0]                          # an exact tie everywhere between centres 0 and 2
    labels, count, total, cost = _kernel(grid, w, C)
    X, D = _brute_force(grid, w, C)
    ref = D.argmin(axis=1)
    near = D[np.arange(grid.total), labels]
    best = D.min(axis=1)
    # a nearest centre (a + b and the direct sum round differently, so compare distances) ...
    assert labels.min() >= 0 and labels.max() < k
    assert np.allclose(near, best, rtol=1e-12, atol=1e-15)
    # ... the first one: the labels are numpy's argmin wherever the minimum is not a float64 near-tie
    gap = np.sort(D, axis=1)[:, 1] - best if k > 1 else np.full(grid.total, np.inf)
    clear = gap > 1e-12
    assert (labels[clear] == ref[clear]).all()
    if k >= 3:
        assert not (labels == 2).any()       # the duplicate of centre 0 never wins
    want_count, want_total = _sums(X, w, labels, k)
    scale = float(np.abs(w).sum())
    assert _close(count, want_count, scale)
    assert _close(total, want_total, scale * float(np.abs(X).max()))
    assert _close(cost, float((w * near).sum()), scale * float(D.max()))


@pytest.mark.parametrize("d", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_exact_ties_go_to_the_lowest_index(d, k):
    """Cell centres ±0.25, ±0.75 and centres on the grid of step 0.5: every distance is exact in
    float64 (dyadic), many cells are equidistant from several centres, and the label is then the
    lowest index, exactly as numpy's argmin of the direct distances."""
    rng = np.random.default_rng(d * 10 + k)
    grid = eugkm.Grid(4, d, -1.0, 0.5)
    C = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(k, d))
    C[1] = C[0]
    C[1, 0] += 0.5 if C[0, 0] < 1.0 else -0.5   # the cells halfway between centres 0 and 1 tie
    w = _weights(rng, grid.total)
    labels, count, total, cost = _kernel(grid, w, C)
    X, D = _brute_force(grid, w, C)
    ties = (D == D.min(axis=1, keepdims=True)).sum(axis=1) > 1
    assert ties.any()
    assert (labels == D.argmin(axis=1)).all()
    want_count, want_total = _sums(X, w, labels, k)
    scale = float(np.abs(w).sum())
    assert _close(count, want_count, scale) and _close(total, want_total, scale)
    assert _close(cost, float((w * D.min(axis=1)).sum()), scale * float(D.max()))


def test_identical_centres_label_the_lower_index():
    grid = eugkm.Grid(3, 4, -1.0, 2.0 / 3)
    C = np.array([[0.1, -0.2, 0.3, 0.0], [0.5, 0.5, 0.5, 0.5], [0.1, -0.2, 0.3, 0.0], [0.5, 0.5, 0.5, 0.5]])
    labels, count, total, _ = _kernel(grid, np.ones(grid.total), C)
    assert set(np.unique(labels)) == {0, 1}
    assert count[2] == count[3] == 0.0 and not total[2:].any()


@pytest.mark.parametrize("m,d,k", [(2, 1, 1), (5, 3, 4), (4, 6, 6), (3, 5, 2)])
def test_the_same_input_gives_the_same_bytes(m, d, k):
    rng = np.random.default_rng(m + d + k)
    grid = eugkm.Grid(m, d, -1.0, 2.0 / m)
    w = _weights(rng, grid.total)
    C = rng.uniform(-1.0, 1.0, (k, d))
    first = _kernel(grid, w, C)
    second = _kernel(grid, w.copy(), C.copy())
    lay = eugkm._GridLayout(grid, w, k)
    without_labels = lay.sums(C)                 # the Lloyd's call: no labels written
    for a, b in itertools.chain(zip(first, second), zip(first[1:], without_labels)):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
