"""Empirical privacy audit: passes the correct mechanisms, catches them with halved noise."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust import mechanisms as M
from dpclust.accountant import Accountant
from dpclust.audit import statistics as A

EPS = 1.0
CONF = 0.99  # both the "passes" and the "caught" assertions hold at this confidence
D = np.zeros(10)                   # counting query: sum of 0/1 records
D_PRIME = np.r_[np.zeros(9), 1.0]  # one record changed


def laplace_count(data, rng, size=None):
    return M.laplace_mechanism(np.full(size, float(np.sum(data))), 1.0, EPS, rng)


def gaussian_count(data, rng, size=None):
    return M.gaussian_mechanism(np.full(size, float(np.sum(data))), 1.0, EPS, 1e-5, rng)


def geometric_count(data, rng, size=None):
    return M.geometric_mechanism(np.full(size, int(np.sum(data))), 1, EPS, rng)


def exponential_choice(scores, rng):
    """One draw per call (the loop path of `audit`)."""
    return M.exponential_mechanism(scores, 1.0, EPS, rng)


# Scores for the exponential mechanism that make its ε bound nearly tight: candidate 0 loses Δ
# between the neighbours while the nine others gain Δ (so the normaliser moves too).
U_D = np.r_[1.0, np.zeros(9)]
U_D_PRIME = np.r_[0.0, np.ones(9)]

CASES = {
    #            mechanism,          D,   D',        n,       δ
    "laplace": (laplace_count, D, D_PRIME, 100_000, 0.0),
    "gaussian": (gaussian_count, D, D_PRIME, 300_000, 1e-5),
    "geometric": (geometric_count, D.astype(int), D_PRIME.astype(int), 100_000, 0.0),
    "exponential": (exponential_choice, U_D, U_D_PRIME, 20_000, 0.0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_audit_passes_correct_mechanism_and_catches_halved_noise(name):
    mech, d, dp, n, delta = CASES[name]
    ok = A.audit(mech, d, dp, n_samples=n, seed=0, delta=delta, confidence=CONF)
    with A.halved_noise() as calls:
        bad = A.audit(mech, d, dp, n_samples=n, seed=0, delta=delta, confidence=CONF)
    assert sum(calls.values()) > 0  # the patch was exercised
    print(f"{name}: eps_lb normal {ok.epsilon_lower_bound:.3f}, halved {bad.epsilon_lower_bound:.3f}")
    assert 0.3 < ok.epsilon_lower_bound <= EPS  # a real (non-trivial) bound, below the claim
    assert bad.epsilon_lower_bound > EPS  # the audit catches the bug
    assert ok.n == bad.n == n


def test_audit_bound_is_valid_most_of_the_time():
    """Coverage: for a tight ε-DP mechanism the bound exceeds ε with probability ≤ 1 − confidence."""
    rng = np.random.default_rng(11)
    above = 0
    reps = 100
    for r in range(reps):
        a = rng.laplace(0.0, 1.0, 1000)
        b = 1.0 + rng.laplace(0.0, 1.0, 1000)
        res = A.audit_samples(a, b, confidence=0.9, rng=r)
        above += res.epsilon_lower_bound > 1.0
    assert above <= 0.1 * reps  # nominal ≤ 10%; typically far fewer


def test_audit_samples_exact_values_on_separated_outputs():
    m = 500  # evaluation half of 1000 samples
    a, b = np.zeros(1000), np.ones(1000)
    res = A.audit_samples(a, b, confidence=0.95)
    level = 0.975
    lower = (1 - level) ** (1 / m)        # Clopper–Pearson lower bound for m/m successes
    upper = 1 - (1 - level) ** (1 / m)    # ... and upper bound for 0/m
    assert res.p_lower == pytest.approx(lower, rel=1e-9)
    assert res.p_upper == pytest.approx(upper, rel=1e-9)
    assert res.epsilon_lower_bound == pytest.approx(math.log(lower / upper), rel=1e-9)
    assert res.epsilon_point == math.inf
    with_delta = A.audit_samples(a, b, delta=0.5, confidence=0.95)
    assert with_delta.epsilon_lower_bound == pytest.approx(math.log((lower - 0.5) / upper), rel=1e-9)
    # the bound cannot exceed what m samples can certify, and grows with n
    assert A.audit_samples(np.zeros(10_000), np.ones(10_000)).epsilon_lower_bound > res.epsilon_lower_bound


def test_audit_samples_identical_laws_give_small_bound():
    rng = np.random.default_rng(3)
    res = A.audit_samples(rng.normal(size=20_000), rng.normal(size=20_000))
    assert res.epsilon_lower_bound < 0.1


def test_audit_samples_input_checks():
    with pytest.raises(ValueError, match="projection"):
        A.audit_samples(np.zeros((10, 2)), np.zeros((10, 2)))
    with pytest.raises(ValueError):
        A.audit_samples([1.0], [2.0, 3.0])
    with pytest.raises(ValueError):
        A.audit_samples([np.nan, 1.0], [2.0, 3.0])
    with pytest.raises(ValueError):
        A.audit_samples([0.0, 1.0], [2.0, 3.0], delta=1.0)
    with pytest.raises(ValueError):
        A.audit_samples([0.0, 1.0], [2.0, 3.0], confidence=1.0)
    assert A.audit_samples(np.zeros((100, 1)), np.ones((100, 1))).epsilon_lower_bound > 2


def test_vector_outputs_through_projection_and_vectorised_path():
    calls = []

    def noisy_vector(data, rng, size=None):  # L1 sensitivity 1 of the 3-vector
        calls.append(size)
        v = np.array([np.sum(data), 5.0, -2.0])
        return M.laplace_mechanism(np.broadcast_to(v, (size, 3)), 1.0, EPS, rng)

    with pytest.raises(ValueError, match="projection"):
        A.audit(noisy_vector, D, D_PRIME, n_samples=1000, seed=0)
    res = A.audit(noisy_vector, D, D_PRIME, n_samples=40_000, seed=1, project=lambda v: v[0])
    assert calls[-2:] == [40_000, 40_000]  # one vectorised call per dataset
    assert 0.5 < res.epsilon_lower_bound <= EPS


def test_loop_path_matches_vectorised_path_for_same_streams():
    def one(data, rng):
        return M.laplace_mechanism(float(np.sum(data)), 1.0, EPS, rng)

    def many(data, rng, size=None):
        return M.laplace_mechanism(np.full(size, float(np.sum(data))), 1.0, EPS, rng)

    r1 = A.audit(one, D, D_PRIME, n_samples=2000, seed=5)
    r2 = A.audit(many, D, D_PRIME, n_samples=2000, seed=5)
    assert r1 == r2  # numpy draws a vector of Laplace noise as the same stream of scalars
    with pytest.raises(ValueError):
        A.audit(one, D, D_PRIME, n_samples=2, seed=0)


# ---------------------------------------------------------------------------------------------
# halved_noise
# ---------------------------------------------------------------------------------------------
def test_halved_noise_scales_every_function_exactly_once_and_restores():
    originals = {name: getattr(M, name) for name in
                 ("laplace_scale", "gaussian_sigma", "gaussian_sigma_analytic", "gaussian_sigma_classic",
                  "exponential_logit_scale")}
    ref = {
        "lap": M.laplace_scale(2.0, 0.5),
        "ga": M.gaussian_sigma(1.0, 0.5, 1e-5),
        "gc": M.gaussian_sigma(1.0, 0.5, 1e-5, "classic"),
        "gah": M.gaussian_sigma_analytic(1.0, 0.5, 1e-5),
        "gch": M.gaussian_sigma_classic(1.0, 0.5, 1e-5),
        "em": M.exponential_logit_scale(1.0, 0.5),
        "emm": M.exponential_logit_scale(1.0, 0.5, monotonic=True),
        "alpha": M.geometric_alpha(1, 0.5),
    }
    with A.halved_noise() as calls:
        assert M.laplace_scale(2.0, 0.5) == pytest.approx(ref["lap"] / 2, rel=1e-15)
        assert M.gaussian_sigma(1.0, 0.5, 1e-5) == pytest.approx(ref["ga"] / 2, rel=1e-15)
        assert M.gaussian_sigma(1.0, 0.5, 1e-5, "classic") == pytest.approx(ref["gc"] / 2, rel=1e-15)
        assert M.gaussian_sigma_analytic(1.0, 0.5, 1e-5) == pytest.approx(ref["gah"] / 2, rel=1e-15)
        assert M.gaussian_sigma_classic(1.0, 0.5, 1e-5) == pytest.approx(ref["gch"] / 2, rel=1e-15)
        assert M.exponential_logit_scale(1.0, 0.5) == pytest.approx(ref["em"] * 2, rel=1e-15)
        assert M.exponential_logit_scale(1.0, 0.5, monotonic=True) == pytest.approx(ref["emm"] * 2, rel=1e-15)
        assert M.geometric_alpha(1, 0.5) == pytest.approx(ref["alpha"] ** 2, rel=1e-12)
        with pytest.raises(ValueError):
            M.gaussian_sigma(1.0, 0.5, 1e-5, "nope")
        with pytest.raises(ValueError):  # validation still applies
            M.laplace_scale(1.0, 0.0)
        assert calls["gaussian_sigma"] == 3
    for name, fn in originals.items():
        assert getattr(M, name) is fn
    with pytest.raises(ZeroDivisionError):
        with A.halved_noise():
            1 / 0
    for name, fn in originals.items():
        assert getattr(M, name) is fn


def test_halved_noise_reaches_draws_made_by_other_modules():
    """An 'algorithm' that calls the mechanisms through the module gets exactly half the noise."""

    def algorithm(rng, acc):
        a = M.laplace_mechanism(np.zeros(5), 2.0, 0.5, rng, accountant=acc)
        b = M.gaussian_mechanism(np.zeros(5), 1.0, 0.25, 1e-6, rng, accountant=acc)
        c = M.gaussian_mechanism(np.zeros(5), 1.0, 0.25, 1e-6, rng, accountant=acc, calibration="classic")
        return np.concatenate([a, b, c])

    acc1, acc2 = Accountant(1.0, 1e-5), Accountant(1.0, 1e-5)
    normal = algorithm(np.random.default_rng(8), acc1)
    with A.halved_noise():
        halved = algorithm(np.random.default_rng(8), acc2)
    np.testing.assert_allclose(halved, normal / 2, rtol=1e-12)
    assert acc1.summary() == acc2.summary()  # the claim (the charge) is unchanged


def test_scaled_noise_factor_and_nesting():
    ref = M.laplace_scale(1.0, 1.0)
    with A.scaled_noise(0.5):
        with A.scaled_noise(0.5):
            assert M.laplace_scale(1.0, 1.0) == pytest.approx(ref / 4)
        assert M.laplace_scale(1.0, 1.0) == pytest.approx(ref / 2)
    assert M.laplace_scale(1.0, 1.0) == ref
    with pytest.raises(ValueError):
        with A.scaled_noise(0.0):
            pass


def test_halved_noise_rebinds_names_imported_from_mechanisms():
    """`from dpclust.mechanisms import laplace_scale` in an algorithm module is reached too."""
    import sys
    import types

    fake = types.ModuleType("dpclust_fake_algorithm")
    exec("from dpclust.mechanisms import laplace_scale, gaussian_sigma\n"
         "def scale():\n    return laplace_scale(1.0, 0.5)\n", fake.__dict__)
    sys.modules[fake.__name__] = fake
    try:
        ref = fake.scale()
        with A.halved_noise() as calls:
            assert fake.scale() == pytest.approx(ref / 2)
            assert fake.gaussian_sigma(1.0, 0.5, 1e-5) == pytest.approx(M.gaussian_sigma(1.0, 0.5, 1e-5))
            late = types.ModuleType("dpclust_fake_late")  # imported inside the block
            exec("from dpclust.mechanisms import laplace_scale\n", late.__dict__)
            sys.modules[late.__name__] = late
        assert calls["laplace_scale"] == 1
        assert fake.scale() == ref
        assert fake.laplace_scale is M.laplace_scale and late.laplace_scale is M.laplace_scale
    finally:
        sys.modules.pop("dpclust_fake_algorithm", None)
        sys.modules.pop("dpclust_fake_late", None)
