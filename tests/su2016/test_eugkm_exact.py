"""EUGkM's weighted Lloyd keeps exact, reproducible bytes.

The labelling + sums pass (`eugkm._GridLayout.sums`, the compiled `_label_and_sum`) labels every
cell in float64 (`test_eugkm_kernel.py` checks it against brute force) and adds the noisy counts
per row u and per column v in grid order, so its counts and coordinate sums are the very bytes of
one bincount over every cell with its labels (the formula the earlier, blocked bincounts kept), and
the same input gives the same bytes. Importing the module must not import numba (other papers' run
jobs import `dpclust` and the registry's modules; the kernel compiles on first use).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dpclust.su2016 import eugkm


@pytest.mark.parametrize("m,d,k", [(4, 6, 5), (3, 7, 3), (6, 2, 4), (5, 1, 2), (2, 9, 7)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sums_are_the_bytes_of_one_bincount_in_grid_order(m, d, k, seed):
    rng = np.random.default_rng(seed * 1000 + m * 100 + d * 10 + k)
    grid = eugkm.Grid(m, d, -1.0, 2.0 / m)
    w = rng.laplace(0, 1, grid.total) * 10.0 ** rng.integers(-8, 9, grid.total)   # order-sensitive sums
    C = rng.uniform(-1.0, 1.0, (k, d))
    lay = eugkm._GridLayout(grid, w, k)
    labels = np.empty(grid.total, dtype=np.intp)
    count, total, _ = lay.sums(C, labels)
    u, v = np.divmod(np.arange(grid.total), lay.M2)
    R = np.bincount(u * k + labels, weights=lay.w, minlength=lay.M1 * k).reshape(lay.M1, k)
    Cv = np.bincount(v * k + labels, weights=lay.w, minlength=lay.M2 * k).reshape(lay.M2, k)
    want_total = np.empty((k, d))
    want_total[:, :lay.d1] = R.T @ lay.P1
    want_total[:, lay.d1:] = Cv.T @ lay.P2
    assert count.tobytes() == R.sum(axis=0).tobytes()
    assert total.tobytes() == want_total.tobytes()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grid_lloyd_gives_the_same_bytes_twice(seed):
    """The whole weighted Lloyd (labels, sums, stopping, cost) from a few sets: the same bytes."""
    rng = np.random.default_rng(seed)
    grid = eugkm.Grid(3, 6, -1.0, 2.0 / 3)
    w = rng.laplace(0, 2, grid.total) + rng.poisson(2, grid.total) * (rng.random(grid.total) < 0.2)
    syn = eugkm.Synopsis(grid, w, {})
    inits = rng.uniform(-0.8, 0.8, (3, 4, 6))
    got = eugkm.grid_lloyd(syn, inits, 8, 1e-4, (-1.0, 1.0))
    again = eugkm.grid_lloyd(eugkm.Synopsis(grid, w.copy(), {}), inits.copy(), 8, 1e-4, (-1.0, 1.0))
    for a, b in zip(got, again):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_grid_lloyd_cost_is_the_weighted_cost_at_the_final_centres():
    rng = np.random.default_rng(7)
    grid = eugkm.Grid(4, 3, -1.0, 0.5)
    w = rng.laplace(0, 1, grid.total) + 5.0 * (rng.random(grid.total) < 0.2)
    C, cost, _ = eugkm.grid_lloyd(eugkm.Synopsis(grid, w, {}), rng.uniform(-0.8, 0.8, (2, 3, 3)), 5, 1e-4,
                                  (-1.0, 1.0))
    X = grid.centres()
    for s in range(2):
        D = ((X[:, None, :] - C[s][None]) ** 2).sum(axis=2).min(axis=1)
        assert np.isclose(cost[s], float((w * D).sum()), rtol=1e-12, atol=1e-12 * float(np.abs(w).sum()))


def test_importing_eugkm_does_not_import_numba():
    code = ("import sys, dpclust, dpclust.su2016.eugkm, dpclust.su2016.gupt, dpclust.su2016.hybrid, "
            "dpclust.estimators; print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_kernel_compiles_without_a_writable_cache(monkeypatch):
    """No cache directory numba can write (its locators all decline): compiled per process, with
    the same bytes as the cached kernel."""
    from numba.core import caching

    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])
    uncached = eugkm._kernel.__wrapped__()
    rng = np.random.default_rng(3)
    grid = eugkm.Grid(3, 5, -1.0, 2.0 / 3)
    lay = eugkm._GridLayout(grid, rng.laplace(0, 1, grid.total), 4)
    C = rng.uniform(-1.0, 1.0, (4, 5))
    args = (lay.P1, lay.P2, C, lay.w, np.empty(0, dtype=np.intp))
    for a, b in zip(uncached(*args), eugkm._kernel()(*args)):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
