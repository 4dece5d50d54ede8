"""Empirical privacy audits (dpclust.audit) of the private partition (Alg. 1) and the local swap
(Alg. 3) on neighbouring datasets (add/remove one point, Def. 1): each passes with the noise as
implemented and is caught with every noise scale halved (`halved_noise()`).

Partition: p = 1, n treated as 8 (three levels, ε' = ε/3 each with level_rule 'exact'); D has m
points at x0, D' has m + 1. Only levels 1 and 2 are released (the centres of level-3 cubes are
never added to C), and the event "the level-2 cube containing x0 is active" has probability f(m)²
vs f(m + 1)², a ratio of e^{2ε'} = e^{2ε/3} ≤ e^ε; halving the Laplace scale doubles it to e^{4ε/3}.

Local swap: k = 1, C = {−1, 0, +1} in B(0, 1), a fixed data-independent Z⁽⁰⁾ = {0}, T = 1. Every
swap utility −(L(Z − x + y) − L(Z)) contains the same −L(Z), so adding a point moves the utilities
*relative to each other* by at most 4Λ², and a round is really (ε_r/2)-DP — the paper's
ε_r = ε/(T + 1) with Δu = 4Λ² is loose by a factor 2. We audit against that tight ε_r/2 (a smaller
claim than the accountant's), which the halved-noise run violates: its log-odds shift is ε_r.
"""
import numpy as np
import pytest

from dpclust import audit
from dpclust.accountant import Accountant
from dpclust.balcan2017.local_swap import local_swap
from dpclust.balcan2017.partition import private_partition

pytestmark = pytest.mark.slow

EPS_PART = 3.0
N_PARAM = 8


def _partition_event(data, rng):
    acc = Accountant(EPS_PART)
    # γ = (c/ε')·ln(n/δ) = m + 1 = 3 with ε' = 1, n = 8, δ = 0.5: f(m+1) = 1/2 exactly
    out = private_partition(data, EPS_PART, 0.5, [0.0], 1.0, rng, acc, gamma_factor=3.0 / np.log(16.0),
                            level_rule="exact", n_param=N_PARAM)
    assert acc.spent_epsilon <= EPS_PART + 1e-12
    hit = (out["depth"] == 2) & (np.abs(out["centers"][:, 0] - 0.125) < 1e-12)
    return float(hit.any())


D_PART = np.full((2, 1), 0.1)
DP_PART = np.full((3, 1), 0.1)


def test_partition_audit_passes():
    res = audit.audit(_partition_event, D_PART, DP_PART, n_samples=6_000, seed=1)
    assert res.epsilon_lower_bound <= EPS_PART
    assert res.epsilon_lower_bound > 0.5          # the audit has power: it sees most of 2ε/3 = 2


def test_partition_audit_fails_with_halved_noise():
    with audit.halved_noise():
        res = audit.audit(_partition_event, D_PART, DP_PART, n_samples=6_000, seed=1)
    assert res.epsilon_lower_bound > EPS_PART


EPS_SWAP = 4.0                       # T = 1: ε_r = 2 per exponential mechanism, tight bound ε_r/2 = 1
C_SWAP = np.array([[-1.0], [0.0], [1.0]])


def _swap_event(data, rng):
    acc = Accountant(EPS_SWAP)
    out = local_swap(data, C_SWAP, 1, EPS_SWAP, 1.0, 1, rng, acc, init_index=[1])
    assert acc.spent_epsilon == pytest.approx(EPS_SWAP)
    return float(out["index"][0] == 2)


D_SWAP = np.array([[-1.0], [-1.0]])
DP_SWAP = np.array([[-1.0], [-1.0], [1.0]])


def test_local_swap_audit_passes():
    res = audit.audit(_swap_event, D_SWAP, DP_SWAP, n_samples=4_000, seed=2)
    assert res.epsilon_lower_bound <= EPS_SWAP / 2 / 2
    assert res.epsilon_lower_bound > 0.4


def test_local_swap_audit_fails_with_halved_noise():
    with audit.halved_noise():
        res = audit.audit(_swap_event, D_SWAP, DP_SWAP, n_samples=4_000, seed=2)
    assert res.epsilon_lower_bound > EPS_SWAP / 2 / 2
