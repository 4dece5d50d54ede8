"""The algorithm contract and the scikit-learn style wrapper."""
import numpy as np
import pytest

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, validate_inputs
from dpclust.estimators import build_estimator
from dpclust.mechanisms import laplace_mechanism


def noisy_means(X, k, epsilon, delta, rng, settings):
    """Toy private algorithm: noisy means of k fixed slices (for the wrapper tests only)."""
    acc = Accountant(epsilon, delta)
    lo, hi = settings["bounds"]
    parts = np.array_split(X, k)
    with acc.parallel("slices") as par:
        centers = [laplace_mechanism(p.mean(0), (hi - lo) * X.shape[1] / max(len(p), 1), epsilon, rng,
                                     par.branch()) for p in parts]
    return ClusteringResult.from_accountant(np.clip(centers, lo, hi), acc, iterations=1)


Toy = build_estimator(noisy_means, {"bounds": [0.0, 1.0]}, "Toy", module=__name__)


def test_estimator_fit_predict(blobs):
    est = Toy(n_clusters=3, epsilon=1.0, random_state=0).fit(blobs)
    assert est.cluster_centers_.shape == (3, 2)
    assert est.epsilon_spent_ == pytest.approx(1.0)  # parallel composition: max, not sum
    assert est.labels_.shape == (300,) and est.inertia_ > 0
    assert np.array_equal(est.predict(blobs), est.labels_)
    again = Toy(n_clusters=3, epsilon=1.0, random_state=0).fit(blobs)
    assert np.array_equal(est.cluster_centers_, again.cluster_centers_)
    assert est.get_params()["n_clusters"] == 3
    with pytest.raises(ValueError, match="bogus"):  # scikit-learn's set_params
        est.set_params(bogus=1)


@pytest.mark.parametrize("X, k, eps, delta, msg", [
    (np.zeros((5, 2)), 6, 1.0, 0.0, "exceeds"),
    (np.zeros((5, 2)), 0, 1.0, 0.0, "at least 1"),
    (np.zeros((5, 2)), 2.5, 1.0, 0.0, "integer"),
    (np.array([[0.0, np.nan]]), 1, 1.0, 0.0, "NaN"),
    (np.array([[0.0, np.inf]]), 1, 1.0, 0.0, "NaN or infinite"),
    (np.zeros((5, 2)), 2, 0.0, 0.0, "epsilon"),
    (np.zeros((5, 2)), 2, float("inf"), 0.0, "epsilon"),
    (np.zeros((5, 2)), 2, 1.0, 1.0, "delta"),
    (np.zeros((5, 2)), 2, 1.0, -1e-9, "delta"),
    (np.zeros(5), 2, 1.0, 0.0, "2-D"),
])
def test_validate_inputs(X, k, eps, delta, msg):
    with pytest.raises(DPClustError, match=msg):
        validate_inputs(X, k, eps, delta)


def test_estimator_rejects_bad_input():
    with pytest.raises(DPClustError, match="NaN"):
        Toy(n_clusters=1).fit(np.array([[np.nan, 0.0]]))


def test_nan_message_counts_the_rows_and_says_what_to_do():
    """Issue: one NaN among 150 rows was reported as "150 row(s)" and did not say what to do."""
    X = np.random.default_rng(0).random((150, 4))
    X[3, 1] = np.nan
    with pytest.raises(DPClustError) as exc:
        validate_inputs(X, 3)
    msg = str(exc.value)
    assert "in 1 of 150 rows" in msg and "row 3;" in msg and "column 1)" in msg
    assert "clean or drop those rows first" in msg
    X[[0, 7], [0, 3]] = [np.inf, -np.inf]
    X[7, 2] = np.nan  # a second bad value in a row already counted
    with pytest.raises(DPClustError, match=r"in 3 of 150 rows \(rows 0, 3, 7; columns 0, 1, 2, 3\)"):
        validate_inputs(X, 3)
    Y = np.full((150, 2), 0.5)
    Y[5, 0] = np.nan
    with pytest.raises(DPClustError, match=r"in 1 of 150 rows \(row 5; column 0\)"):  # the estimator too
        Toy(n_clusters=3).fit(Y)


def test_missing_bounds_say_how_to_give_them():
    from dpclust.api import data_bounds

    with pytest.raises(DPClustError, match=r"settings=\{'bounds': \[lo, hi\]\}"):
        data_bounds({})
