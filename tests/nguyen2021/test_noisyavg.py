"""NoisyAVG (Alg. 3, Nguyen et al. 2021 / Nissim et al. 2016 Alg. 5): accounting, noise law, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust.accountant import Accountant, BudgetExceeded
from dpclust.api import DPClustError
from dpclust.blocks.noisy_average import noisy_avg_centers, noisy_avg_sigma


def _data(rng, n=600, d=3, k=3):
    X = rng.uniform(0.0, 1.0, size=(n, d))
    labels = rng.integers(0, k, size=n)
    return X, labels


def test_parallel_composition_spends_eps_delta_once(rng):
    X, labels = _data(rng)
    acc = Accountant(1.0, 1e-5)
    C = noisy_avg_centers(X, labels, 3, 0.4, 1e-5, math.sqrt(3), [0.0, 1.0], rng, acc)
    assert C.shape == (3, 3)
    assert acc.spent_epsilon == pytest.approx(0.4)
    assert acc.spent_delta == pytest.approx(1e-5)
    assert "parallel over 3 parts" in acc.ledger[-1].label


def test_refused_charge_releases_nothing(rng):
    X, labels = _data(rng)
    acc = Accountant(0.3, 1e-5)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceeded):
        noisy_avg_centers(X, labels, 3, 0.4, 1e-5, math.sqrt(3), [0.0, 1.0], rng, acc)
    assert rng.bit_generator.state == state


def test_noise_law_of_a_large_cluster():
    """Centre − mean is N(0, σ(m̂)²) per coordinate with σ of Alg. 3 (m̂ concentrates near
    m − (5/ε)ln(2/δ) for m ≫ 5/ε)."""
    rng = np.random.default_rng(7)
    m, d, eps, delta, diam = 20_000, 4, 1.0, 1e-6, 2.0
    X = rng.uniform(0, 1, size=(m, d))
    labels = np.zeros(m, dtype=np.int64)
    mean = X.mean(axis=0)
    reps = 400
    dev = np.empty((reps, d))
    for r in range(reps):
        acc = Accountant(eps, delta)
        dev[r] = noisy_avg_centers(X, labels, 1, eps, delta, diam, [0.0, 1.0], rng, acc)[0] - mean
    m_hat = m - 5.0 / eps * math.log(2.0 / delta)
    sigma = 5 * diam / (4 * eps * m_hat) * math.sqrt(2 * math.log(3.5 / delta))
    assert noisy_avg_sigma(m_hat, eps, delta, diam) == pytest.approx(sigma, rel=1e-12)
    # unbiased and with the stated spread (sd of the sample sd ≈ σ/√(2·1600) ≈ 1.8 %)
    assert abs(dev.mean()) < 4 * sigma / math.sqrt(dev.size)
    assert dev.std() == pytest.approx(sigma, rel=0.07)


def test_tiny_cluster_falls_back_to_uniform_point_of_the_box():
    rng = np.random.default_rng(3)
    X = np.array([[5.0, 5.0], [5.0, 5.0]])
    labels = np.array([0, 1])
    out = np.array([noisy_avg_centers(X, labels, 2, 1.0, 1e-6, 10 * math.sqrt(2), [0.0, 10.0], rng,
                                      Accountant(1.0, 1e-6)) for _ in range(300)]).reshape(-1, 2)
    # m̂ ≈ 1 − 5·ln(2e6) < 0 essentially always: uniform on [0, 10]^2 (mean 5, sd 10/√12)
    assert out.min() >= 0.0 and out.max() <= 10.0
    assert out.std() == pytest.approx(10 / math.sqrt(12), rel=0.1)


def test_same_seed_same_bytes():
    X, labels = _data(np.random.default_rng(1))
    a = noisy_avg_centers(X, labels, 3, 1.0, 1e-5, math.sqrt(3), [0, 1], np.random.default_rng(5),
                          Accountant(1.0, 1e-5))
    b = noisy_avg_centers(X, labels, 3, 1.0, 1e-5, math.sqrt(3), [0, 1], np.random.default_rng(5),
                          Accountant(1.0, 1e-5))
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("kwargs", [
    {"delta": 0.0}, {"epsilon": -1.0}, {"diameter": 0.0}, {"bounds": [1.0, 0.0]}, {"k": 2},
])
def test_bad_input_raises_one_clear_error(rng, kwargs):
    X, labels = _data(rng)
    args = dict(X=X, labels=labels, k=3, epsilon=1.0, delta=1e-5, diameter=math.sqrt(3),
                bounds=[0.0, 1.0], rng=rng, accountant=Accountant(1.0, 1e-5))
    args.update(kwargs)
    with pytest.raises(DPClustError):
        noisy_avg_centers(**args)


class _SpyGenerator(np.random.Generator):
    """A Generator that records the scale of every Laplace draw (the count noise of Alg. 3)."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.laplace_scales = []

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self.laplace_scales.append(float(scale))
        return super().laplace(loc, scale, size)


@pytest.mark.parametrize("eps, expected", [(0.4, 5 / 0.4), (1.0, 5.0), (3.0, 5 / 1.25)])
def test_count_noise_is_lap_5_over_epsilon(eps, expected):
    """m̂ = |V| + Lap(5/ε) − (5/ε)ln(2/δ) (Alg. 3; ε capped at 1.25 with the Gaussian calibration):
    the count noise's scale is checked directly (a halved scale moves m̂ by too little for the
    centre's law to show it), and `halved_noise` reaches it."""
    from dpclust.audit import statistics as audit

    X, labels = _data(np.random.default_rng(0))
    rng = _SpyGenerator(1)
    noisy_avg_centers(X, labels, 3, eps, 1e-5, math.sqrt(3), [0.0, 1.0], rng, Accountant(eps, 1e-5))
    assert rng.laplace_scales == [pytest.approx(expected, rel=1e-8)]
    with audit.halved_noise():
        noisy_avg_centers(X, labels, 3, eps, 1e-5, math.sqrt(3), [0.0, 1.0], rng, Accountant(eps, 1e-5))
    assert rng.laplace_scales[1] == pytest.approx(expected / 2, rel=1e-8)
