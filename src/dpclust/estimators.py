"""scikit-learn estimators for the dpclust algorithms: one class per algorithm, all defined here.

Each class is one line, ``DPLloyd = build_estimator(dplloyd, dplloyd.settings.defaults(), "DPLloyd",
module=__name__)``, at the end of this module (`__all__` lists them). The algorithm modules never
import this module: every run job imports an algorithm module, and neither scikit-learn
(``sklearn.base`` alone takes over a second to import) nor this wrapper belongs to a run's import
closure or its code hash (`dpclust.pipeline.codehash`).

An estimator behaves like `sklearn.cluster.KMeans`::

    from dpclust.estimators import DPLloyd
    est = DPLloyd(n_clusters=5, epsilon=1.0, random_state=0, settings={"bounds": [-1.0, 1.0]}).fit(X)
    est.cluster_centers_, est.epsilon_spent_

and passes scikit-learn's estimator checks that apply to a randomised private clusterer with a
public data domain (tests/test_estimators.py lists the ones it cannot pass, and why).

Only ``cluster_centers_`` (and what is computed from it alone, e.g. `predict` on new data) is covered
by the (ε, δ) guarantee. ``labels_``, ``inertia_``, `transform` and `score` on the training data are
computed from the private data without noise, as in KMeans: releasing them is not private.

An estimator for an algorithm of your own (a function following `dpclust.api`'s contract)::

    from dpclust.estimators import build_estimator
    Mine = build_estimator(my_algorithm, {"iterations": 5}, "Mine")   # a PrivateClusterer subclass

To pickle its instances, bind the class to a module-level name equal to ``name`` in the module
given as ``module`` (default: the function's module).

The budget across fits (`dpclust.budget`): every fit of a private estimator is charged, with the
(ε, δ) its run actually spent, to a `dpclust.budget.FitAccountant` by sequential composition (all fits
are assumed to use the same data, the conservative case): the estimator's ``accountant=`` or, when it
is None (the default), the process-wide ``FitAccountant.default()``. The default one has an infinite
budget and only warns (`PrivacyBudgetWarning`, naming the total) once the fits together spend more
than one fit's ε, as a grid search over ε or cross-validation does; reset it with
``FitAccountant.default().reset()``. An accountant with a total refuses, before it runs, a fit that
could overspend it::

    from dpclust.estimators import DPLloyd, FitAccountant
    acc = FitAccountant(epsilon=3.0, delta=1e-6)
    GridSearchCV(DPLloyd(settings={"bounds": [0, 1]}, accountant=acc), {"epsilon": [0.5, 1.0]}).fit(X)
    # a fit that could take acc above ε = 3 is refused before it runs (FitBudgetExceeded; GridSearchCV
    # scores it as a failed fit unless error_score="raise"); acc.total() is what the fits spent

`sklearn.base.clone` (GridSearchCV, Pipeline, cross_validate) keeps a passed accountant by identity.

Other guards: a fit whose data reach the public bounds in every coordinate, at both ends, warns
(`PrivacyLeakWarning`: bounds computed from the data, e.g. by a MinMaxScaler fitted on X, leak its
range; see `PrivateClusterer`). An (ε, δ)-DP algorithm (Balcan, SuLQ, Nguyen) gets the default
``delta=DEFAULT_DELTA`` (1e-6, see there). A non-private algorithm (Lloyd) refuses a numeric epsilon
and reports ``epsilon_spent_ = delta_spent_ = None``.
"""

from __future__ import annotations

import copy
import math
import numbers
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from dpclust.api import Algorithm, DPClustError, non_finite_message, validate_inputs
from dpclust.balcan2017.algorithm import balcan, balcan_kmedian
from dpclust.balcan2017.kvariates import kvariates, kvariates_simhash
from dpclust.balcan2017.sample_aggregate import sample_aggregate
from dpclust.balcan2017.sulq import sulq
from dpclust.budget import FitAccountant, FitBudgetExceeded, PrivacyBudgetWarning, PrivacyLeakWarning
from dpclust.cohenaddad2022.coreset import lsh_coreset_kmedian
from dpclust.cohenaddad2022.private_lloyd import hst_kmeans, hst_kmedian, private_lloyd
from dpclust.examples.noisy_lloyd import noisy_lloyd
from dpclust.lushen2020.algorithm import lushen, posterior, prior
from dpclust.nguyen2021.algorithm import nguyen
from dpclust.peers.diffprivlib_kmeans import diffprivlib_kmeans  # imports diffprivlib only when fitted
from dpclust.su2016.dplloyd import dplloyd
from dpclust.su2016.eugkm import eugkm
from dpclust.su2016.gupt import gkm
from dpclust.su2016.hybrid import hybrid
from dpclust.su2016.lloyd import lloyd
from dpclust.su2016.privgene import pgkm

#: settings keys the runner supplies to every algorithm besides the algorithm's own (see dpclust.api)
RUN_KEYS = ("bounds", "init_seed", "init_pool_seeds")

#: δ of the estimators whose algorithm declares an (ε, δ)-DP guarantee at its default settings
#: (Balcan, SuLQ, Nguyen), when the user gives none. Fixed, never computed from the data (n is private
#: unless public). 1e-6 is what these algorithms' own errors suggest; δ should be well below 1/n (a δ of
#: order 1/n allows releasing a record outright): 1e-6 is below 1/n for n < 10^6 and below Nguyen et al.'s
#: n^-1.5 for n <= 10^4. For larger data pass a smaller delta yourself.
DEFAULT_DELTA = 1e-6
#: Coordinates within BOUNDS_RTOL·(hi − lo) outside the public box are rounding (a MinMaxScaler's maximum
#: can land one ulp above 1): they are clipped into the box (a fixed map, so the guarantee holds), not refused.
#: The same slack decides "reaches the bound" for the PrivacyLeakWarning.
BOUNDS_RTOL = 1e-9


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _valid_random_state(random_state) -> bool:
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.RandomState,
                                                         np.random.SeedSequence)):
        return True
    return (isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_))
            and random_state >= 0)


def _generator(random_state) -> np.random.Generator:
    """A numpy Generator from a scikit-learn style ``random_state`` (a Generator is used as is)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32, size=4, dtype=np.uint64))
    return np.random.default_rng(None if random_state is None else
                                 random_state if isinstance(random_state, np.random.SeedSequence)
                                 else int(random_state))


class PrivateClusterer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """Base class of the dpclust estimators (one subclass per algorithm, from `build_estimator`).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centres k (1 <= k <= number of rows of X).
    epsilon : float or None, default=1.0 (None for a non-private algorithm)
        Privacy budget ε of one fit (a finite number > 0). A non-private algorithm (e.g. Lloyd)
        refuses a number: it spends no budget, so its epsilon is None.
    delta : float, default=0.0 (DEFAULT_DELTA = 1e-6 for an (ε, δ)-DP algorithm: Balcan, SuLQ, Nguyen)
        δ in [0, 1); 0 for pure ε-DP. Algorithms that need δ > 0 say so when fitted.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seeds the shared initial centres (``settings["init_seed"]``, unless given) and every
        mechanism draw. The same int gives identical centres.
    settings : dict or None, default=None
        The algorithm's named settings, overriding its defaults (``default_settings``; see the
        algorithm's module docstring for each one's source). ``bounds = [lo, hi]`` is required: the
        public box [lo, hi]^d that every coordinate of X lies in, known before seeing the data
        (dpclust never estimates it from the data; that would leak privacy). Coordinates within
        ``BOUNDS_RTOL`` of the box width outside it (rounding) are clipped into it. If the data reach
        the box at both ends in *every* coordinate (min == lo and max == hi, within that slack), a
        private estimator warns (`PrivacyLeakWarning`): the bounds look computed from the data (e.g. a
        MinMaxScaler fitted on X in a Pipeline), which leaks the data's range. Ordinary data in a
        wider public box never reach both ends everywhere; data clipped to bounds fixed in advance may:
        then the warning can be ignored (``warnings.filterwarnings("ignore", category=PrivacyLeakWarning)``).
    accountant : dpclust.budget.FitAccountant or None, default=None
        The budget across fits, charged with (``epsilon_spent_``, ``delta_spent_``) by each fit of a
        private estimator (sequential composition: the fits are assumed to use the same data). None
        uses the process-wide ``FitAccountant.default()`` (infinite budget; warns with a
        `PrivacyBudgetWarning` once the fits together spend more than one fit's ε; reset it with
        ``FitAccountant.default().reset()``). An accountant with a total refuses (`FitBudgetExceeded`,
        before the fit runs) a fit whose (epsilon, delta) could exceed it. Clones (GridSearchCV,
        Pipeline) share the accountant given here, and share the default one when None.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The private centres.
    labels_ : ndarray of shape (n_samples,)
        Nearest centre of each training row (not private).
    inertia_ : float
        Sum of squared distances of the training rows to their nearest centre (not private).
    n_iter_ : int or None
        Iterations the algorithm reports.
    epsilon_spent_, delta_spent_ : float or None
        The budget actually spent (from the algorithm's accountant); None for a non-private algorithm.
    result_ : dpclust.api.ClusteringResult
        The algorithm's full result (``info`` holds per-stage values and traces).
    n_features_in_ : int
        Number of features seen in `fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when X has string column names.
    """

    #: the algorithm function (a staticmethod on each subclass)
    algorithm: Algorithm | None = None
    #: used when the function does not declare ``function.settings``
    default_settings: Mapping[str, Any] = {}
    #: private algorithms need a finite epsilon > 0; non-private ones refuse a number (epsilon=None)
    private: bool = True

    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=0.0, random_state=None, settings=None, accountant=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.settings = settings
        self.accountant = accountant

    # -- settings and parameters ------------------------------------------------------------------
    @classmethod
    def algorithm_defaults(cls) -> dict:
        """The algorithm's default settings: ``function.settings.defaults()`` if it declares them."""
        declared = getattr(cls.algorithm, "settings", None)
        if declared is not None and hasattr(declared, "defaults"):
            return dict(declared.defaults())
        return dict(cls.default_settings)

    def _resolved_settings(self) -> dict:
        name = type(self).__name__
        defaults = self.algorithm_defaults()
        given = self.settings if self.settings is not None else {}
        if not isinstance(given, Mapping):
            raise DPClustError(f"{name}: settings must be a dict of the algorithm's named settings, got {given!r}")
        unknown = sorted(set(given) - set(defaults) - set(RUN_KEYS))
        if unknown:
            raise DPClustError(f"{name} has no setting(s) {unknown}; its settings are "
                               f"{sorted(set(defaults) | set(RUN_KEYS))}")
        settings = copy.deepcopy(defaults)
        settings.update(copy.deepcopy(dict(given)))  # never mutate the parameter (scikit-learn convention)
        return settings

    def _check_params(self) -> None:
        name = type(self).__name__
        k = self.n_clusters
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
            raise DPClustError(f"{name}: n_clusters must be an integer >= 1, got {k!r}")
        eps = self.epsilon
        if not self.private:
            if eps is not None:
                raise DPClustError(
                    f"{name} is not private (its algorithm adds no noise, so it has no privacy budget): it "
                    f"refuses epsilon={eps!r}; leave epsilon=None (its default), or use a private algorithm "
                    f"(e.g. DPLloyd) for an ε-DP fit")
            if not (self.delta is None or (_is_number(self.delta) and self.delta == 0)):
                raise DPClustError(f"{name} is not private: it refuses delta={self.delta!r}; leave delta=0")
        elif not (_is_number(eps) and math.isfinite(eps) and eps > 0):
            raise DPClustError(f"{name}: epsilon must be a finite number > 0 (the privacy budget of this fit; "
                               f"pass e.g. epsilon=1.0), got {eps!r}")
        if self.private and not (_is_number(self.delta) and 0 <= self.delta < 1):
            raise DPClustError(f"{name}: delta must be a number in [0, 1), got {self.delta!r}")
        if self.accountant is not None and not isinstance(self.accountant, FitAccountant):
            raise DPClustError(f"{name}: accountant must be a dpclust.budget.FitAccountant or None (the "
                               f"process-wide default), got {self.accountant!r}")
        if not _valid_random_state(self.random_state):
            raise DPClustError(f"{name}: random_state must be None, an int >= 0, a numpy Generator or "
                               f"RandomState, got {self.random_state!r}")

    def _check_bounds(self, settings: dict, X: np.ndarray) -> np.ndarray:
        """X checked against the public box (rounding slack clipped into it); warns on data-derived bounds."""
        name = type(self).__name__
        if "bounds" not in settings:
            if not self.private:
                return X
            raise DPClustError(
                f"{name} needs the public data domain: pass settings={{'bounds': [lo, hi]}} with every "
                f"coordinate of X in [lo, hi] (known in advance; dpclust never estimates it from the data, "
                f"which would leak privacy)")
        bounds = settings["bounds"]
        try:
            lo, hi = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise DPClustError(f"{name}: settings['bounds'] must be [lo, hi], got {bounds!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise DPClustError(f"{name}: settings['bounds'] must be finite with lo < hi, got {bounds!r}")
        slack = BOUNDS_RTOL * (hi - lo)
        mins, maxs = X.min(axis=0), X.max(axis=0)
        if mins.min() < lo - slack or maxs.max() > hi + slack:
            outside = ((X < lo - slack) | (X > hi + slack)).any(axis=1)
            raise DPClustError(
                f"{name}: {int(outside.sum())} of {X.shape[0]} rows of X lie outside the public domain "
                f"[{lo:g}, {hi:g}] (settings['bounds']), which the privacy guarantee assumes: map the data "
                f"into it with a transform fixed in advance, clip it (np.clip(X, {lo:g}, {hi:g})), or give "
                f"wider public bounds")
        if mins.min() < lo or maxs.max() > hi:  # rounding only (within the slack)
            X = np.clip(X, lo, hi)
        if self.private and (mins <= lo + slack).all() and (maxs >= hi - slack).all():
            warnings.warn(
                f"{name}: the data reach the public bounds [{lo:g}, {hi:g}] (settings['bounds']) exactly in every "
                f"coordinate, at both ends: were the bounds computed from the data (e.g. a MinMaxScaler fitted "
                f"on X)? That leaks its range, outside the (epsilon, delta) guarantee; use bounds fixed in "
                f"advance. (If the data were clipped to bounds fixed in advance, ignore this warning.)",
                PrivacyLeakWarning, stacklevel=3)
        return X

    # -- scikit-learn API ---------------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Noise is drawn from `random_state`: a fixed int gives identical centres, so the estimator
        # is deterministic in scikit-learn's sense (random_state=None varies, as for KMeans).
        tags.non_deterministic = False
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        return tags

    @property
    def _n_features_out(self) -> int:
        return self.cluster_centers_.shape[0]

    def _validate_X(self, X, reset: bool) -> np.ndarray:
        name = type(self).__name__
        try:
            X = validate_data(self, X, reset=reset, dtype=np.float64, order="C", ensure_all_finite=False)
        except ValueError as exc:  # scikit-learn's words, on one line, as a DPClustError (still a ValueError)
            raise DPClustError(_input_error(name, X, exc)) from None
        if not np.isfinite(X).all():
            raise DPClustError(non_finite_message(X))
        return X

    def fit(self, X, y=None):
        """Run the algorithm on X (rows inside ``settings["bounds"]``); y is ignored."""
        from dpclust.metrics import assign

        name = type(self).__name__
        self._check_params()
        settings = self._resolved_settings()
        X = self._validate_X(X, reset=True)
        k = int(self.n_clusters)
        if k > X.shape[0]:
            raise DPClustError(f"{name}: n_samples={X.shape[0]} should be >= n_clusters={k}; "
                               f"pass n_clusters <= {X.shape[0]}")
        X = self._check_bounds(settings, X)
        epsilon = None if self.epsilon is None else float(self.epsilon)
        delta = 0.0 if self.delta is None else float(self.delta)
        X = validate_inputs(X, k, epsilon, delta)
        gen = _generator(self.random_state)
        settings.setdefault("init_seed", int(gen.integers(2**63)))
        if not self.private:  # spends nothing: no accountant is charged
            result, centers = self._run(X, k, epsilon, delta, gen, settings)
            spent = None, None
        else:
            accountant = self.accountant if self.accountant is not None else FitAccountant.default()
            # refuses before the run if (epsilon, delta) could overspend it; charges what the run spent
            with accountant.charge(epsilon, delta, label=f"{name}.fit") as pending:
                result, centers = self._run(X, k, epsilon, delta, gen, settings)
                spent = float(result.epsilon_spent), float(result.delta_spent)
                # a variant that is not DP as published reports no ε (NaN): charge what it was given
                pending.spent = tuple(s if math.isfinite(s) else m for s, m in zip(spent, (epsilon, delta)))
        self.result_ = result
        self.cluster_centers_ = centers
        self.labels_, d2 = assign(X, centers)
        self.inertia_ = float(d2.sum())
        self.n_iter_ = result.iterations
        self.epsilon_spent_, self.delta_spent_ = spent
        return self

    def _run(self, X, k, epsilon, delta, gen, settings):
        """The algorithm's result and its checked centres (raises, releasing nothing, if they are wrong)."""
        name = type(self).__name__
        result = type(self).algorithm(X, k, epsilon, delta, gen, settings)
        centers = np.asarray(result.centers, dtype=np.float64)
        if centers.shape != (k, X.shape[1]) or not np.isfinite(centers).all():
            raise DPClustError(f"{name}: the algorithm returned centres of shape {centers.shape} "
                               f"(expected {(k, X.shape[1])}) or non-finite values")
        if self.private and (result.epsilon_spent > epsilon * (1 + 1e-9)
                             or result.delta_spent > delta * (1 + 1e-9) + 1e-15):
            raise DPClustError(f"{name}: the algorithm spent (epsilon, delta) = ({result.epsilon_spent}, "
                               f"{result.delta_spent}) > the budget ({epsilon}, {delta})")
        return result, centers

    def predict(self, X):
        """Index of the nearest centre of each row of X."""
        from dpclust.metrics import assign

        check_is_fitted(self)
        return assign(self._validate_X(X, reset=False), self.cluster_centers_)[0]

    def transform(self, X):
        """Euclidean distance of each row of X to each centre, shape (n_samples, n_clusters)."""
        from dpclust.metrics import squared_distances

        check_is_fitted(self)
        return np.sqrt(squared_distances(self._validate_X(X, reset=False), self.cluster_centers_))

    def score(self, X, y=None):
        """Opposite of the k-means cost of X for the fitted centres (larger is better, as KMeans.score)."""
        from dpclust.metrics import assign

        check_is_fitted(self)
        return -float(assign(self._validate_X(X, reset=False), self.cluster_centers_)[1].sum())


def _input_error(name: str, X, exc: ValueError) -> str:
    """One line for an X that scikit-learn's `validate_data` refuses: the shape of a 1-D or 3-D X and how to
    reshape it (scikit-learn prints the whole array), a non-numeric X, else its own first line (e.g. "Found
    array with 0 sample(s) ...", "X has 1 features, but ... is expecting 2", which its checks expect)."""
    message = " ".join(str(exc).split("\n", 1)[0].split())
    try:
        shape = np.shape(X)
    except ValueError:  # a ragged list
        shape = None
    if shape is not None and len(shape) != 2 and not hasattr(X, "tocsr"):
        return (f"{name}: X must be a 2-D array (n_samples, n_features), got shape {shape}. Reshape your data: "
                f"X.reshape(-1, 1) if it has a single feature, X.reshape(1, -1) if it is a single sample")
    if "could not convert" in message:
        return (f"{name}: X must be numeric ({message}): encode or drop the non-numeric columns first, e.g. with "
                "sklearn.preprocessing.OrdinalEncoder")
    return message if name in message else f"{name}: {message}"


def _needs_delta(function: Algorithm, settings: Mapping[str, Any]) -> bool:
    """Whether the function declares an (ε, δ)-DP guarantee at these settings."""
    declared = getattr(function, "guarantee", None)
    try:
        guarantee = declared(dict(settings)) if callable(declared) else None
    except Exception:  # an undeclared or partial guarantee: no default δ
        return False
    return getattr(guarantee, "kind", None) == "(ε, δ)-DP"


def _init_with_defaults(epsilon_default: float | None, delta_default: float):
    """`PrivateClusterer.__init__` with other defaults for epsilon and delta (scikit-learn reads them from
    the signature: `get_params`, `repr`, `clone`)."""
    def __init__(self, n_clusters=8, *, epsilon=epsilon_default, delta=delta_default, random_state=None,
                 settings=None, accountant=None):
        PrivateClusterer.__init__(self, n_clusters, epsilon=epsilon, delta=delta, random_state=random_state,
                                  settings=settings, accountant=accountant)
    return __init__


def build_estimator(function: Algorithm, default_settings: Mapping[str, Any], name: str, *,
                    module: str | None = None, private: bool | None = None,
                    default_delta: float | None = None) -> type:
    """The `PrivateClusterer` subclass named `name` that fits with `function`.

    `function` follows `dpclust.api`'s contract, ``function(X, k, epsilon, delta, rng, settings) ->
    ClusteringResult``. Default settings come from ``function.settings.defaults()`` when the function
    declares its settings (``@dpclust.settings.declared``), else from `default_settings`. `private`
    (default: ``function.private`` if set, else True) says whether ``epsilon`` is required: a
    non-private algorithm has ``epsilon=None`` as its default and refuses a number. `default_delta`
    is the ``delta`` parameter's default (default: `DEFAULT_DELTA` when the function declares an
    (ε, δ)-DP guarantee at its default settings, else 0). `module` (default: the function's module) is
    the class's ``__module__``: bind the class to the name `name` there so that pickle finds it.
    """
    if private is None:
        private = bool(getattr(function, "private", True))
    attrs = {
        "algorithm": staticmethod(function),
        "default_settings": dict(default_settings),
        "private": bool(private),
        "__module__": module or function.__module__,
        "__qualname__": name,
    }
    cls = type(name, (PrivateClusterer,), attrs)
    if default_delta is None:
        default_delta = DEFAULT_DELTA if private and _needs_delta(function, cls.algorithm_defaults()) else 0.0
    epsilon_default = 1.0 if private else None
    if (epsilon_default, default_delta) != (1.0, 0.0):
        init = _init_with_defaults(epsilon_default, float(default_delta))
        init.__qualname__ = f"{name}.__init__"
        init.__module__ = cls.__module__
        cls.__init__ = init
    defaults = ", ".join(f"{key}={value!r}" for key, value in cls.algorithm_defaults().items()) or "none"
    defaults_note = "" if private else " (not private: epsilon=None, refuses a number)"
    if default_delta:
        defaults_note += f" (default delta={default_delta!r}: see dpclust.estimators.DEFAULT_DELTA)"
    cls.__doc__ = (
        f"scikit-learn estimator for :func:`{function.__module__}.{function.__name__}`{defaults_note}.\n\n"
        f"    Default settings: {defaults}.\n"
        + PrivateClusterer.__doc__.split("\n", 1)[1])
    return cls


# --- one estimator per algorithm (module attributes, so pickle finds them) -------------------------
DPLloyd = build_estimator(dplloyd, dplloyd.settings.defaults(), "DPLloyd", module=__name__)
Lloyd = build_estimator(lloyd, lloyd.settings.defaults(), "Lloyd", module=__name__, private=False)
EUGkM = build_estimator(eugkm, eugkm.settings.defaults(), "EUGkM", module=__name__)
PGkM = build_estimator(pgkm, pgkm.settings.defaults(), "PGkM", module=__name__)
Hybrid = build_estimator(hybrid, hybrid.settings.defaults(), "Hybrid", module=__name__)
GkM = build_estimator(gkm, gkm.settings.defaults(), "GkM", module=__name__)
Balcan = build_estimator(balcan, balcan.settings.defaults(), "Balcan", module=__name__)
BalcanKMedian = build_estimator(balcan_kmedian, balcan_kmedian.settings.defaults(), "BalcanKMedian", module=__name__)
SuLQ = build_estimator(sulq, sulq.settings.defaults(), "SuLQ", module=__name__)
KVariates = build_estimator(kvariates, kvariates.settings.defaults(), "KVariates", module=__name__)
KVariatesSimHash = build_estimator(kvariates_simhash, kvariates_simhash.settings.defaults(), "KVariatesSimHash",
                                   module=__name__)
SampleAggregate = build_estimator(sample_aggregate, sample_aggregate.settings.defaults(), "SampleAggregate",
                                  module=__name__)
Nguyen = build_estimator(nguyen, nguyen.settings.defaults(), "Nguyen", module=__name__)
LuShen = build_estimator(lushen, lushen.settings.defaults(), "LuShen", module=__name__)
PosteriorKMeans = build_estimator(posterior, posterior.settings.defaults(), "PosteriorKMeans", module=__name__)
PriorKMeans = build_estimator(prior, prior.settings.defaults(), "PriorKMeans", module=__name__)
HSTKMedian = build_estimator(hst_kmedian, hst_kmedian.settings.defaults(), "HSTKMedian", module=__name__)
HSTKMeans = build_estimator(hst_kmeans, hst_kmeans.settings.defaults(), "HSTKMeans", module=__name__)
PrivateLloydMedian = build_estimator(private_lloyd, private_lloyd.settings.defaults(), "PrivateLloydMedian",
                                     module=__name__)
LSHCoresetKMedian = build_estimator(lsh_coreset_kmedian, lsh_coreset_kmedian.settings.defaults(),
                                    "LSHCoresetKMedian", module=__name__)
NoisyLloyd = build_estimator(noisy_lloyd, noisy_lloyd.settings.defaults(), "NoisyLloyd", module=__name__)
#: the `peers` extra: fitting needs diffprivlib (`pip install -e .[peers]`), defining the class does not
DiffprivlibKMeans = build_estimator(diffprivlib_kmeans, diffprivlib_kmeans.settings.defaults(), "DiffprivlibKMeans",
                                    module=__name__)

__all__ = [
    "PrivateClusterer", "build_estimator", "DEFAULT_DELTA",
    "FitAccountant", "FitBudgetExceeded", "PrivacyBudgetWarning", "PrivacyLeakWarning",
    "DPLloyd", "Lloyd", "EUGkM", "PGkM", "Hybrid", "GkM",
    "Balcan", "BalcanKMedian", "SuLQ", "KVariates", "KVariatesSimHash", "SampleAggregate",
    "Nguyen",
    "LuShen", "PosteriorKMeans", "PriorKMeans",
    "HSTKMedian", "HSTKMeans", "PrivateLloydMedian", "LSHCoresetKMedian",
    "NoisyLloyd",
    "DiffprivlibKMeans",
]
