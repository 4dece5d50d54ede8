"""EUGkM's speed-only helpers keep the bytes of the straightforward code they replace.

`_centres32` writes the float32 cell centres of the labelling pass by broadcasting (the earlier code
cast `Grid.centres()`, computed through int64 cell indices, to float32); `_GridLayout.sums` uses int32
bincount keys where they fit (earlier: intp). Both must give the very same bytes, so every run
record keeps its bytes for the same seed.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpclust.su2016 import eugkm


@pytest.mark.parametrize("m,d,lo,width", [(1, 1, -1.0, 2.0), (5, 1, -1.0, 0.4), (7, 2, -1.0, 2.0 / 7),
                                          (4, 3, -0.5, 0.25), (3, 5, -1.0, 2.0 / 3), (2, 9, -15.0, 15.0),
                                          (4, 6, -1.0, 0.5)])
def test_centres32_are_the_bytes_of_the_float64_centres_cast(m, d, lo, width):
    grid = eugkm.Grid(m, d, lo, width)
    want = np.ascontiguousarray(grid.centres(), dtype=np.float32)
    got = eugkm._centres32(grid)
    assert got.dtype == np.float32 and got.flags.c_contiguous and got.shape == (grid.total, d)
    assert got.tobytes() == want.tobytes()


def test_layout_points_are_the_cell_centres_in_grid_order():
    grid = eugkm.Grid(3, 4, -1.0, 2.0 / 3)
    lay = eugkm._GridLayout(grid, np.ones(grid.total), 2)
    assert lay.points.tobytes() == np.ascontiguousarray(grid.centres(), dtype=np.float32).tobytes()
    assert (grid.cell_of(lay.points.astype(float)) == np.arange(grid.total)).all()


def test_key_type_is_int32_only_where_every_key_fits():
    assert eugkm._key_type(1) is np.int32
    assert eugkm._key_type(2 ** 31) is np.int32            # keys 0 … 2^31 − 1
    assert eugkm._key_type(2 ** 31 + 1) is np.intp


@pytest.mark.parametrize("m,d,k", [(4, 6, 5), (3, 7, 3), (6, 2, 4), (5, 1, 2), (2, 9, 7)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_int32_keys_give_the_bytes_of_intp_keys(m, d, k, seed, monkeypatch):
    """The same sums, bit for bit, whichever key type `_GridLayout` picks (blocks of a few rows)."""
    monkeypatch.setattr(eugkm, "SUMS_BLOCK_CELLS", 3 * m ** (d - d // 2))
    rng = np.random.default_rng(seed * 1000 + m * 100 + d * 10 + k)
    grid = eugkm.Grid(m, d, -1.0, 2.0 / m)
    w = rng.laplace(0, 1, grid.total) * 10.0 ** rng.integers(-8, 9, grid.total)   # order-sensitive sums
    labels = rng.integers(0, k, grid.total).astype(np.int32)
    lay32 = eugkm._GridLayout(grid, w, k)
    assert lay32.key.dtype == np.int32
    monkeypatch.setattr(eugkm, "_key_type", lambda n_keys: np.intp)
    lay64 = eugkm._GridLayout(grid, w, k)
    assert lay64.key.dtype == np.intp
    for a, b in zip(lay32.sums(labels), lay64.sums(labels)):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grid_lloyd_bytes_do_not_depend_on_the_key_type(seed, monkeypatch):
    """The whole weighted Lloyd (labels, sums, stopping) from a few sets: the same bytes."""
    rng = np.random.default_rng(seed)
    grid = eugkm.Grid(3, 6, -1.0, 2.0 / 3)
    w = rng.laplace(0, 2, grid.total) + rng.poisson(2, grid.total) * (rng.random(grid.total) < 0.2)
    syn = eugkm.Synopsis(grid, w, {})
    inits = rng.uniform(-0.8, 0.8, (3, 4, 6))
    got = eugkm.grid_lloyd(syn, inits, 8, 1e-4, (-1.0, 1.0))
    monkeypatch.setattr(eugkm, "_key_type", lambda n_keys: np.intp)
    want = eugkm.grid_lloyd(syn, inits, 8, 1e-4, (-1.0, 1.0))
    for a, b in zip(got, want):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
