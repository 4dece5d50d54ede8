"""k-variates++ (centralised and SimHash-distributed): privacy audits and released info.

Each probe is a Laplace release calibrated to the L1 diameter of the public box, so for ANY
selection weights the probe's output law is a mixture of box-centred Laplace densities, and any two
such mixtures are within a factor e^{ε_probe} of each other: every round is ε_round-DP whatever the
(un-noised) D² sampling does. These audits check that on neighbouring datasets (add one point).

SimHash version: with nodes = 2 and one bit, x0 and −x0 always fall into different nodes, so in D
the node of z = −x0 is empty. An empty node used to propose a *uniform* point of the box, whose law
is not within e^{ε} of a (clipped) Laplace probe: the event "every coordinate strictly inside the
box" has probability 1 under the uniform proposal and ≈ (ε'/(2d))^d under a clipped probe.
"""
import numpy as np
import pytest

from dpclust.audit import statistics as audit
from dpclust.balcan2017.kvariates import kvariates, kvariates_simhash

pytestmark = pytest.mark.slow

BOX = {"bounds": [-1.0, 1.0], "init_seed": 0}


def _strictly_inside(c):
    return float(np.all(np.abs(np.asarray(c)) < 1.0 - 1e-12))


EPS_SH, D_SH = 2.0, 4
X0 = np.full((1, D_SH), -1.0)
D_SIMHASH, DP_SIMHASH = X0, np.vstack([X0, -X0])


def _simhash_event(data, rng):
    res = kvariates_simhash(data, 1, EPS_SH, 0.0, rng, {**BOX, "nodes": 2, "potential_fraction": 0.5})
    assert res.epsilon_spent == pytest.approx(EPS_SH)
    return _strictly_inside(res.centers[0])


def test_kvariates_simhash_empty_node_audit_passes():
    res = audit.audit(_simhash_event, D_SIMHASH, DP_SIMHASH, n_samples=3_000, seed=3)
    assert res.epsilon_lower_bound <= EPS_SH


def test_kvariates_simhash_releases_no_exact_node_count(rng):
    X = rng.uniform(-1, 1, size=(200, 3))
    res = kvariates_simhash(X, 3, 1.0, 0.0, rng, {**BOX, "nodes": 50, "potential_fraction": 0.5})
    assert "nonempty_nodes" not in res.info        # an exact, un-noised count of the data


# Centralised k-variates++, k = 1, d = 1: D = {−1}, D' = {−1, +1}. The event {c = +1} (the probe
# clipped at the upper face) has probability ½e^{−ε} under D and ½(½e^{−ε} + ½) under D': ratio
# (1 + e^{ε})/2 < e^{ε}. With every noise scale halved the ratio is (1 + e^{2ε})/2 > e^{ε}.
EPS_KV = 2.0
D_KV, DP_KV = np.array([[-1.0]]), np.array([[-1.0], [1.0]])


def _kv_event(data, rng):
    res = kvariates(data, 1, EPS_KV, 0.0, rng, BOX)
    return float(res.centers[0, 0] >= 1.0)


def test_kvariates_audit_passes_without_data_assumption():
    res = audit.audit(_kv_event, D_KV, DP_KV, n_samples=8_000, seed=4)
    assert res.epsilon_lower_bound <= EPS_KV
    assert res.epsilon_lower_bound > 0.8            # power: the true log-ratio is ln((1 + e²)/2) ≈ 1.43


def test_kvariates_audit_fails_with_halved_noise():
    with audit.halved_noise() as calls:
        res = audit.audit(_kv_event, D_KV, DP_KV, n_samples=8_000, seed=4)
    assert calls["laplace_scale"] > 0
    assert res.epsilon_lower_bound > EPS_KV
