"""Algorithm 1 of Lu & Shen: sampling-zone geometry, exact samplers, budget, determinism, inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpclust.api import DPClustError
from dpclust.baselines import lloyd
from dpclust.blocks.initialisation import initial_centers
from dpclust.estimators import LuShen
from dpclust.lushen2020 import sampling_zone as sz
from dpclust.lushen2020.algorithm import lushen

#: One start per seed (as before init_per_epsilon): these tests compare against Lloyd from init_seed.
SETTINGS = dict(lushen.settings.defaults(), bounds=[0.0, 1.0], init_seed=7, init_per_epsilon=False)


def _blobs(seed=0, k=4, per=60, d=2):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(0.15, 0.85, size=(k, d))
    return np.clip(np.concatenate([c + 0.03 * rng.standard_normal((per, d)) for c in centers]), 0, 1)


# --- exact samplers of λ and γ (§5.2, §6.1) ------------------------------------------------------
@pytest.mark.parametrize("sampler, rate, lo, hi", [(sz.sample_lambda, 2.0, 0.5, 1.0),
                                                    (sz.sample_gamma, 2.0 / math.pi, 0.0, math.pi / 2)])
def test_truncated_exponential_samplers_follow_the_stated_density(sampler, rate, lo, hi):
    x = sampler(np.random.default_rng(1), 20_000)
    assert x.min() >= lo and x.max() <= hi
    norm = -math.expm1(-rate * (hi - lo))
    cdf = lambda t: -np.expm1(-rate * (np.clip(t, lo, hi) - lo)) / norm  # noqa: E731
    assert stats.kstest(x, cdf).pvalue > 1e-3
    # the density is decreasing: the lower half of the range holds more than half of the mass
    assert (x < (lo + hi) / 2).mean() > 0.5


# --- zone geometry (Definition 5, Alg. 2) --------------------------------------------------------
@pytest.mark.parametrize("d", [2, 3, 5])
def test_posterior_zone_lies_in_the_convergent_zone_and_excludes_S(d):
    rng = np.random.default_rng(d)
    S_prev, S = rng.random((50, d)), rng.random((50, d))
    a = np.linalg.norm(S - S_prev, axis=1)
    X = sz.posterior_controller(S, S_prev, rng)
    np.testing.assert_allclose(np.linalg.norm(X - S, axis=1), a, rtol=1e-12)  # on the border
    # turned by γ ∈ [0, π/2] away from the movement direction
    cos = np.einsum("ij,ij->i", X - S, S - S_prev) / a ** 2
    assert (cos >= -1e-12).all()
    P, rho, lam = sz.make_zone(S, X, rng)
    assert ((lam > 0.5) & (lam < 1)).all()
    dist_PS = np.linalg.norm(P - S, axis=1)
    assert (dist_PS + rho <= a * (1 + 1e-12)).all()      # zone ⊂ convergent zone
    assert (dist_PS > rho).all()                           # S outside the zone
    pts = sz.expdp_in_zones(P, rho, S, a, X, 1.0, rng)
    delta = np.linalg.norm(pts - S, axis=1) / a
    assert ((delta > 0) & (delta < 1)).all()
    assert (np.linalg.norm(pts - P, axis=1) <= rho * (1 + 1e-12)).all()
    q = sz.score(pts[:, None, :], S, a, X)[:, 0]
    assert ((q > 0) & (q <= 2)).all()


def test_expdp_in_zone_samples_the_exponential_density_exactly():
    """E[q] and E[δ] of the rejection sampler equal the exact exp(ε q/4)-weighted averages."""
    rng = np.random.default_rng(3)
    S, S_prev = np.array([[0.2, 0.3]]), np.array([[0.5, 0.7]])
    a = np.linalg.norm(S - S_prev, axis=1)
    X = sz.posterior_controller(S, S_prev, rng)
    P, rho, _ = sz.make_zone(S, X, rng)
    eps = 12.0                      # strong tilt so that a wrong density would be visible
    m = 20_000
    draws = sz.expdp_in_zones(np.repeat(P, m, 0), np.repeat(rho, m), np.repeat(S, m, 0), np.repeat(a, m),
                              np.repeat(X, m, 0), eps, rng)
    q_draw = sz.score(draws[None], S, a, X)[0]
    grid = sz.uniform_in_balls(P, rho, 400_000, np.random.default_rng(4))
    q_grid = sz.score(grid, S, a, X)[0]
    w = np.exp(eps / 4 * (q_grid - 2))
    exact = float((w * q_grid).sum() / w.sum())
    uniform_mean = float(q_grid.mean())
    se = q_draw.std() / math.sqrt(m)
    assert abs(q_draw.mean() - exact) < 5 * se
    assert abs(exact - uniform_mean) > 20 * se   # the test can tell the tilted law from the uniform one


# --- Algorithm 1 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["posterior", "prior"])
def test_record_epsilon_is_the_bottom_up_sum(strategy):
    X = _blobs()
    res = lushen(X, 4, 10.0, 0.0, np.random.default_rng(0), dict(SETTINGS, strategy=strategy))
    eps_step = 10.0 / SETTINGS["atom_steps"]
    expected = eps_step * SETTINGS["epsilon0_steps"] + res.info["sampling_iterations"] * eps_step
    assert res.epsilon_spent == pytest.approx(expected, rel=1e-12)
    assert res.info["epsilon_total_bottom_up"] == pytest.approx(res.epsilon_spent, rel=1e-12)
    assert sum(e for _, e, _ in res.ledger) == pytest.approx(res.epsilon_spent, rel=1e-12)
    assert len(res.ledger) == res.info["sampling_iterations"] + 1   # one parallel charge per iteration + ε₀
    assert res.info["converged"] and not res.info["forced_stop"]
    assert res.iterations == res.info["sampling_iterations"] + 1


def test_cap_stops_the_loop_without_overspending():
    X = _blobs()
    res = lushen(X, 4, 1.0, 0.0, np.random.default_rng(0), dict(SETTINGS, atom_steps=3, strategy="posterior"))
    assert res.info["forced_stop"]
    assert res.epsilon_spent <= 1.0 + 1e-12
    assert res.info["sampling_iterations"] == 2


def test_initial_centroids_are_drawn_per_seed_and_epsilon_and_shared_by_the_methods():
    """§7.1: a run at another ε is another run (independent starts); every method of one (seed, ε)
    shares them (run_init_seed), which the Lloyd diagnostic reproduces."""
    from dpclust.lushen2020.algorithm import run_init_seed

    X = _blobs(seed=1)
    s = dict(SETTINGS, init_per_epsilon=True)
    seeds = {eps: run_init_seed(s, eps) for eps in (10.0, 50.0, 100.0)}
    assert len(set(seeds.values())) == 3 and run_init_seed(s, 10.0) == seeds[10.0]
    assert run_init_seed(dict(s, init_per_epsilon=False), 10.0) == s["init_seed"]
    for eps in (10.0, 50.0):
        C0 = initial_centers(X, 4, "random_points", rng=np.random.default_rng(seeds[eps]))
        for strategy in ("posterior", "prior"):
            res = lushen(X, 4, eps, 0.0, np.random.default_rng(3), dict(s, strategy=strategy))
            assert res.info["lloyd_cost"] == pytest.approx(lloyd(X, C0, tol=0.0).cost)
    starts = [initial_centers(X, 4, "random_points", rng=np.random.default_rng(v)) for v in seeds.values()]
    assert not np.array_equal(starts[0], starts[1])


def test_same_seed_same_bytes_and_different_seed_differs():
    X = _blobs()
    a = lushen(X, 4, 10.0, 0.0, np.random.default_rng(5), SETTINGS)
    b = lushen(X, 4, 10.0, 0.0, np.random.default_rng(5), SETTINGS)
    c = lushen(X, 4, 10.0, 0.0, np.random.default_rng(6), SETTINGS)
    assert a.centers.tobytes() == b.centers.tobytes() and a.info == b.info
    assert a.centers.tobytes() != c.centers.tobytes()


def test_shares_lloyds_initial_centroids_and_prior_converges_to_lloyd():
    X = _blobs(seed=1)
    C0 = initial_centers(X, 4, "random_points", rng=np.random.default_rng(SETTINGS["init_seed"]))
    ref = lloyd(X, C0, tol=0.0)
    matches, ratios = [], []
    for seed in range(8):
        res = lushen(X, 4, 50.0, 0.0, np.random.default_rng(seed), dict(SETTINGS, strategy="prior"))
        assert res.info["lloyd_iterations"] == ref.iterations
        assert res.info["lloyd_cost"] == pytest.approx(ref.cost)
        matches.append(res.info["match"])
        ratios.append(res.info["iteration_ratio"])
    assert np.mean(matches) >= 0.75
    assert np.mean(ratios) <= 2.0


@pytest.mark.parametrize("bad, message", [
    (dict(strategy="future"), "strategy"),
    (dict(convergence="never"), "convergence"),
    (dict(atom_steps=1, epsilon0_steps=1), "atom_steps"),
])
def test_bad_settings_raise_one_clear_error(bad, message):
    with pytest.raises(DPClustError, match=message):
        lushen(_blobs(), 4, 1.0, 0.0, np.random.default_rng(0), dict(SETTINGS, **bad))


def test_bad_inputs_raise():
    X = _blobs()
    with pytest.raises(DPClustError, match="delta"):
        lushen(X, 4, 1.0, 1e-6, np.random.default_rng(0), SETTINGS)
    with pytest.raises(DPClustError, match="init_seed"):
        lushen(X, 4, 1.0, 0.0, np.random.default_rng(0), {k: v for k, v in SETTINGS.items() if k != "init_seed"})
    with pytest.raises(DPClustError, match="bounds"):
        lushen(X, 4, 1.0, 0.0, np.random.default_rng(0), {k: v for k, v in SETTINGS.items() if k != "bounds"})
    with pytest.raises(DPClustError):
        lushen(X, 4, -1.0, 0.0, np.random.default_rng(0), SETTINGS)
    with pytest.raises(DPClustError):
        lushen(np.full((5, 2), np.nan), 2, 1.0, 0.0, np.random.default_rng(0), SETTINGS)


def test_estimator_and_higher_dimension():
    X = _blobs(d=4, k=3)
    est = LuShen(n_clusters=3, epsilon=20.0, random_state=0, settings={"bounds": [0.0, 1.0]}).fit(X)
    assert est.cluster_centers_.shape == (3, 4)
    assert ((est.cluster_centers_ >= 0) & (est.cluster_centers_ <= 1)).all()
    assert est.epsilon_spent_ <= 20.0


def test_prior_controller_is_the_next_lloyd_mean_clipped_to_the_convergent_zone():
    from dpclust.lushen2020.algorithm import _prior_controller

    # two tight groups; centre 0 sits between them, so its next Lloyd mean is far away
    X = np.array([[0.1, 0.5], [0.12, 0.5], [0.9, 0.5], [0.92, 0.5]])
    S = np.array([[0.3, 0.5], [0.91, 0.5]])
    S_prev = np.array([[0.28, 0.5], [0.95, 0.5]])
    a = np.linalg.norm(S - S_prev, axis=1)
    active = np.array([True, True])
    Xc, fallbacks = _prior_controller(X, S, a, S_prev, active, lushen.settings.defaults(), np.random.default_rng(0))
    # cluster 0's next mean is (0.11, 0.5): 0.19 away > a = 0.02, so it is moved onto the border
    np.testing.assert_allclose(Xc[0], S[0] + a[0] * np.array([-1.0, 0.0]))
    # cluster 1's next mean (0.91, 0.5) equals S: degenerate → Posterior controller on the border
    assert fallbacks == 1
    assert np.linalg.norm(Xc[1] - S[1]) == pytest.approx(a[1])
    # without clipping the controller is the next Lloyd mean itself
    Xc3, _ = _prior_controller(X, S, a, S_prev, active, dict(lushen.settings.defaults(), prior_clip=False),
                               np.random.default_rng(0))
    np.testing.assert_allclose(Xc3[0], [0.11, 0.5])


# --- review regressions ----------------------------------------------------------------------------
def test_expdp_with_a_large_step_budget_finishes():
    """Regression: the rejection envelope was exp(c·(q − 2)) although q ≤ 2 − δ_min < 2 on the whole
    zone (S lies outside it), so the acceptance decayed like exp(−c·δ_min) and a large ε_step
    (c = ε/4 ≥ ~20) raised RuntimeError. The envelope is now the zone's own sup of q."""
    X = _blobs()
    res = lushen(X, 4, 1000.0, 0.0, np.random.default_rng(1), dict(SETTINGS, atom_steps=10, strategy="posterior"))
    assert res.info["sampling_iterations"] >= 1
    assert res.epsilon_spent <= 1000.0 * (1 + 1e-12)


@pytest.mark.parametrize("eps", [12.0, 120.0])
def test_expdp_in_zone_is_exact_for_strong_tilts(eps):
    """E[δ] and E[α] of the sampler equal the exact exp(ε q/4)-weighted averages over the zone,
    computed by quadrature on a fine polar grid around S (independent of the sampler)."""
    rng = np.random.default_rng(8)
    S, S_prev = np.array([[0.2, 0.3]]), np.array([[0.5, 0.7]])
    a = np.linalg.norm(S - S_prev, axis=1)
    X = sz.posterior_controller(S, S_prev, rng)
    P, rho, _ = sz.make_zone(S, X, rng)
    m = 20_000
    draws = sz.expdp_in_zones(np.repeat(P, m, 0), np.repeat(rho, m), np.repeat(S, m, 0), np.repeat(a, m),
                              np.repeat(X, m, 0), eps, rng)
    assert (np.linalg.norm(draws - P, axis=1) <= rho * (1 + 1e-9)).all()
    # quadrature: fine Cartesian grid restricted to the zone, weights exp(c q) (area element constant)
    g = np.linspace(-1, 1, 1501)
    xx, yy = np.meshgrid(g, g)
    pts = np.stack([xx.ravel(), yy.ravel()], 1)
    pts = pts[(pts ** 2).sum(1) <= 1] * rho[0] + P[0]
    q = sz.score(pts[None], S, a, X)[0]
    w = np.exp(eps / 4 * (q - q.max()))
    dist = np.linalg.norm(pts - S, axis=1) / a[0]
    exact = float((w * dist).sum() / w.sum())
    d_draw = np.linalg.norm(draws - S, axis=1) / a[0]
    se = d_draw.std() / math.sqrt(m)
    assert abs(d_draw.mean() - exact) < 5 * se + 1e-4


@pytest.mark.parametrize("strategy", ["posterior", "prior"])
def test_every_draw_is_calibrated_to_the_epsilon_it_charges(monkeypatch, strategy):
    """Through `lushen` itself: each iteration's ExpDP is calibrated to the ε_step its parallel
    block charged (Thm 5), and line 12's Laplace to sensitivity 1 and the ε₀ it charges."""
    from dpclust.lushen2020 import algorithm as alg

    seen = {"expdp": [], "laplace": []}
    real_expdp, real_lap = sz.expdp_in_zones, alg.laplace_mechanism

    def expdp(P, rho, S, a, X, epsilon, rng, **kw):
        seen["expdp"].append((float(epsilon), P.shape[0]))
        return real_expdp(P, rho, S, a, X, epsilon, rng, **kw)

    def lap(value, sensitivity, epsilon, rng, **kw):
        seen["laplace"].append((float(sensitivity), float(epsilon)))
        return real_lap(value, sensitivity, epsilon, rng, **kw)

    monkeypatch.setattr(alg.sz, "expdp_in_zones", expdp)
    monkeypatch.setattr(alg, "laplace_mechanism", lap)
    res = lushen(_blobs(), 4, 10.0, 0.0, np.random.default_rng(2), dict(SETTINGS, strategy=strategy))
    eps_step = 10.0 / SETTINGS["atom_steps"]
    charges = [row for row in res.ledger if row[0].startswith("iteration")]
    assert len(seen["expdp"]) == len(charges) == res.info["sampling_iterations"] >= 1
    for (eps, _), row in zip(seen["expdp"], charges):
        assert eps == pytest.approx(eps_step, rel=1e-12) and row[1] == pytest.approx(eps, rel=1e-12)
    assert seen["laplace"] == [(1.0, pytest.approx(eps_step * SETTINGS["epsilon0_steps"]))]
    assert res.ledger[-1][1] == pytest.approx(seen["laplace"][0][1], rel=1e-12)
