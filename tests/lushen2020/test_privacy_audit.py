"""Empirical privacy audits of Algorithm 1's private components on neighbouring datasets.

1. The ExpDP draw in a (public) sampling zone (§6.1, Thm 5's per-cluster step). Configuration:
   neighbours D = {p} and D' = D ∪ {p'} (add one record) whose means S, S' sit on the two ends of a
   diameter of a public zone, with the public previous centroid at equal distance from both (an
   equilateral triangle), each mean's controller pointing at the other end (Posterior with γ = 0).
   The exact privacy loss of the correctly calibrated mechanism in this configuration is computed on
   a fine grid: it is ε/4, well below the ε that Theorem 5 charges (Δq = 2 is loose here). The audit
   (Neyman–Pearson statistic q_D − q_D', which does not depend on the noise scale) must stay below that
   exact loss; with every noise scale halved (`halved_noise`, i.e. the logit factor doubled) it must
   exceed it.
2. Line 12's noisy counts: D' = D ∪ {origin} changes one count by 1 and no sum, so the output centre
   is a monotone function of the Laplace-noised count: the audit passes at ε₀ and fails with halved
   noise.
3. A finding, not a fix: line 12 as the paper writes it divides the *exact* sums by noisy counts, so
   when the added record changes a sum's direction the output reveals it; the audit exceeds ε₀.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust import audit
from dpclust.accountant import Accountant
from dpclust.lushen2020 import sampling_zone as sz
from dpclust.lushen2020.algorithm import final_release, lushen

EPS = 8.0
S_D, S_DP = np.array([0.2, 0.3]), np.array([0.5, 0.3])
S_PREV = np.array([0.35, 0.3 + 0.3 * math.sqrt(3) / 2])
P, RHO = np.array([[0.35, 0.3]]), np.array([0.15])
D, DP = np.array([[0.2, 0.3]]), np.array([[0.2, 0.3], [0.8, 0.3]])


def _config(data):
    S = data.mean(axis=0)
    X = S_DP if np.allclose(S, S_D) else S_D
    return S, float(np.linalg.norm(S_PREV - S)), X


def _stat(points):
    qa = sz.score(points[None], S_D[None], np.array([np.linalg.norm(S_PREV - S_D)]), S_DP[None])[0]
    qb = sz.score(points[None], S_DP[None], np.array([np.linalg.norm(S_PREV - S_DP)]), S_D[None])[0]
    return qa - qb


def expdp_zone_mechanism(data, rng, size):
    S, a, X = _config(data)
    out = sz.expdp_in_zones(np.repeat(P, size, 0), np.repeat(RHO, size), np.repeat(S[None], size, 0),
                            np.full(size, a), np.repeat(X[None], size, 0), EPS, rng)
    return _stat(out)


def exact_loss(eps=EPS):
    g = np.linspace(-1, 1, 601)
    xx, yy = np.meshgrid(g, g)
    pts = np.stack([xx.ravel(), yy.ravel()], 1)
    pts = pts[(pts ** 2).sum(1) <= 1] * RHO[0] + P[0]
    c = eps / (2 * sz.SCORE_SENSITIVITY)
    logs = []
    for data in (D, DP):
        S, a, X = _config(data)
        q = sz.score(pts[None], S[None], np.array([a]), X[None])[0]
        logs.append(c * q - np.log(np.exp(c * q).sum()))
    return float(np.max(np.abs(logs[0] - logs[1])))


def test_zone_configuration_is_valid_for_both_neighbours():
    for data in (D, DP):
        S, a, X = _config(data)
        assert np.linalg.norm(P[0] - S) + RHO[0] <= a + 1e-12   # zone ⊂ convergent zone of each
        assert np.linalg.norm(X - S) == pytest.approx(a)         # controller on the border
    assert exact_loss() == pytest.approx(EPS / 4, rel=0.01)


@pytest.mark.slow
def test_expdp_zone_audit_passes_and_catches_halved_noise():
    bound = exact_loss()
    res = audit.audit(expdp_zone_mechanism, D, DP, n_samples=20_000, seed=0)
    assert res.epsilon_lower_bound <= bound <= EPS
    with audit.halved_noise() as calls:
        res_half = audit.audit(expdp_zone_mechanism, D, DP, n_samples=20_000, seed=0)
    assert sum(calls.values()) > 0
    assert res_half.epsilon_lower_bound > bound


EPS0 = 1.0
BASE = np.array([[0.2, 0.2], [0.3, 0.1], [0.1, 0.3], [0.25, 0.25]])
S_HAT = np.array([[0.2, 0.2], [0.9, 0.9]])       # public centres; every point below is in cluster 0
SET = dict(lushen.settings.defaults(), bounds=[0.0, 1.0])


def line12(data, rng, size):
    """`size` independent releases in one call: `size` disjoint copies of the cluster, each its own
    cluster (the count vector's Laplace noise is independent per cluster, so each row is one draw)."""
    n = data.shape[0]
    X = np.tile(data, (size, 1))
    labels = np.repeat(np.arange(size), n)
    centres = np.repeat(S_HAT[:1], size, 0)
    return final_release(X, labels, centres, EPS0, rng, Accountant(EPS0), SET)


def test_line12_counts_audit_passes_and_catches_halved_noise():
    Dp = np.vstack([BASE, [[0.0, 0.0]]])          # add one record at the origin: the sums are unchanged
    proj = lambda c: float(c[0])                  # noqa: E731 (monotone in the noisy count)
    res = audit.audit(line12, BASE, Dp, n_samples=20_000, seed=1, project=proj)
    assert res.epsilon_lower_bound <= EPS0
    with audit.halved_noise():
        res_half = audit.audit(line12, BASE, Dp, n_samples=20_000, seed=1, project=proj)
    assert res_half.epsilon_lower_bound > EPS0


def test_line12_as_written_leaks_the_exact_sums():
    """Finding reported to the lead: the paper's line 12 is not ε₀-DP when the sums change."""
    Dp = np.vstack([BASE, [[1.0, 0.0]]])          # changes the direction of the cluster sum
    angle = lambda c: float(math.atan2(c[1], c[0]))  # noqa: E731
    res = audit.audit(line12, BASE, Dp, n_samples=4_000, seed=2, project=angle)
    assert res.epsilon_lower_bound > EPS0
