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

`PrivateClusterer` wraps any such function as a scikit-learn style estimator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np


class DPClustError(ValueError):
    """Bad input to dpclust: the message says what and how to fix it."""


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

    @classmethod
    def from_accountant(cls, centers, accountant, iterations=None, **info) -> "ClusteringResult":
        return cls(
            centers=np.asarray(centers, dtype=float),
            epsilon_spent=accountant.spent_epsilon,
            delta_spent=accountant.spent_delta,
            iterations=iterations,
            info=dict(info),
            ledger=[[c.label, c.epsilon, c.delta] for c in accountant.ledger],
        )


Algorithm = Callable[..., ClusteringResult]


def validate_inputs(X, k, epsilon: float | None = None, delta: float | None = None) -> np.ndarray:
    """Check the common inputs and return X as a C-contiguous float64 array.

    Raises `DPClustError` with one clear sentence for: non-2-D or empty X, NaN/inf in X,
    k not an integer in [1, n], ε ≤ 0 or not finite, δ outside [0, 1).
    """
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DPClustError(f"X must be a non-empty 2-D array (n, d), got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number):
        raise DPClustError(f"X must be numeric, got dtype {X.dtype}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.isfinite(X).all():
        bad = int((~np.isfinite(X)).any(axis=1).sum())
        raise DPClustError(f"X contains NaN or infinite values in {bad} row(s); clean the data first")
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


def data_bounds(settings: Mapping[str, Any], X: np.ndarray | None = None) -> tuple[float, float]:
    """The public box [lo, hi] from settings (never from the data)."""
    if "bounds" not in settings:
        raise DPClustError("settings['bounds'] is missing: the public data domain must be given")
    lo, hi = settings["bounds"]
    if not hi > lo:
        raise DPClustError(f"settings['bounds'] must satisfy lo < hi, got {settings['bounds']!r}")
    return float(lo), float(hi)


class PrivateClusterer:
    """scikit-learn style wrapper around an algorithm function.

    Subclasses set `algorithm` (the function) and `default_settings` (a dict); then
    ``Est(n_clusters=5, epsilon=1.0, random_state=0, settings={...}).fit(X)`` sets
    ``cluster_centers_``, ``labels_``, ``inertia_``, ``epsilon_spent_``, ``delta_spent_``,
    ``n_iter_`` and ``result_``. If ``bounds`` is not given, the wrapper refuses to guess it from the
    data (that would leak): pass ``settings={"bounds": [lo, hi]}``.
    """

    algorithm: Algorithm
    default_settings: Mapping[str, Any] = {}

    def __init__(self, n_clusters: int = 8, epsilon: float = 1.0, delta: float = 0.0,
                 random_state=None, settings: Mapping[str, Any] | None = None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.settings = settings

    def get_params(self, deep: bool = True) -> dict:
        return {
            "n_clusters": self.n_clusters,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "random_state": self.random_state,
            "settings": self.settings,
        }

    def set_params(self, **params) -> "PrivateClusterer":
        for key, value in params.items():
            if key not in self.get_params():
                raise DPClustError(f"unknown parameter {key!r} for {type(self).__name__}")
            setattr(self, key, value)
        return self

    def fit(self, X, y=None) -> "PrivateClusterer":
        from .metrics import assign

        X = validate_inputs(X, self.n_clusters, self.epsilon, self.delta)
        settings = dict(self.default_settings)
        settings.update(self.settings or {})
        settings.setdefault("init_seed", int(np.random.default_rng(self.random_state).integers(2**63)))
        rng = np.random.default_rng(self.random_state)
        result = type(self).algorithm(X, int(self.n_clusters), float(self.epsilon), float(self.delta), rng, settings)
        self.result_ = result
        self.cluster_centers_ = result.centers
        self.labels_, d2 = assign(X, result.centers)
        self.inertia_ = float(d2.sum())
        self.epsilon_spent_ = result.epsilon_spent
        self.delta_spent_ = result.delta_spent
        self.n_iter_ = result.iterations
        return self

    def predict(self, X) -> np.ndarray:
        from .metrics import assign

        X = validate_inputs(X, 1)
        return assign(X, self.cluster_centers_)[0]

    def fit_predict(self, X, y=None) -> np.ndarray:
        return self.fit(X).labels_


def estimator_for(function: Algorithm, default_settings: Mapping[str, Any], name: str) -> type:
    """Build a `PrivateClusterer` subclass for `function` (one line per algorithm module)."""
    return type(name, (PrivateClusterer,), {
        "algorithm": staticmethod(function),
        "default_settings": dict(default_settings),
        "__doc__": f"scikit-learn style estimator for :func:`{function.__module__}.{function.__name__}`.",
    })
