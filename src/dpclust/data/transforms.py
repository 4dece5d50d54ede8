"""Named data transforms: ``apply_transform(name, X, entry) -> (X2, [lo, hi])``.

* ``minmax_pm1``: per attribute, min–max to [−1, 1] (Su et al. §5.1); a constant column maps to 0.
* ``minmax_01``: per attribute, min–max to [0, 1] (Lu & Shen §7.1; the HST code's public box); a
  constant column maps to 0.5 (the centre of the box, as 0 is for [−1, 1]).
* ``raw``: X unchanged; the box is the registry entry's public ``bounds`` (e.g. MNIST [0, 255]).
  Missing bounds, or data outside them, is an error.

The min–max transforms use the data's own minima and maxima, as the papers do (their
normalisation is outside the privacy analysis); the returned box is then public by construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpclust.api import DPClustError, non_finite_message


def _minmax(X: np.ndarray, lo: float, hi: float) -> np.ndarray:
    mn = X.min(axis=0)
    span = X.max(axis=0) - mn
    const = span == 0
    scaled = (X - mn) / np.where(const, 1.0, span)
    out = lo + (hi - lo) * scaled
    out[:, const] = (lo + hi) / 2.0
    # guard against rounding just outside the box
    np.clip(out, lo, hi, out=out)
    return out


def _entry_get(entry: Any, key: str, default=None):
    if entry is None:
        return default
    if isinstance(entry, Mapping):
        return entry.get(key, default)
    return getattr(entry, key, default)


def _raw(X: np.ndarray, entry) -> tuple[np.ndarray, list[float]]:
    name = _entry_get(entry, "name", "?")
    bounds = _entry_get(entry, "bounds")
    if bounds is None:
        raise DPClustError(f"transform 'raw' needs public bounds, but dataset {name!r} has none in "
                           "config/datasets.yaml; use minmax_pm1 or minmax_01")
    lo, hi = float(bounds[0]), float(bounds[1])
    if X.size and (X.min() < lo or X.max() > hi):
        raise DPClustError(f"dataset {name!r}: data span [{X.min():g}, {X.max():g}], outside its registry "
                           f"bounds [{lo:g}, {hi:g}]; fix the bounds or use a min-max transform")
    return X, [lo, hi]


TRANSFORMS = {
    "minmax_pm1": lambda X, entry: (_minmax(X, -1.0, 1.0), [-1.0, 1.0]),
    "minmax_01": lambda X, entry: (_minmax(X, 0.0, 1.0), [0.0, 1.0]),
    "raw": _raw,
}


def apply_transform(name: str, X, entry: Mapping[str, Any] | None = None) -> tuple[np.ndarray, list[float]]:
    """Transform X (n, d) by the named transform; returns (X2 float64, [lo, hi])."""
    if name not in TRANSFORMS:
        raise DPClustError(f"unknown transform {name!r}; valid: {', '.join(sorted(TRANSFORMS))}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        raise DPClustError(f"transform {name!r} needs a non-empty 2-D array, got shape {X.shape}")
    if not np.isfinite(X).all():  # before scaling: one NaN would spread to its whole column
        raise DPClustError(non_finite_message(X))
    X2, box = TRANSFORMS[name](X, entry)
    return X2, [float(box[0]), float(box[1])]
