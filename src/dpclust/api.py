"""The contract every dpclust algorithm follows.

An algorithm is a plain function::

    def algorithm(X, k, epsilon, delta, rng, settings) -> ClusteringResult

`X` is an (n, d) float array already mapped into the experiment's public domain, `settings` a
mapping of the algorithm's named settings (every value comes from config, none is a silent
constant), `rng` a `numpy.random.Generator`. It never reads files. It spends its budget through an
`Accountant(epsilon, delta)` and reports what it actually spent in the result.

Keys the runner always puts into `settings` (besides the algorithm's own):

* ``bounds``: ``[lo, hi]``, the public box ``[lo, hi]^d`` that contains every point (from the
  experiment's named transform);
* ``init_seed``: an int; runs with equal ``init_seed`` share their initial centres (Su et al.
  §5.1's 30 initial sets, Lu & Shen §7.1's shared initial centroids). Draw initial centres from
  ``np.random.default_rng(settings["init_seed"])`` when the protocol says so;
* ``init_pool_seeds`` (only when the experiment sets ``init_sets``): the ``init_seed`` of every
  member of that shared pool, in order, for algorithms that run from all of them (Su et al.'s
  EUGkM uses "the same 30 sets of initial centroids as those generated for DPLloyd", §5.1).

The scikit-learn estimators of the algorithms live in `dpclust.estimators` (``from dpclust.estimators
import DPLloyd``), one class per algorithm, built with `dpclust.estimators.build_estimator`, which
also wraps a function of your own. No algorithm module imports them: the run path (every run job
imports an algorithm module) stays free of scikit-learn, whose ``sklearn.base`` alone takes more
than a second to import, and the estimators stay out of the runs' code hashes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class DPClustError(ValueError):
    """Bad input to dpclust: the message says what and how to fix it."""


class Refused(DPClustError):
    """An algorithm declines a run at a documented limit of its public inputs (n, d, k, ε, settings),
    before it spends any budget, e.g. EUGkM's grid above its memory guard `max_grid_cells`. The
    runner records the block as status `refused` with the message (no runs) instead of failing the
    job; tables show the cell as refused, never ranked. Raise it only for such limits: a refusal
    must not depend on the data beyond its public size, nor on the seed."""


@dataclass
class ClusteringResult:
    """What an algorithm returns.

    `info` holds algorithm-specific extras for the figures (traces, per-stage values); it must be
    JSON-serialisable (numbers, lists, strings, nested dicts; numpy arrays are converted).
    """

    centers: np.ndarray
    epsilon_spent: float
    delta_spent: float = 0.0
    iterations: int | None = None
    info: dict[str, Any] = field(default_factory=dict)
    ledger: list = field(default_factory=list)
    #: the δ that floating-point sampling adds to the run (reported, never charged):
    #: `dpclust.mechanisms.FLOATING_POINT_GUARANTEE`
    floating_point_delta: float = 0.0

    @classmethod
    def from_accountant(cls, centers, accountant, iterations=None, **info) -> ClusteringResult:
        return cls(
            centers=np.asarray(centers, dtype=float),
            epsilon_spent=accountant.spent_epsilon,
            delta_spent=accountant.spent_delta,
            iterations=iterations,
            info=dict(info),
            ledger=[[c.label, c.epsilon, c.delta] for c in accountant.ledger],
            floating_point_delta=float(getattr(accountant, "floating_point_delta", 0.0)),
        )


Algorithm = Callable[..., ClusteringResult]


def validate_inputs(X, k, epsilon: float | None = None, delta: float | None = None) -> np.ndarray:
    """Check the common inputs and return X as a C-contiguous float64 array.

    Raises `DPClustError` with one clear sentence for: non-2-D or empty X, NaN/inf in X,
    k not an integer in [1, n], ε ≤ 0 or not finite, δ outside [0, 1). The refusal of k > n reveals
    whether n < k: every guarantee, those that do not release n included, assumes n ≥ k is public.
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DPClustError(f"X must be a non-empty 2-D array (n, d), got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number):
        raise DPClustError(f"X must be numeric, got dtype {X.dtype}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.isfinite(X).all():
        raise DPClustError(non_finite_message(X))
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise DPClustError(f"k must be an integer, got {k!r}")
    if k < 1:
        raise DPClustError(f"k must be at least 1, got {k}")
    if k > X.shape[0]:
        raise DPClustError(f"k = {k} exceeds the number of points n = {X.shape[0]}")
    if epsilon is not None and not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise DPClustError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if delta is not None and not (isinstance(delta, (int, float)) and math.isfinite(delta) and 0 <= delta < 1):
        raise DPClustError(f"delta must be in [0, 1), got {delta!r}")
    return X


def non_finite_message(X: np.ndarray, name: str = "X") -> str:
    """One sentence naming how many rows of the 2-D `X` hold a NaN or ±inf, where, and what to do."""
    bad_cells = ~np.isfinite(X)
    bad_rows = np.flatnonzero(bad_cells.any(axis=1))
    bad_cols = np.flatnonzero(bad_cells.any(axis=0))
    n_bad, n = len(bad_rows), X.shape[0]
    rows = ", ".join(str(int(i)) for i in bad_rows[:5]) + (", ..." if n_bad > 5 else "")
    cols = ", ".join(str(int(j)) for j in bad_cols[:5]) + (", ..." if len(bad_cols) > 5 else "")
    return (f"{name} contains NaN or infinite values in {n_bad} of {n} row{'s' if n != 1 else ''} "
            f"(row{'s' if n_bad != 1 else ''} {rows}; column{'s' if len(bad_cols) != 1 else ''} {cols}): "
            f"clean or drop those rows first")


def data_bounds(settings: Mapping[str, Any], X: np.ndarray | None = None) -> tuple[float, float]:
    """The public box [lo, hi] from settings (never from the data)."""
    if "bounds" not in settings:
        raise DPClustError("settings['bounds'] is missing: give the public data domain [lo, hi] that every "
                           "coordinate lies in, e.g. settings={'bounds': [lo, hi]}; dpclust never estimates it "
                           "from the data (that would leak privacy)")
    lo, hi = settings["bounds"]
    if not hi > lo:
        raise DPClustError(f"settings['bounds'] must satisfy lo < hi, got {settings['bounds']!r}")
    return float(lo), float(hi)

