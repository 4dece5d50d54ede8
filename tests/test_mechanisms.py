"""Statistical tests of every mechanism: the law, and the scale as a function of (Δ, ε, δ).

Every goodness-of-fit test uses a fixed seed and rejects at p < 1e-3; each is paired with a
negative control (the same samples against a 20%-wrong scale must be rejected at p < 1e-6), so
no test can pass vacuously.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from dpclust import mechanisms as M
from dpclust.accountant import Accountant, BudgetExceeded

ALPHA = 1e-3  # significance level of the fit tests
NEG = 1e-6    # the wrong law must be rejected at least this strongly


def _chi2_p(counts: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square p-value of observed `counts` against `probs` (cells with < 5 expected merged)."""
    counts = np.asarray(counts, float)
    expected = np.asarray(probs, float) * counts.sum()
    order = np.argsort(expected)
    c, e = counts[order], expected[order]
    # merge the smallest cells until each has >= 5 expected
    keep_c, keep_e, acc_c, acc_e = [], [], 0.0, 0.0
    for ci, ei in zip(c, e):
        acc_c += ci
        acc_e += ei
        if acc_e >= 5:
            keep_c.append(acc_c)
            keep_e.append(acc_e)
            acc_c = acc_e = 0.0
    if acc_e > 0:
        keep_c[-1] += acc_c
        keep_e[-1] += acc_e
    return float(stats.chisquare(keep_c, keep_e).pvalue)


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sens,eps", [(1.0, 1.0), (2.0, 0.5), (0.1, 3.0), (5.0, 0.05)])
def test_laplace_law_and_scale(sens, eps):
    rng = np.random.default_rng(101)
    value = np.full(20_000, 7.0)
    out = M.laplace_mechanism(value, sens, eps, rng)
    assert M.laplace_scale(sens, eps) == pytest.approx(sens / eps, rel=1e-15)
    noise = out - 7.0
    assert stats.kstest(noise, stats.laplace(0, sens / eps).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(0, 1.2 * sens / eps).cdf).pvalue < NEG
    assert stats.kstest(noise, stats.laplace(0, sens / eps / 1.2).cdf).pvalue < NEG


def test_laplace_shapes_and_independence():
    rng = np.random.default_rng(1)
    out = M.laplace_mechanism([[1.0, 2.0], [3.0, 4.0]], 1.0, 1.0, rng)
    assert out.shape == (2, 2)
    assert np.ndim(M.laplace_mechanism(3.0, 1.0, 1.0, rng)) == 0
    big = M.laplace_mechanism(np.zeros((5000, 2)), 1.0, 1.0, rng)
    assert abs(np.corrcoef(big.T)[0, 1]) < 0.06  # coordinates drawn independently


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------
def _delta_closed_form(sigma: float, sens: float, eps: float) -> float:
    """Balle & Wang 2018, Thm 8, written independently with math.erfc."""
    phi = lambda t: 0.5 * math.erfc(-t / math.sqrt(2.0))  # noqa: E731
    a, b = sens / (2 * sigma), eps * sigma / sens
    return phi(a - b) - math.exp(eps) * phi(-a - b)


def _delta_hockey_stick(sigma: float, sens: float, eps: float) -> float:
    """δ(σ) = ∫ (p − e^ε q)_+ for p = N(0, σ²), q = N(Δ, σ²), by numerical integration."""
    x_star = sens / 2 - eps * sigma ** 2 / sens  # p > e^ε q exactly left of x*
    f = lambda x: stats.norm.pdf(x, 0, sigma) - math.exp(eps) * stats.norm.pdf(x, sens, sigma)  # noqa: E731
    val, _ = integrate.quad(f, -np.inf, x_star, epsabs=0, epsrel=1e-10, limit=200)
    return val


@pytest.mark.parametrize("sens", [1.0, 2.5])
@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-9])
def test_gaussian_analytic_sigma_is_the_smallest_valid(sens, eps, delta):
    sigma = M.gaussian_sigma_analytic(sens, eps, delta)
    assert _delta_closed_form(sigma, sens, eps) <= delta * (1 + 1e-9)
    assert _delta_closed_form(sigma * (1 - 1e-6), sens, eps) > delta
    assert _delta_hockey_stick(sigma, sens, eps) == pytest.approx(delta, rel=1e-4)
    assert M.gaussian_sigma(sens, eps, delta) == sigma
    # σ is proportional to the sensitivity
    assert M.gaussian_sigma_analytic(1.0, eps, delta) * sens == pytest.approx(sigma, rel=1e-9)


def test_gaussian_analytic_reference_values():
    # Balle & Wang's reference implementation: calibrateAnalyticGaussianMechanism(1.0, 1e-5, 1.0)
    assert M.gaussian_sigma_analytic(1.0, 1.0, 1e-5) == pytest.approx(3.730631634944469, rel=1e-7)
    # ε → 0: Φ(Δ/2σ) − Φ(−Δ/2σ) = δ, i.e. σ = Δ / (2 Φ⁻¹((1 + δ)/2))
    for delta in (0.01, 0.1):
        limit = 1.0 / (2 * special.ndtri((1 + delta) / 2))
        assert M.gaussian_sigma_analytic(1.0, 1e-9, delta) == pytest.approx(limit, rel=1e-6)


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 0.99])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_gaussian_analytic_below_classic(eps, delta):
    classic = M.gaussian_sigma_classic(1.0, eps, delta)
    assert classic == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)) / eps, rel=1e-14)
    assert M.gaussian_sigma(1.0, eps, delta, "classic") == classic
    assert M.gaussian_sigma_analytic(1.0, eps, delta) < classic
    # and the classic σ is itself valid by the exact criterion
    assert _delta_closed_form(classic, 1.0, eps) <= delta


@pytest.mark.parametrize("calibration,sens,eps,delta", [
    ("analytic", 1.0, 1.0, 1e-5), ("analytic", 3.0, 0.3, 1e-3), ("classic", 2.0, 0.5, 1e-6),
])
def test_gaussian_law_and_scale(calibration, sens, eps, delta):
    rng = np.random.default_rng(202)
    out = M.gaussian_mechanism(np.full(20_000, -3.0), sens, eps, delta, rng, calibration=calibration)
    sigma = M.gaussian_sigma(sens, eps, delta, calibration)
    noise = out + 3.0
    assert stats.kstest(noise, stats.norm(0, sigma).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.norm(0, 1.2 * sigma).cdf).pvalue < NEG
    assert stats.kstest(noise, stats.norm(0, sigma / 1.2).cdf).pvalue < NEG


# ---------------------------------------------------------------------------------------------
# Exponential mechanism
# ---------------------------------------------------------------------------------------------
def _em_counts(scores, sens, eps, method, monotonic=False, n=12_000, seed=303):
    rng = np.random.default_rng(seed)
    draws = [M.exponential_mechanism(scores, sens, eps, rng, monotonic=monotonic, method=method)
             for _ in range(n)]
    return np.bincount(draws, minlength=len(scores))


@pytest.mark.parametrize("method", ["gumbel", "inverse_cdf"])
@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_law_and_scale(method, monotonic):
    scores = np.array([0.0, 1.0, 2.0, 3.0, -1.0, 2.5])
    sens, eps = 2.0, 3.0
    counts = _em_counts(scores, sens, eps, method, monotonic)
    c = eps / (sens if monotonic else 2 * sens)
    assert M.exponential_logit_scale(sens, eps, monotonic) == pytest.approx(c, rel=1e-15)
    assert _chi2_p(counts, special.softmax(c * scores)) > ALPHA
    assert _chi2_p(counts, special.softmax(1.2 * c * scores)) < NEG
    assert _chi2_p(counts, special.softmax(c / 1.2 * scores)) < NEG


@pytest.mark.parametrize("method", ["gumbel", "inverse_cdf"])
def test_exponential_huge_scores_no_overflow(method):
    # c·u ≈ 1e12 would overflow exp(); only differences matter.
    scores = 1e12 + np.array([0.0, 1.0, 2.0])
    counts = _em_counts(scores, 1.0, 2.0, method, n=6000)
    assert _chi2_p(counts, special.softmax([0.0, 1.0, 2.0])) > ALPHA
    rng = np.random.default_rng(0)
    # c·u overflows to inf even as a product: still fine
    for _ in range(50):
        assert M.exponential_mechanism([1e308, -1e308], 1.0, 4.0, rng, method=method) == 0
    ties = [M.exponential_mechanism([1e308, 1e308], 1.0, 4.0, rng, method=method) for _ in range(400)]
    assert 120 < sum(ties) < 280  # uniform over the two tied candidates


@pytest.mark.parametrize("method", ["gumbel", "inverse_cdf"])
def test_minus_inf_is_never_drawn(method):
    rng = np.random.default_rng(5)
    logw = np.array([-np.inf, 0.0, -np.inf, 1.0, -np.inf])
    draws = np.array([M.sample_from_log_weights(logw, rng, method) for _ in range(3000)])
    assert set(np.unique(draws)) == {1, 3}
    counts = np.bincount(draws, minlength=5)[[1, 3]]
    assert _chi2_p(counts, special.softmax([0.0, 1.0])) > ALPHA
    em = [M.exponential_mechanism([0.0, -np.inf], 1.0, 1.0, rng, method=method) for _ in range(200)]
    assert set(em) == {0}


def test_inverse_cdf_never_returns_a_zero_weight_tail_when_u_rounds_up():
    class Extreme:  # the largest uniform a Generator can return
        def random(self):
            return float(np.nextafter(1.0, 0.0))

    logw = np.array([0.0, 0.0, 0.1, -np.inf, -np.inf])
    assert M.sample_from_log_weights(logw, Extreme(), "inverse_cdf") == 2


def test_exponential_input_errors():
    rng = np.random.default_rng(0)
    for bad in ([], [np.nan, 1.0], [np.inf, 1.0], [-np.inf, -np.inf]):
        with pytest.raises(ValueError):
            M.sample_from_log_weights(bad, rng)
        with pytest.raises(ValueError):
            M.exponential_mechanism(bad, 1.0, 1.0, rng)
    with pytest.raises(ValueError, match="method"):
        M.sample_from_log_weights([0.0], rng, method="softmax")
    acc = Accountant(1.0)
    with pytest.raises(ValueError):
        M.exponential_mechanism([np.nan], 1.0, 0.5, rng, accountant=acc)
    with pytest.raises(ValueError):
        M.exponential_mechanism([0.0], 1.0, 0.5, rng, accountant=acc, method="nope")
    assert acc.spent_epsilon == 0.0  # nothing charged for a refused call


# ---------------------------------------------------------------------------------------------
# Geometric
# ---------------------------------------------------------------------------------------------
def _geometric_pmf(z, alpha):
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)


@pytest.mark.parametrize("sens,eps", [(1, 1.0), (2, 0.5), (1, 0.1), (3, 6.0)])
def test_geometric_law_and_scale(sens, eps):
    rng = np.random.default_rng(404)
    out = M.geometric_mechanism(np.full(30_000, 10, dtype=np.int64), sens, eps, rng)
    assert out.dtype == np.int64
    alpha = M.geometric_alpha(sens, eps)
    assert alpha == pytest.approx(math.exp(-eps / sens), rel=1e-14)
    z = out - 10
    K = int(np.ceil(np.log(1e-7) / np.log(alpha)))  # |z| > K has probability < 1e-7
    support = np.arange(-K, K + 1)
    counts = np.array([np.sum(z == s) for s in support])
    assert counts.sum() >= z.size - 2
    probs = _geometric_pmf(support, alpha)
    assert _chi2_p(counts, probs / probs.sum()) > ALPHA
    for wrong in (alpha ** 1.2, alpha ** (1 / 1.2)):
        p = _geometric_pmf(support, wrong)
        assert _chi2_p(counts, p / p.sum()) < NEG


def test_geometric_integer_output_shapes_and_tiny_epsilon():
    rng = np.random.default_rng(9)
    assert np.ndim(M.geometric_mechanism(3, 1, 1.0, rng)) == 0
    out = M.geometric_mechanism(np.array([[1, 2], [3, 4]], dtype=np.int32), 1, 1.0, rng)
    assert out.shape == (2, 2) and np.issubdtype(out.dtype, np.integer)
    tiny = M.geometric_mechanism(np.zeros(2000, dtype=int), 1, 1e-12, rng)  # 1 − α underflows naively
    assert np.issubdtype(tiny.dtype, np.integer) and np.abs(tiny).max() > 1e9


def test_geometric_input_errors():
    rng = np.random.default_rng(0)
    acc = Accountant(1.0)
    for bad in (1.5, 0, -1, float("nan"), float("inf"), True, "2", None):
        with pytest.raises(ValueError):
            M.geometric_mechanism(3, bad, 0.5, rng, accountant=acc)
    with pytest.raises(ValueError, match="integer values"):
        M.geometric_mechanism(np.array([1.5]), 1, 0.5, rng, accountant=acc)
    with pytest.raises(ValueError):
        M.geometric_mechanism(3, 1, 0.0, rng, accountant=acc)
    assert acc.spent_epsilon == 0.0 and acc.ledger == []


# ---------------------------------------------------------------------------------------------
# Validation and charge-before-draw
# ---------------------------------------------------------------------------------------------
BAD_EPS = [0.0, -1.0, float("nan"), float("inf")]


@pytest.mark.parametrize("eps", BAD_EPS)
def test_bad_epsilon_rejected_everywhere(eps):
    rng = np.random.default_rng(0)
    calls = [
        lambda: M.laplace_scale(1.0, eps),
        lambda: M.laplace_mechanism(0.0, 1.0, eps, rng),
        lambda: M.gaussian_sigma_analytic(1.0, eps, 1e-5),
        lambda: M.gaussian_sigma_classic(1.0, eps, 1e-5),
        lambda: M.gaussian_mechanism(0.0, 1.0, eps, 1e-5, rng),
        lambda: M.exponential_logit_scale(1.0, eps),
        lambda: M.exponential_mechanism([0.0, 1.0], 1.0, eps, rng),
        lambda: M.geometric_alpha(1, eps),
        lambda: M.geometric_mechanism(0, 1, eps, rng),
    ]
    for call in calls:
        with pytest.raises(ValueError):
            call()


@pytest.mark.parametrize("sens", [0.0, -2.0, float("nan"), float("inf")])
def test_bad_sensitivity_rejected(sens):
    rng = np.random.default_rng(0)
    for call in (lambda: M.laplace_mechanism(0.0, sens, 1.0, rng),
                 lambda: M.gaussian_mechanism(0.0, sens, 0.5, 1e-5, rng),
                 lambda: M.gaussian_mechanism(0.0, sens, 0.5, 1e-5, rng, calibration="classic"),
                 lambda: M.exponential_mechanism([0.0], sens, 1.0, rng)):
        with pytest.raises(ValueError):
            call()


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5, 1.5, float("nan")])
def test_gaussian_bad_delta(delta):
    rng = np.random.default_rng(0)
    for cal in ("analytic", "classic"):
        with pytest.raises(ValueError):
            M.gaussian_mechanism(0.0, 1.0, 0.5, delta, rng, calibration=cal)


def test_gaussian_classic_needs_eps_below_one_and_known_calibration():
    with pytest.raises(ValueError, match="epsilon < 1"):
        M.gaussian_sigma_classic(1.0, 1.0, 1e-5)
    with pytest.raises(ValueError, match="calibration"):
        M.gaussian_sigma(1.0, 0.5, 1e-5, "rdp")


def _state(rng):
    return rng.bit_generator.state


@pytest.mark.parametrize("call,cost", [
    (lambda rng, acc: M.laplace_mechanism(np.zeros(3), 1.0, 0.6, rng, acc), (0.6, 0.0)),
    (lambda rng, acc: M.gaussian_mechanism(np.zeros(3), 1.0, 0.6, 1e-6, rng, acc), (0.6, 1e-6)),
    (lambda rng, acc: M.exponential_mechanism([0.0, 1.0], 1.0, 0.6, rng, acc), (0.6, 0.0)),
    (lambda rng, acc: M.exponential_mechanism([0.0, 1.0], 1.0, 0.6, rng, acc, method="inverse_cdf"), (0.6, 0.0)),
    (lambda rng, acc: M.geometric_mechanism(np.zeros(3, int), 1, 0.6, rng, acc), (0.6, 0.0)),
])
def test_mechanisms_charge_before_drawing(call, cost):
    rng = np.random.default_rng(77)
    acc = Accountant(1.0, 1e-5)
    call(rng, acc)  # first call fits
    assert (acc.spent_epsilon, acc.spent_delta) == pytest.approx(cost)
    assert len(acc.ledger) == 1
    before = _state(rng)
    with pytest.raises(BudgetExceeded):
        call(rng, acc)  # 1.2 > 1: refused
    assert _state(rng) == before  # nothing was drawn
    assert (acc.spent_epsilon, acc.spent_delta) == pytest.approx(cost)


def test_same_seed_same_output():
    a = M.laplace_mechanism(np.zeros(4), 1.0, 1.0, np.random.default_rng(3))
    b = M.laplace_mechanism(np.zeros(4), 1.0, 1.0, np.random.default_rng(3))
    assert np.array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# Floating point: releases on a data-independent grid (Mironov 2012), the same draws as before
# ---------------------------------------------------------------------------------------------
def _on_grid(y, gamma) -> bool:
    q = np.asarray(y, dtype=float) / gamma
    return bool(np.all(q == np.rint(q)))


@pytest.mark.parametrize("scale", [1.0, 1.5, 1 / 0.7, 3e-5, 123456.0, 2.0 ** -20])
def test_grid_spacing_is_a_power_of_two_below_the_scale(scale):
    gamma = M.grid_spacing(scale)
    assert math.frexp(gamma)[0] == 0.5                       # a power of two
    assert 2.0 ** M.GRID_BITS <= scale / gamma < 2.0 ** (M.GRID_BITS + 1)
    arr = M.grid_spacing(np.array([scale, 2 * scale]))
    assert arr[0] == gamma and arr[1] == 2 * gamma


@pytest.mark.parametrize("x", [0.0, 1.0, -3.7, 1e6 + 0.123])
def test_laplace_release_is_on_the_grid_and_paired_with_the_old_draws(x):
    b = M.laplace_scale(1.0, 0.7)
    gamma = M.grid_spacing(b)
    old_rng, new_rng = np.random.default_rng(11), np.random.default_rng(11)
    value = np.full(20_000, x)
    old = value + old_rng.laplace(0.0, b, size=value.shape)   # the mechanism before the grid
    new = M.laplace_mechanism(value, 1.0, 0.7, new_rng)
    assert _on_grid(new, gamma)
    assert np.abs(new - old).max() <= gamma / 2 + 4 * np.spacing(np.abs(old)).max()  # the same draws, rounded
    assert old_rng.bit_generator.state == new_rng.bit_generator.state             # the same Generator calls


def test_gaussian_release_is_on_the_grid_and_paired_with_the_old_draws():
    sigma = M.gaussian_sigma(1.0, 0.5, 1e-5)
    gamma = M.grid_spacing(sigma)
    old_rng, new_rng = np.random.default_rng(12), np.random.default_rng(12)
    value = np.linspace(-5, 5, 10_000)
    old = value + old_rng.normal(0.0, sigma, size=value.shape)
    new = M.gaussian_mechanism(value, 1.0, 0.5, 1e-5, new_rng)
    assert _on_grid(new, gamma)
    assert np.abs(new - old).max() <= gamma / 2 + 4 * np.spacing(np.abs(old)).max()
    assert old_rng.bit_generator.state == new_rng.bit_generator.state


def test_per_row_gaussian_grid_and_draws_as_noisyavg_drew_them():
    means = np.array([[0.1, 0.2, 0.3], [5.0, -1.0, 2.5]])
    sigma = np.array([[0.01], [3.0]])
    rng_old, rng_new = np.random.default_rng(3), np.random.default_rng(3)
    old = means + sigma * rng_old.standard_normal(means.shape)
    new = M.gaussian_on_grid(means, sigma, rng_new)
    for j in range(2):
        g = M.grid_spacing(float(sigma[j, 0]))
        assert _on_grid(new[j], g) and np.abs(new[j] - old[j]).max() <= g / 2 + 1e-15
    assert rng_old.bit_generator.state == rng_new.bit_generator.state


def _exact_round_half_even(x: float, n: float, gamma: float) -> float:
    from fractions import Fraction

    q = (Fraction(x) + Fraction(n)) / Fraction(gamma)
    return float(round(q) * Fraction(gamma))  # Fraction.__round__ rounds half to even


def test_release_on_grid_is_the_exact_rounding_of_the_real_sum():
    rng = np.random.default_rng(4)
    gamma = 2.0 ** -16
    xs = np.concatenate([rng.normal(0, 10, 300), rng.normal(0, 1e8, 100), [0.0, 1.0, -1.0, 1e9]])
    ns = np.concatenate([rng.laplace(0, 3, 300), rng.laplace(0, 1e-3, 100), [0.5 * gamma, 1.5 * gamma, -2.5 * gamma,
                                                                              2.0 ** -80]])
    # ties decided by the rounding error of x + n: x + n is not representable, fl(x + n) is a tie
    xs = np.concatenate([xs, [0.5 * gamma + 2.0 ** -60, 1.0 + 0.5 * gamma, 3.0 - 0.5 * gamma]])
    ns = np.concatenate([ns, [2.0 ** -80, 2.0 ** -75, -(2.0 ** -75)]])
    out = M.release_on_grid(xs, ns, gamma)
    for x, n, y in zip(xs, ns, out):
        assert y == _exact_round_half_even(float(x), float(n), gamma), (x, n)
    assert not np.signbit(M.release_on_grid(np.array([-0.1 * gamma]), np.array([0.0]), gamma)).any()  # no −0


def test_values_too_large_for_the_grid_are_refused_before_charging():
    from dpclust.api import DPClustError

    acc = Accountant(10.0, 1e-3)
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    big = M.grid_spacing(M.laplace_scale(1.0, 1.0)) * 2.0 ** 52
    big_g = M.grid_spacing(M.gaussian_sigma(1.0, 0.5, 1e-5)) * 2.0 ** 52
    for call in (lambda: M.laplace_mechanism(np.array([1.0, big]), 1.0, 1.0, rng, acc, label="counts"),
                 lambda: M.gaussian_mechanism(np.array([big_g]), 1.0, 0.5, 1e-5, rng, acc),
                 lambda: M.laplace_mechanism(np.array([np.nan]), 1.0, 1.0, rng, acc)):
        with pytest.raises(DPClustError, match="mechanism"):
            call()
    assert acc.spent_epsilon == 0.0 and acc.ledger == [] and rng.bit_generator.state == before


def test_norm_laplace_release_on_grid_with_a_public_bound():
    from dpclust.api import DPClustError

    rng_old, rng_new = np.random.default_rng(5), np.random.default_rng(5)
    theta = np.array([200.0, 3.0, 0.25])
    old = theta + M.norm_laplace_noise(3, 1e-9, rng_old)
    new = M.norm_laplace_on_grid(theta, 1e-9, rng_new, bound=256.0 * 255.0)
    gamma = max(M.grid_spacing(1e-9), 2.0 ** (math.frexp(256.0 * 255.0)[1] - 51))
    assert _on_grid(new, gamma) and np.abs(new - old).max() <= gamma / 2
    assert rng_old.bit_generator.state == rng_new.bit_generator.state
    with pytest.raises(DPClustError):
        M.norm_laplace_on_grid(theta, 1e-9, rng_new)            # 200 is above 2^51 steps of the scale's grid
    with pytest.raises(DPClustError, match="bound"):
        M.norm_laplace_on_grid(theta, 1e-9, rng_new, bound=100.0)


def test_uniform_in_interval_on_grid_same_draw():
    rng_old, rng_new = np.random.default_rng(6), np.random.default_rng(6)
    for start, length in [(0.123456789, 0.3), (-0.9999, 1e-7), (0.5, 0.0)]:
        old = start + rng_old.random() * length
        new = M.uniform_in_interval_on_grid(start, length, 2.0, rng_new)
        gamma = M.grid_spacing(2.0)
        assert _on_grid(new, gamma) and abs(new - old) <= gamma / 2


def _numpy_laplace_cells(m: np.ndarray, shift: float, gamma: float) -> np.ndarray:
    """Grid cell of x + N for lattice points U = m·2^-53, N computed as numpy's `random_laplace` (b = 1)
    with the C library's log (math.log), the sum rounded exactly (long double: the sum of two doubles
    whose exponents differ by < 11 is exact in 64 bits)."""
    u = m.astype(float) * 2.0 ** -53
    hi = u >= 0.5
    arg = np.where(hi, (2.0 - u) - u, u + u)
    logs = np.array([math.log(v) for v in arg.tolist()])
    n = np.where(hi, -logs, logs)
    return np.rint((np.longdouble(shift) + n.astype(np.longdouble)) / np.longdouble(gamma)).astype(np.int64)


def _exact_laplace_cells(m: np.ndarray, shift: float, gamma: float) -> np.ndarray:
    """The same with exact arithmetic up to long double: N = log(2U) or −log(2 − 2U) of the real U."""
    ml = m.astype(np.longdouble)
    hi = m >= (1 << 52)
    v = np.where(hi, (np.longdouble(2.0 ** 53) - ml), ml) * np.longdouble(2.0) ** -52
    n = np.log(v)
    n = np.where(hi, -n, n)
    return np.rint((np.longdouble(shift) + n) / np.longdouble(gamma)).astype(np.int64)


@pytest.mark.parametrize("m0", [1, 1 << 30, (1 << 52) - (1 << 19), (1 << 53) - (1 << 20)])
@pytest.mark.parametrize("shift_cells", [0.0, 0.3])
def test_laplace_cell_error_measured_by_enumeration(m0, shift_cells):
    """Every lattice point of a window of 2^20 uniforms (the deep tails, where a cell holds a handful of
    points, and the bulk): numpy's sampler puts at most 2 points more or fewer into a grid cell than
    the exact map (the U ≥ ½ branch's fl(2 − U) − U jitter; `LAPLACE_CELL_ERROR` = 1 lattice + 2 + 1
    margin)."""
    gamma = M.grid_spacing(1.0)
    m = np.arange(m0, m0 + (1 << 20), dtype=np.int64)
    fp = _numpy_laplace_cells(m, shift_cells * gamma, gamma)
    ex = _exact_laplace_cells(m, shift_cells * gamma, gamma)
    lo = min(fp.min(), ex.min())
    size = max(fp.max(), ex.max()) - lo + 1
    diff = np.bincount(fp - lo, minlength=size) - np.bincount(ex - lo, minlength=size)
    assert np.abs(diff).max() <= M.LAPLACE_CELL_ERROR - 2


def test_floating_point_guarantee_in_one_place():
    import json

    assert "Mironov" in M.__doc__ and "FLOATING_POINT_GUARANTEE" in M.__doc__
    for name in ("laplace", "gaussian", "exponential", "geometric", "norm_laplace", "interval"):
        g = M.mechanism_guarantee(name)
        assert json.loads(json.dumps(g)) == g
        assert {"epsilon_inflation", "delta_finite_support", "delta_per_coordinate", "grid"} <= set(g)
    assert M.mechanism_guarantee("laplace")["epsilon_inflation"] == 0.0
    # the ideal Laplace's mass outside numpy's support [−52 ln2·b, 53 ln2·b]
    assert M.mechanism_guarantee("laplace")["delta_finite_support"] == pytest.approx(
        0.5 * math.exp(-52 * math.log(2)) + 0.5 * math.exp(-M.LAPLACE_SUPPORT), rel=1e-9)
    # the worst b/γ: E_L = 2^-53·(4·(2·⌈36.74·2^17⌉ + 3) + 3) ≈ 4.3e-9, times (1 + e^ε)
    assert M.floating_point_delta("laplace", 1.0) == pytest.approx((1 + math.e) * 4.27e-9, rel=0.01)
    assert M.floating_point_delta("laplace", 1.0, size=7) == pytest.approx(7 * M.floating_point_delta("laplace", 1.0))
    assert M.floating_point_delta("gaussian", 1.0) < M.floating_point_delta("laplace", 1.0)
    assert M.floating_point_delta("exponential", 1.0, candidates=10) < 1e-11
    with pytest.raises(ValueError):
        M.mechanism_guarantee("cauchy")


def test_mechanisms_note_their_floating_point_delta_on_the_accountant():
    rng = np.random.default_rng(0)
    acc = Accountant(5.0, 1e-5)
    M.laplace_mechanism(np.zeros(3), 1.0, 0.5, rng, acc, label="a")
    M.laplace_mechanism(np.zeros(3), 1.0, 0.5, rng, acc, label="b", changed=1)
    ratio = M.laplace_scale(1.0, 0.5) / M.grid_spacing(M.laplace_scale(1.0, 0.5))
    one = M.floating_point_delta("laplace", 0.5, ratio=ratio)
    assert acc.floating_point_delta == pytest.approx(4 * one)
    with acc.parallel("cells") as par:              # disjoint parts: the largest branch counts
        M.laplace_mechanism(np.zeros(2), 1.0, 0.5, rng, par.branch())
        M.laplace_mechanism(np.zeros(5), 1.0, 0.5, rng, par.branch())
    assert acc.floating_point_delta == pytest.approx(9 * one)
    child = acc.sub_budget(1.0, label="child")
    M.exponential_mechanism([0.0, 1.0, 2.0], 1.0, 0.5, rng, child)
    assert acc.floating_point_delta == pytest.approx(9 * one + M.floating_point_delta("exponential", 0.5,
                                                                                      candidates=3))
    s = acc.summary()
    assert s["floating_point_delta"] == acc.floating_point_delta
    assert acc.spent_delta == 0.0 and all(row[2] == 0.0 for row in s["ledger"])   # never charged


def test_geometric_refuses_saturating_draws_before_charging():
    """numpy saturates a geometric draw at INT64_MAX: at p ≈ 1e-20 most draws saturate and two saturated
    draws cancel (value + 0, an exact release). 1 − α < 2^-50 and |value| > 2^62 are refused."""
    rng = np.random.default_rng(0)
    assert (rng.geometric(1e-20, size=50) == np.iinfo(np.int64).max).sum() > 25   # the hazard
    acc = Accountant(1.0)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match="too small"):
        M.geometric_mechanism(np.array([5, 7]), 1, 1e-17, rng, accountant=acc)
    with pytest.raises(ValueError, match="2\\^62"):
        M.geometric_mechanism(np.array([2 ** 62 + 1]), 1, 0.5, rng, accountant=acc)
    assert acc.ledger == [] and rng.bit_generator.state == before
    big = M.geometric_mechanism(np.zeros(200, dtype=np.int64), 1, 2.0 ** -49, rng)   # allowed: no saturation
    assert np.abs(big).max() < 2 ** 62 and (big != 0).all()
