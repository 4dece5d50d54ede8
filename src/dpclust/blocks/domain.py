"""The public domain: every algorithm's sensitivity analysis assumes X ⊂ [lo, hi]^d.

`public_box(settings, X)` reads the box from ``settings["bounds"]`` (set by the runner from the
experiment's named transform; never estimated from the data) and refuses data outside it, with
no tolerance: the transforms place data exactly inside (min–max scaling clips its rounding), and a
point outside would break the sensitivity bound the noise is calibrated to. Nothing is clipped
silently.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dpclust.api import DPClustError, data_bounds


def inside(X: np.ndarray, lo: float, hi: float) -> bool:
    """True if every coordinate of X is finite and lies in [lo, hi]."""
    X = np.asarray(X)
    return bool(X.size == 0 or (np.isfinite(X).all() and X.min() >= lo and X.max() <= hi))


def require_inside(X: np.ndarray, lo: float, hi: float, who: str = "X") -> None:
    if not inside(X, lo, hi):
        X = np.asarray(X)
        span = f"[{np.nanmin(X):g}, {np.nanmax(X):g}]" if X.size else "[]"
        raise DPClustError(f"{who} has values {span} outside the public box [{lo:g}, {hi:g}] "
                           "(settings['bounds']); map the data into the box first (e.g. a min-max transform)")


def public_box(settings: Mapping, X: np.ndarray | None = None) -> tuple[float, float]:
    """(lo, hi) from ``settings["bounds"]``; raises `DPClustError` if X has a point outside."""
    lo, hi = data_bounds(settings)
    if X is not None:
        require_inside(X, lo, hi)
    return lo, hi
