"""The non-private k-median of Figures 2-3 (dpclust.cohenaddad2022.reference): kmed++ as the paper states
it (one k-median++ seeding, 10 exact Lloyd-median rounds) and the converged reference that normalises
the figures."""
from __future__ import annotations

import numpy as np
import pytest

from dpclust.baselines import geometric_median, lloyd_kmedian
from dpclust.cohenaddad2022.reference import (
    _distinct,
    kmedian_reference,
    lloyd_median_converged,
    weighted_geometric_median,
)
from dpclust.metrics import assign
from dpclust.pipeline.configuration import load_config, resolve_algorithm


def _blobs(seed=0, n=3000, k=6, d=3, dup=True):
    rng = np.random.default_rng(seed)
    centres = rng.random((k, d))
    X = np.clip(centres[rng.integers(k, size=n)] + 0.05 * rng.standard_normal((n, d)), 0, 1)
    if dup:  # integer-valued colours as in Skin: many repeated rows
        X = np.round(X * 40) / 40
    return X


def _cost(X, C):
    return float(np.sqrt(assign(X, C)[1]).sum())


def test_distinct_rows_with_multiplicities_leave_every_cost_unchanged():
    X = _blobs()
    P, w = _distinct(X)
    assert P.shape[0] < X.shape[0] and w.sum() == X.shape[0]
    C = np.random.default_rng(1).random((4, 3))
    assert float((w * np.sqrt(assign(P, C)[1])).sum()) == pytest.approx(_cost(X, C), rel=1e-12)


def test_weighted_geometric_median_equals_the_median_of_repeated_rows():
    rng = np.random.default_rng(2)
    P = rng.random((30, 2))
    w = rng.integers(1, 5, size=30).astype(float)
    expanded = np.repeat(P, w.astype(int), axis=0)
    ours = weighted_geometric_median(P, w, P.mean(0), 2000, 1e-12)
    ref = geometric_median(expanded, max_iter=2000, tol=1e-12)
    assert np.allclose(ours, ref, atol=1e-7)


def test_kmedpp_rounds_are_the_baselines_lloyd_median_rounds():
    """kmed++ moved from dpclust.baselines to the reference module: the same 10 exact Lloyd-median
    rounds from the same seeding give the same centres (the distinct-row speed-up is exact)."""
    X = _blobs(3)
    C0 = X[np.random.default_rng(4).choice(X.shape[0], 6, replace=False)]
    P, w = _distinct(X)
    ours, cost, rounds, _ = lloyd_median_converged(P, w, C0, max_iter=10, rel_tol=0.0, median_max_iter=500,
                                                   median_tol=1e-12)
    base = lloyd_kmedian(X, C0, max_iter=10)
    assert np.allclose(ours, base.centers, atol=1e-6)
    assert cost == pytest.approx(base.cost, rel=1e-9)


def test_lloyd_median_rounds_never_increase_the_cost_and_converge():
    X = _blobs(5)
    P, w = _distinct(X)
    C0 = P[:6].copy()
    costs = []
    for it in range(1, 8):
        C, cost, _, _ = lloyd_median_converged(P, w, C0, max_iter=it, rel_tol=0.0, median_max_iter=500,
                                               median_tol=1e-12)
        costs.append(cost)
    assert all(b <= a * (1 + 1e-12) for a, b in zip(costs, costs[1:]))
    _, _, rounds, converged = lloyd_median_converged(P, w, C0, max_iter=300, rel_tol=1e-6, median_max_iter=500,
                                                     median_tol=1e-10)
    assert converged and rounds < 300


def test_converged_reference_is_at_least_as_good_as_kmedpp_and_deterministic():
    config = load_config()
    X = _blobs(6, n=4000, k=8)
    ref = resolve_algorithm(config, "cohenaddad2022.kmedian_ref")["settings"]
    kpp = resolve_algorithm(config, "cohenaddad2022.kmedpp")["settings"]
    run = lambda s, seed: kmedian_reference(X, 8, None, 0.0, np.random.default_rng(99),  # noqa: E731
                                            {**s, "bounds": [0, 1], "init_seed": seed, "screen_rows": 1000}
                                            if s is ref else {**s, "bounds": [0, 1], "init_seed": seed})
    refs = [run(ref, s) for s in range(3)]
    kpps = [run(kpp, s) for s in range(3)]
    assert all(r.info["converged"] for r in refs)
    assert min(_cost(X, r.centers) for r in refs) <= min(_cost(X, r.centers) for r in kpps) * (1 + 1e-9)
    assert np.mean([_cost(X, r.centers) for r in refs]) < np.mean([_cost(X, r.centers) for r in kpps])
    # the run's generator is not used: the shared init_seed alone fixes the result
    again = kmedian_reference(X, 8, None, 0.0, np.random.default_rng(0),
                              {**ref, "bounds": [0, 1], "init_seed": 0, "screen_rows": 1000})
    assert np.array_equal(again.centers, refs[0].centers)
    assert all(r.iterations <= 10 for r in kpps) and refs[0].epsilon_spent == 0.0   # 10 rounds or a fixed point
