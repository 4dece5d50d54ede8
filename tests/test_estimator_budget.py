"""The privacy budget across estimator fits (`dpclust.budget.FitAccountant`) and the estimators' other
guards: bounds computed from the data (`PrivacyLeakWarning`), the default δ of (ε, δ)-DP algorithms,
and non-private algorithms refusing an ε."""
from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import MinMaxScaler

from dpclust.api import ClusteringResult, DPClustError
from dpclust.budget import FitAccountant, FitBudgetExceeded, PrivacyBudgetWarning, PrivacyLeakWarning
from dpclust.estimators import (
    DEFAULT_DELTA,
    Balcan,
    BalcanKMedian,
    DPLloyd,
    Lloyd,
    Nguyen,
    SuLQ,
    build_estimator,
)

BOX = {"bounds": [0.0, 1.0]}
FAST = {"bounds": [0.0, 1.0], "iterations": 1}
EPSILONS = [0.1, 0.5, 1.0, 2.0, 5.0]


@pytest.fixture(autouse=True)
def fresh_default():
    """Each test gets its own process-wide default accountant (restored afterwards)."""
    previous = FitAccountant.set_default(FitAccountant())
    yield FitAccountant.default()
    FitAccountant.set_default(previous)


def data(n=40, d=2, seed=0, lo=0.1, hi=0.9):
    return np.random.default_rng(seed).uniform(lo, hi, size=(n, d))


def fast_dplloyd(**params):
    return DPLloyd(**{"n_clusters": 2, "random_state": 0, "settings": dict(FAST), **params})


# --- the budget across fits ----------------------------------------------------------------------
def test_grid_search_over_epsilon_warns_naming_the_total(fresh_default):
    X = data()
    with pytest.warns(PrivacyBudgetWarning) as record:
        search = GridSearchCV(fast_dplloyd(), {"epsilon": EPSILONS}, cv=5).fit(X)
    total = 5 * sum(EPSILONS) + search.best_params_["epsilon"]  # 25 fits and the refit
    assert fresh_default.n_fits == 26
    assert fresh_default.spent_epsilon == pytest.approx(total)
    assert search.best_estimator_.epsilon_spent_ == search.best_params_["epsilon"]  # what one model reports
    messages = [str(w.message) for w in record if w.category is PrivacyBudgetWarning]
    first = messages[0]
    assert "the 2 fits charged to this accountant have spent ε = 0.2" in first
    assert "more than the largest ε of a single fit (0.1)" in first and "grid search" in first
    assert "FitAccountant.default().reset()" in first and "same data" in first
    # repeated each time the total doubles: a few warnings, not one per fit, the last naming a large total
    assert 3 <= len(messages) <= 10
    last_total = float(re.search(r"have spent ε = ([0-9.]+)", messages[-1]).group(1))
    assert last_total > total / 2


def test_one_fit_does_not_warn_and_reset_starts_over(fresh_default):
    X = data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        fast_dplloyd(epsilon=1.0).fit(X)
    assert fresh_default.total() == (pytest.approx(1.0), 0.0)
    with pytest.warns(PrivacyBudgetWarning, match=r"the 2 fits .* spent ε = 2, δ = 0 in total"):
        fast_dplloyd(epsilon=1.0).fit(X)
    fresh_default.reset()
    assert fresh_default.total() == (0.0, 0.0) and fresh_default.n_fits == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        fast_dplloyd(epsilon=1.0).fit(X)


def test_cross_validation_shares_the_default_accountant(fresh_default):
    with pytest.warns(PrivacyBudgetWarning):
        cross_validate(fast_dplloyd(epsilon=0.5), data(), cv=4)
    assert fresh_default.n_fits == 4 and fresh_default.spent_epsilon == pytest.approx(2.0)


def test_a_passed_accountant_survives_clone_and_grid_search(fresh_default):
    acc = FitAccountant()
    est = fast_dplloyd(accountant=acc)
    assert clone(est).accountant is acc and clone(est).get_params()["accountant"] is acc
    assert clone(make_pipeline(MinMaxScaler(), est))[-1].accountant is acc
    with pytest.warns(PrivacyBudgetWarning):
        search = GridSearchCV(est, {"epsilon": [0.5, 1.0]}, cv=3).fit(data())
    assert search.best_estimator_.accountant is acc
    assert acc.n_fits == 7 and fresh_default.n_fits == 0  # nothing reached the default one
    other = FitAccountant(epsilon=5.0)
    assert est.set_params(accountant=other).get_params()["accountant"] is other
    assert copy.deepcopy(acc) is not acc and copy.deepcopy(acc).total() == acc.total()
    fitted = pickle.loads(pickle.dumps(fast_dplloyd(accountant=acc).fit(data())))  # the lock is not pickled
    assert fitted.accountant.n_fits == acc.n_fits and fitted.accountant is not acc


def test_a_total_budget_refuses_the_fit_that_would_overspend_and_keeps_the_earlier_spend(fresh_default):
    X = data()
    acc = FitAccountant(epsilon=3.0, delta=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)  # a limited accountant refuses, never warns
        for _ in range(2):
            fast_dplloyd(epsilon=1.0, accountant=acc).fit(X)
    assert acc.total() == (pytest.approx(2.0), 0.0)
    est = fast_dplloyd(epsilon=1.5, accountant=acc)
    with pytest.raises(FitBudgetExceeded, match=r"DPLloyd\.fit refused: it may spend \(ε = 1\.5, δ = 0\), but this "
                                                r"accountant's total budget is \(ε = 3, δ = 1e-06\) and \(ε = 2, "
                                                r"δ = 0\) is already spent by 2 earlier fit\(s\)"):
        est.fit(X)
    assert not hasattr(est, "cluster_centers_")  # refused before it ran
    assert acc.total() == (pytest.approx(2.0), 0.0) and acc.n_fits == 2
    fast_dplloyd(epsilon=1.0, accountant=acc).fit(X)  # exactly the rest fits
    assert acc.remaining_epsilon == pytest.approx(0.0, abs=1e-12)
    assert [c.label for c in acc.ledger] == ["DPLloyd.fit"] * 3
    assert fresh_default.n_fits == 0


def test_a_grid_search_under_a_total_budget_stops_at_the_budget():
    acc = FitAccountant(epsilon=2.0)
    with pytest.raises(FitBudgetExceeded, match="total budget is"):
        GridSearchCV(fast_dplloyd(accountant=acc), {"epsilon": [0.5, 1.0]}, cv=3, error_score="raise").fit(data())
    assert acc.spent_epsilon <= 2.0 + 1e-9


def test_the_delta_budget_is_checked_too():
    X = data()
    pure_only = FitAccountant(epsilon=10.0)  # delta defaults to 0 with a finite epsilon
    assert pure_only.delta == 0.0
    with pytest.raises(FitBudgetExceeded, match=r"δ = 1e-06\), but .* total budget is \(ε = 10, δ = 0\)"):
        Balcan(n_clusters=2, random_state=0, settings=dict(BOX), accountant=pure_only).fit(X)
    assert pure_only.n_fits == 0


def test_a_fit_that_raises_is_not_charged():
    def broken(X, k, epsilon, delta, rng, settings):
        raise DPClustError("broken on purpose")

    Broken = build_estimator(broken, {}, "Broken")
    acc = FitAccountant(epsilon=1.0)
    with pytest.raises(DPClustError, match="on purpose"):
        Broken(n_clusters=2, settings=dict(BOX), accountant=acc).fit(data())
    assert acc.n_fits == 0 and acc.remaining_epsilon == 1.0


def test_what_the_run_spent_is_charged_not_what_was_asked():
    def half(X, k, epsilon, delta, rng, settings):
        return ClusteringResult(np.full((k, X.shape[1]), 0.5), epsilon / 2)

    Half = build_estimator(half, {}, "Half")
    acc = FitAccountant(epsilon=1.0)
    Half(n_clusters=2, epsilon=1.0, settings=dict(BOX), accountant=acc).fit(data())
    assert acc.total() == (0.5, 0.0)


def test_a_bad_accountant_is_named():
    with pytest.raises(DPClustError, match="accountant must be a dpclust.budget.FitAccountant or None"):
        fast_dplloyd(accountant=3.0).fit(data())
    with pytest.raises(ValueError, match="epsilon must be a number > 0"):
        FitAccountant(epsilon=0)


# --- bounds computed from the data ---------------------------------------------------------------
def test_min_max_scaler_in_a_pipeline_warns_of_data_derived_bounds():
    X = np.random.default_rng(1).normal(3.0, 2.0, size=(50, 3))
    pipe = Pipeline([("scale", MinMaxScaler()), ("dp", DPLloyd(n_clusters=3, random_state=0, settings=dict(BOX)))])
    with pytest.warns(PrivacyLeakWarning, match=r"the data reach the public bounds \[0, 1\] .* exactly in every "
                                                r"coordinate.*MinMaxScaler fitted on X.*use bounds fixed in advance"):
        pipe.fit(X)


def test_rounding_of_a_min_max_scaler_is_clipped_not_refused():
    """MinMaxScaler's maximum can land one ulp above 1: within BOUNDS_RTOL it is clipped into the box."""
    for seed in range(200):
        Y = MinMaxScaler().fit_transform(np.random.default_rng(seed).normal(3.0, 7.0, size=(30, 2)))
        if Y.max() > 1.0:
            break
    else:
        pytest.skip("no rounding above 1 in these seeds")
    with pytest.warns(PrivacyLeakWarning):
        est = DPLloyd(n_clusters=2, random_state=0, settings=dict(BOX)).fit(Y)
    assert est.cluster_centers_.shape == (2, 2)
    Y[0, 0] = 1.0 + 1e-6  # well beyond rounding: refused as before
    with pytest.raises(DPClustError, match="outside the public domain"):
        DPLloyd(n_clusters=2, random_state=0, settings=dict(BOX)).fit(Y)


@pytest.mark.parametrize("case", ["wider box", "ordinary data", "one coordinate", "non-private"])
def test_no_leak_warning_when_the_data_do_not_fill_the_box(case):
    rng = np.random.default_rng(2)
    X = MinMaxScaler().fit_transform(rng.normal(size=(50, 3)))
    if case == "wider box":  # the scaler's range inside a wider public box
        est, Z = DPLloyd(n_clusters=3, random_state=0, settings={"bounds": [-0.5, 1.5]}), X
    elif case == "ordinary data":
        Z = np.clip(rng.normal(0.5, 0.15, (50, 3)), 0, 1)
        est = DPLloyd(n_clusters=3, random_state=0, settings=dict(BOX))
    elif case == "one coordinate":  # only the first coordinate reaches both ends
        est, Z = DPLloyd(n_clusters=3, random_state=0, settings=dict(BOX)), np.c_[X[:, :1], 0.1 + 0.8 * X[:, 1:]]
    else:
        est, Z = Lloyd(n_clusters=3, random_state=0, settings=dict(BOX)), X
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est.fit(Z)


# --- defaults ------------------------------------------------------------------------------------
def test_balcan_fits_with_its_default_delta(fresh_default):
    assert DEFAULT_DELTA == 1e-6
    est = Balcan(n_clusters=2, random_state=0, settings=dict(BOX))
    assert est.delta == DEFAULT_DELTA and repr(Balcan()) == "Balcan()"
    est.fit(data(n=60))
    assert est.epsilon_spent_ == pytest.approx(1.0) and 0 < est.delta_spent_ <= DEFAULT_DELTA
    assert fresh_default.total() == (pytest.approx(1.0), pytest.approx(est.delta_spent_))
    assert "default delta=1e-06" in Balcan.__doc__
    # δ = 0 is still the user's choice, with the algorithm's own error
    with pytest.raises(DPClustError, match=r"need delta > 0.*e\.g\. 1e-6"):
        Balcan(n_clusters=2, delta=0.0, random_state=0, settings=dict(BOX)).fit(data(n=60))


def test_only_approximate_dp_algorithms_get_a_default_delta():
    assert SuLQ().delta == Nguyen().delta == DEFAULT_DELTA
    assert BalcanKMedian().delta == DPLloyd().delta == Lloyd().delta == 0.0  # pure ε-DP / non-private
    assert build_estimator(lambda *a: None, {}, "Mine", default_delta=1e-8)().delta == 1e-8


# --- non-private algorithms ----------------------------------------------------------------------
def test_a_non_private_algorithm_refuses_an_epsilon(fresh_default):
    X = data()
    assert Lloyd().epsilon is None and repr(Lloyd()) == "Lloyd()"
    with pytest.raises(DPClustError, match=r"Lloyd is not private .* refuses epsilon=1\.0; leave epsilon=None"):
        Lloyd(n_clusters=2, epsilon=1.0, settings=dict(BOX)).fit(X)
    with pytest.raises(DPClustError, match=r"refuses delta=1e-05"):
        Lloyd(n_clusters=2, delta=1e-5, settings=dict(BOX)).fit(X)
    est = Lloyd(n_clusters=2, random_state=0, settings=dict(BOX)).fit(X)
    assert est.epsilon_spent_ is None and est.delta_spent_ is None
    assert fresh_default.n_fits == 0  # nothing charged
