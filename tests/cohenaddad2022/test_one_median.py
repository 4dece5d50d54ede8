"""Private 1-median (objective perturbation): accounting, determinism, utility, noise law."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpclust.accountant import Accountant, BudgetExceeded
from dpclust.api import DPClustError
from dpclust.baselines import geometric_median
from dpclust.blocks.one_median import ONE_MEDIAN_SETTINGS, norm_laplace_noise, private_one_median


def _cluster(n, seed=0):
    r = np.random.default_rng(seed)
    return np.clip(r.normal(0.3, 0.05, size=(n, 3)), 0, 1)


def test_spends_exactly_epsilon_and_zero_delta():
    acc = Accountant(0.7, 1e-6)
    c = private_one_median(_cluster(200), 0.7, 1e-6, [0, 1], np.random.default_rng(1), acc, {})
    assert c.shape == (3,)
    assert math.isclose(acc.spent_epsilon, 0.7, rel_tol=1e-12) and acc.spent_delta == 0.0


def test_refuses_overspending_before_release():
    acc = Accountant(0.5)
    with pytest.raises(BudgetExceeded):
        private_one_median(_cluster(50), 0.6, 0.0, [0, 1], np.random.default_rng(1), acc, {})


def test_same_seed_same_bytes():
    P = _cluster(300)
    a = private_one_median(P, 1.0, 0.0, [0, 1], np.random.default_rng(5), None, {})
    b = private_one_median(P, 1.0, 0.0, [0, 1], np.random.default_rng(5), None, {})
    assert a.tobytes() == b.tobytes()


def test_error_shrinks_with_n_and_is_small_for_large_clusters():
    rng = np.random.default_rng(3)
    errs = {}
    for n in (100, 5000):
        P = _cluster(n, seed=n)
        gm = geometric_median(P)
        errs[n] = np.mean([np.linalg.norm(private_one_median(P, 0.5, 0.0, [0, 1], rng, None, {}) - gm)
                           for _ in range(30)])
    assert errs[5000] < errs[100] / 3
    assert errs[5000] < 0.03


def test_output_inside_box_and_empty_cluster_allowed():
    c = private_one_median(np.empty((0, 4)), 0.1, 0.0, [-1, 2], np.random.default_rng(0), None, {})
    assert c.shape == (4,) and (c >= -1).all() and (c <= 2).all()


@pytest.mark.parametrize("bad", [
    dict(P=np.ones(3)), dict(epsilon=0.0), dict(bounds=[1, 0]), dict(P=np.full((4, 2), 5.0)),
    dict(settings={"one_median_neighbouring": "swap"}),
    dict(settings={"one_median_jacobian_fraction": 0.995}),
])
def test_bad_input_is_one_clear_error(bad):
    args = dict(P=_cluster(10)[:, :2], epsilon=1.0, delta=0.0, bounds=[0, 1], rng=np.random.default_rng(0),
                accountant=None, settings={})
    args.update(bad)
    with pytest.raises(DPClustError):
        private_one_median(**args)


def test_norm_laplace_noise_law():
    """‖b‖ ~ Gamma(d, scale) and the direction is isotropic (mean ≈ 0)."""
    rng = np.random.default_rng(11)
    B = np.array([norm_laplace_noise(3, 2.0, rng) for _ in range(4000)])
    norms = np.linalg.norm(B, axis=1)
    assert stats.kstest(norms, stats.gamma(3, scale=2.0).cdf).pvalue > 1e-3
    assert np.abs(B.mean(axis=0)).max() < 5 * 6.0 / math.sqrt(4000)


def test_replace_neighbouring_doubles_noise():
    """With replace-one neighbours the objective noise has twice the scale (Δ_b = 2L)."""
    P = _cluster(30)
    spread = {}
    for mode in ("add_remove", "replace"):
        rng = np.random.default_rng(2)
        outs = np.array([private_one_median(P, 1.0, 0.0, [-50, 50], rng, None,
                                            {"one_median_neighbouring": mode}) for _ in range(300)])
        spread[mode] = np.median(np.linalg.norm(outs - np.median(outs, axis=0), axis=1))
    assert 1.5 < spread["replace"] / spread["add_remove"] < 2.6


def test_partial_settings_take_the_declared_defaults_and_extra_keys_are_ignored():
    """A partial mapping is completed from ONE_MEDIAN_SETTINGS; keys of the caller's own settings
    (an algorithm passes all of its settings) are ignored; an empty mapping or None is all defaults."""
    P = _cluster(200)
    full = ONE_MEDIAN_SETTINGS.defaults()

    def run(settings):
        return private_one_median(P, 1.0, 0.0, [0, 1], np.random.default_rng(4), None, settings)

    reference = run(full)
    for partial in ({}, None, {"one_median_max_newton_iter": 200},
                    {"layers": 10, "lsh_depth": 20, "one_median": {"x": 1}, "bounds": [0, 1]}):
        assert run(partial).tobytes() == reference.tobytes(), partial
    assert run({"one_median_smooth_lambda": 0.1}).tobytes() != reference.tobytes()


def test_declared_defaults():
    """The declaration is the one home of the 1-median's defaults (EXT-code λ; REC split and solver)."""
    assert ONE_MEDIAN_SETTINGS.defaults() == {
        "one_median_smooth_lambda": 0.01, "one_median_jacobian_fraction": 0.5, "one_median_output_fraction": 0.01,
        "one_median_gradient_tol": 1e-7, "one_median_max_newton_iter": 200, "one_median_neighbouring": "add_remove"}


@pytest.mark.parametrize("setting, value", [("one_median_smooth_lambda", -0.1), ("one_median_max_newton_iter", 0),
                                            ("one_median_output_fraction", 1.5), ("one_median_gradient_tol", "small")])
def test_bad_value_names_the_setting(setting, value):
    with pytest.raises(DPClustError, match=f"private_one_median: setting '{setting}'"):
        private_one_median(_cluster(10), 1.0, 0.0, [0, 1], np.random.default_rng(0), None, {setting: value})


def test_huge_epsilon_is_one_clear_error_before_any_charge():
    """Regression: exp(eps_J/d) overflowed (OverflowError) instead of a DPClustError; nothing is charged."""
    acc = Accountant(1e4)
    with pytest.raises(DPClustError, match="too large"):
        private_one_median(_cluster(10)[:, :1], 1e4, 0.0, [0, 1], np.random.default_rng(0), acc, {})
    assert acc.spent_epsilon == 0.0


def test_newton_pieces_give_the_bytes_of_the_direct_formulas():
    """The gradient and the Hessian (formed without a d × d identity, and only when a step is taken)
    are the bytes of the direct formulas (Λ·I + Σ(I − vvᵀ/s²)/s), at small and MNIST-sized d, and
    a whole minimisation is the bytes of Newton with the direct formulas."""
    from dpclust.blocks import one_median as om

    def direct(P, theta, lam, Lam, c, b):
        V = theta[None, :] - P
        s = np.sqrt(np.einsum("ij,ij->i", V, V) + lam * lam)
        inv = 1.0 / s
        g = V.T @ inv + Lam * (theta - c) + b
        return g, (inv.sum() + Lam) * np.eye(theta.size) - (V * (inv ** 3)[:, None]).T @ V

    def newton_direct(P, lam, Lam, c, b, gamma, max_iter):
        theta = c.copy()
        f = om._objective(P, theta, lam, Lam, c, b)
        for it in range(1, max_iter + 1):
            g, H = direct(P, theta, lam, Lam, c, b)
            if np.linalg.norm(g) <= gamma:
                return theta, it - 1
            step = np.linalg.solve(H, g)
            t, slope = 1.0, float(np.dot(g, step))
            while True:
                cand = theta - t * step
                fc = om._objective(P, cand, lam, Lam, c, b)
                if fc <= f - 1e-4 * t * slope + 1e-12 * max(1.0, abs(f)) or t < 1e-12:
                    break
                t *= 0.5
            theta, f = cand, fc
        return theta, max_iter

    rng = np.random.default_rng(5)
    for d, m in [(1, 5), (3, 400), (28, 300), (784, 60)]:
        P = rng.random((m, d)) * 10.0 ** rng.integers(-3, 3)
        theta, c, b = rng.random(d), np.full(d, 0.5), rng.normal(size=d) * 100
        for Lam in (1e-3, 7.8e4):
            g, H = direct(P, theta, 0.1, Lam, c, b)
            g2, V, inv = om._gradient(P, theta, 0.1, Lam, c, b)
            assert g2.tobytes() == g.tobytes() and om._hessian(V, inv, Lam).tobytes() == H.tobytes()
        want, iters = newton_direct(P, 0.1, 50.0, c, b, 1e-7, 200)
        got, _, got_iters = om.minimise_perturbed(P, 0.1, 50.0, c, b, 1e-7, 200)
        assert got.tobytes() == want.tobytes() and got_iters == iters
