"""Algorithm 2 (private grid set cover): Lemma 7 offsets, exactness of the grid exponential
mechanism sampler against brute-force enumeration, removal of covered points, and the privacy
audit of the exponential mechanism on neighbouring datasets (passes; fails with halved noise)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpclust import mechanisms
from dpclust.audit import statistics as audit
from dpclust.nguyen2021.grid_cover import AliveTree, GridEM, lemma7_offsets, private_grid_cover


@pytest.mark.parametrize("dprime,ratio", [(1, 2.5), (2, 2 * math.sqrt(2)), (3, 2.0)])
def test_lemma7_offsets_are_exactly_the_reachable_grid_offsets(dprime, ratio):
    W = {tuple(w) for w in lemma7_offsets(dprime, ratio)}
    lim = int(math.ceil(ratio)) + 2
    brute = set()
    for w in itertools.product(range(-lim, lim + 2), repeat=dprime):
        dist2 = sum((max(-x, 0, x - 1)) ** 2 for x in w)  # distance of w_j to [0, 1]
        if dist2 < ratio * ratio:
            brute.add(w)
    assert W == brute
    assert len(W) == len(lemma7_offsets(dprime, ratio))  # no duplicates


def test_lemma7_offsets_contain_every_covering_grid_point():
    rng = np.random.default_rng(0)
    t, R, d = 0.1, 0.25, 3
    W = lemma7_offsets(d, R / t)
    P = rng.uniform(-0.5, 0.5, size=(50, d))
    for p in P:
        f = np.floor(p / t).astype(int)
        lo, hi = f - 4, f + 5
        for b in itertools.product(*[range(a, c + 1) for a, c in zip(lo, hi)]):
            if np.sum((np.array(b) * t - p) ** 2) < R * R:
                assert tuple(np.array(b) - f) in {tuple(w) for w in W}
        break  # one point is enough for the exhaustive check (bounded test time)


def _exact_law(P, t, R, s, B):
    d = P.shape[1]
    grid = np.array(list(itertools.product(range(-B, B + 1), repeat=d)))
    G = grid * t
    c = ((((G[:, None, :] - P[None, :, :]) ** 2).sum(-1)) < R * R).sum(1)
    logw = s * c
    p = np.exp(logw - logw.max())
    return grid, c, p / p.sum()


def test_grid_em_sampler_is_exact_against_enumeration():
    """Chi-square goodness of fit of 6,000 draws against the exact law over the whole grid."""
    rng = np.random.default_rng(11)
    P = np.array([[0.1, 0.1], [0.15, 0.05], [0.12, 0.2], [-0.5, 0.4], [-0.45, 0.42], [0.6, -0.6]])
    t, R, s = 0.2, 0.3, 0.8
    alive = np.ones(len(P), dtype=bool)
    em = GridEM(P, alive, t, R, s, max_trials=10_000)
    grid, c, p = _exact_law(P, t, R, s, em.B)
    index = {tuple(b): i for i, b in enumerate(grid)}
    n = 6000
    counts = np.zeros(len(grid))
    for _ in range(n):
        b, cov, _ = em.draw(rng)
        i = index[tuple(b)]
        assert cov == c[i]
        counts[i] += 1
    # pool cells by cover count (expected counts >= 5 per pooled cell)
    levels = np.unique(c)
    obs = np.array([counts[c == v].sum() for v in levels])
    exp = np.array([p[c == v].sum() for v in levels]) * n
    assert (exp >= 5).all()
    chi2 = ((obs - exp) ** 2 / exp).sum()
    assert stats.chi2.sf(chi2, len(levels) - 1) > 1e-3
    # and within the most likely level, grid points are drawn uniformly
    top = np.flatnonzero(c == c.max())
    if len(top) > 1:
        chi2u = stats.chisquare(counts[top]).pvalue
        assert chi2u > 1e-3


def test_private_grid_cover_removes_covered_points_and_is_deterministic():
    P = np.random.default_rng(2).normal(0, 0.05, size=(200, 2))
    out = []
    for _ in range(2):
        alive = np.ones(200, dtype=bool)
        C, counts, trials, leaves = private_grid_cover(P, alive, 0.05, 0.1, 3, 0.5, np.random.default_rng(4))
        out.append((C.tobytes(), counts.tolist(), alive.copy()))
        assert (~alive).sum() == counts.sum()
        for g in C:
            assert not (((P[alive] - g) ** 2).sum(1) < (0.1 + 0.05 * math.sqrt(2)) ** 2).any()
    assert out[0][0] == out[1][0] and out[0][1] == out[1][1]


# -------------------------------------------------------------------------------------------
# Privacy audit of one exponential-mechanism call of Algorithm 2 on add/remove neighbours
# -------------------------------------------------------------------------------------------
EPS_E = 4.0          # per-call ε of the audited exponential mechanism (large: a strong signal)
T, R_COVER = 0.25, 0.5
X_STAR = np.array([0.0])


def _em_mechanism(data, rng, size):
    """`size` draws of one Alg. 2 call on `data` (1-D); output 1 when the grid point covers x*."""
    alive = np.ones(len(data), dtype=bool)
    s = mechanisms.exponential_logit_scale(1.0, EPS_E)  # looked up at call time (audit patches it)
    em = GridEM(data, alive, T, R_COVER, s, max_trials=100_000)
    out = np.empty(size)
    for i in range(size):
        b, _, _ = em.draw(rng)
        out[i] = float(abs(b[0] * T - X_STAR[0]) < R_COVER)
    return out


D = np.array([[0.8]])                 # one far point
D_PRIME = np.array([[0.8], [0.0]])    # plus x* (add/remove neighbours, Definition 4)


def test_audit_grid_em_passes_and_catches_halved_noise():
    """The cover count is monotone in the data (adding a point never lowers it), so one call with
    logit ε_E/2 is (ε_E/2)-DP for add/remove neighbours (McSherry & Talwar 2007); the audit's
    lower bound must stay below that, and must exceed it when every noise scale is halved."""
    claim = EPS_E / 2
    res = audit.audit(_em_mechanism, D, D_PRIME, n_samples=6000, seed=1)
    assert res.epsilon_lower_bound <= claim
    with audit.halved_noise() as calls:
        bad = audit.audit(_em_mechanism, D, D_PRIME, n_samples=6000, seed=1)
    assert calls["exponential_logit_scale"] > 0
    assert bad.epsilon_lower_bound > claim


def test_grid_em_stays_exact_after_points_are_removed():
    """The partition built before a pick keeps stale (larger) bounds after covered points leave
    D'; draws must follow the law of the remaining points."""
    rng = np.random.default_rng(5)
    P = np.array([[0.1, 0.1], [0.12, 0.14], [0.1, 0.16], [-0.4, 0.3], [-0.42, 0.35], [0.5, -0.5]])
    t, R, s = 0.2, 0.3, 1.0
    alive = np.ones(len(P), dtype=bool)
    index = AliveTree(P, alive)   # points leave D' through the index (as in private_grid_cover)
    em = GridEM(P, alive, t, R, s, max_trials=10_000, index=index)
    for _ in range(300):          # refine the partition on the full data
        em.draw(rng)
    index.remove(np.arange(3))    # the densest group is covered and removed
    grid, c, p = _exact_law(P[alive], t, R, s, em.B)
    where = {tuple(b): i for i, b in enumerate(grid)}
    n = 5000
    counts = np.zeros(len(grid))
    for _ in range(n):
        b, cov, _ = em.draw(rng)
        assert cov == c[where[tuple(b)]]
        counts[where[tuple(b)]] += 1
    levels = np.unique(c)
    obs = np.array([counts[c == v].sum() for v in levels])
    exp = np.array([p[c == v].sum() for v in levels]) * n
    chi2 = ((obs - exp) ** 2 / exp).sum()
    assert stats.chi2.sf(chi2, len(levels) - 1) > 1e-3


def test_log_expm1_gives_a_scalar_the_bits_of_the_array_path():
    """The samplers call log_expm1 per trial on scalars (a fast path); every value must be the bit
    the vectorised path gives, at 0 (−inf), around the switch at 30 and far above it."""
    from dpclust.nguyen2021.grid_cover import log_expm1

    rng = np.random.default_rng(3)
    xs = np.concatenate([[0.0, 5e-324, 1e-300, 1e-8, 29.999999, 30.0, 30.000001, 700.0, 1e5],
                         rng.uniform(0, 60, 5000), rng.exponential(1e-3, 5000), 0.0037 * np.arange(200)])
    array_path = log_expm1(xs)
    for x, want in zip(xs, array_path):
        for scalar in (float(x), np.float64(x)):
            got = log_expm1(scalar)
            assert isinstance(got, float) and (got == want and np.signbit(got) == np.signbit(want)), (x, got, want)
    assert log_expm1(0) == -np.inf and log_expm1(np.int64(7)) == log_expm1(np.array([7.0]))[0]


@pytest.mark.parametrize("fraction", [0.0, 0.5, 10.0])
def test_alive_tree_answers_as_a_tree_of_the_alive_points_alone(fraction, monkeypatch):
    """The index keeps points that have left until they outnumber REBUILD_DEAD_FRACTION of its tree;
    every query must give the same sorted alive indices as a tree built afresh over the alive points
    (at 0: rebuilt after every removal, the earlier behaviour; at 10: never rebuilt here), and every
    removal must change `version` (GridEM's leaves re-filter their members on it)."""
    monkeypatch.setattr(AliveTree, "REBUILD_DEAD_FRACTION", fraction)
    rng = np.random.default_rng(11)
    P = np.concatenate([rng.normal(0.0, 0.05, (400, 3)), rng.uniform(-1, 1, (600, 3))])
    P[5] = P[4]                      # duplicates and a point on a query sphere
    alive = np.ones(len(P), dtype=bool)
    index = AliveTree(P, alive)
    R = 0.3
    removals = 0
    for step in range(40):
        g = P[rng.integers(len(P))] + rng.normal(0, 0.05, 3)
        if step == 7:
            g = P[9] + np.array([R, 0.0, 0.0])
        fresh = AliveTree(P, alive.copy())
        G = np.stack([g, -g, g * 0.5])
        for linf in (False, True):
            for got, want in zip(index.near(G, R, linf=linf), fresh.near(G, R, linf=linf)):
                assert np.array_equal(got, want) and np.all(np.diff(got) > 0)
        cover = index.cover(g, R)
        assert np.array_equal(cover, fresh.cover(g, R))
        assert index.count(g, R) == fresh.count(g, R) == cover.size
        before = index.version
        index.remove(cover)
        removals += bool(cover.size)
        assert not alive[cover].any()
        assert index.version == before + (1 if cover.size else 0)
    expected = {0.0: 1 + removals, 10.0: 1}.get(fraction)
    assert index.rebuilds == expected if expected else 1 < index.rebuilds < 1 + removals
