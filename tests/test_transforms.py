"""Named transforms: minmax_pm1, minmax_01, raw."""

from __future__ import annotations

import numpy as np
import pytest

from dpclust.api import DPClustError
from dpclust.data import apply_transform, load_registry

X = np.array([[0.0, 5.0, 3.0], [10.0, 5.0, 1.0], [5.0, 5.0, 2.0]])


def test_minmax_pm1_constant_column_to_zero():
    X2, box = apply_transform("minmax_pm1", X, {"name": "t"})
    assert box == [-1.0, 1.0]
    np.testing.assert_allclose(X2[:, 0], [-1, 1, 0])
    np.testing.assert_allclose(X2[:, 1], 0)
    np.testing.assert_allclose(X2[:, 2], [1, -1, 0])
    assert X2.min() >= -1 and X2.max() <= 1
    assert X[0, 0] == 0.0  # input untouched


def test_minmax_01():
    X2, box = apply_transform("minmax_01", X, None)
    assert box == [0.0, 1.0]
    np.testing.assert_allclose(X2[:, 0], [0, 1, 0.5])
    np.testing.assert_allclose(X2[:, 1], 0.5)


def test_raw_uses_registry_bounds():
    entry = load_registry().dataset("mnist70k")
    data = np.array([[0.0, 255.0], [12.0, 3.0]])
    X2, box = apply_transform("raw", data, entry)
    assert box == [0.0, 255.0]
    np.testing.assert_array_equal(X2, data)


def test_raw_errors():
    with pytest.raises(DPClustError, match="needs public bounds.*'s1'"):
        apply_transform("raw", X, load_registry().dataset("s1"))
    with pytest.raises(DPClustError, match="outside its registry bounds"):
        apply_transform("raw", X + 300, load_registry().dataset("mnist60k"))


def test_unknown_transform_lists_valid():
    with pytest.raises(DPClustError, match="unknown transform 'minmax'.*minmax_01, minmax_pm1, raw"):
        apply_transform("minmax", X, None)
