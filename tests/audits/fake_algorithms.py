"""Toy algorithms for the audit tests: one noisy centre (k = 1), the clipped noisy sum of the records,
honest (Laplace noise calibrated to the sum's L1 sensitivity 2 in [0, 1]^2) or with a planted bug (half
the noise for the same charge). Registered as the module `dpclust_audit_fakes` so that specs can name
them ("dpclust_audit_fakes:honest_sum")."""
from __future__ import annotations

import sys
import types

import numpy as np

from dpclust import mechanisms
from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult
from dpclust.settings import APPROXIMATE, PURE, Interval, Setting, Settings, declared, not_dp

MODULE = "dpclust_audit_fakes"


def _noisy_sum(X, k, epsilon, rng, factor):
    acc = Accountant(epsilon)
    acc.spend(epsilon, label="noisy sum")
    scale = factor * mechanisms.laplace_scale(2.0, epsilon)   # L1 sensitivity of the sum: d·1 = 2
    centre = np.clip(X.sum(axis=0) + rng.laplace(0.0, scale, size=X.shape[1]), 0.0, 1.0)
    return ClusteringResult.from_accountant(np.repeat(centre[None], k, 0), acc)


@declared(Settings(), guarantee=PURE)
def honest_sum(X, k, epsilon, delta, rng, settings):
    return _noisy_sum(X, k, epsilon, rng, 1.0)


@declared(Settings(), guarantee=APPROXIMATE)
def approx_sum(X, k, epsilon, delta, rng, settings):
    """Declared (ε, δ)-DP (it spends no δ: the audit then uses δ = 0)."""
    return _noisy_sum(X, k, epsilon, rng, 1.0)


@declared(Settings(), guarantee=PURE)
def buggy_sum(X, k, epsilon, delta, rng, settings):
    """Planted bug: half the noise the charge pays for."""
    return _noisy_sum(X, k, epsilon, rng, 0.5)


@declared(Settings(), guarantee=PURE)
def blurred_sum(X, k, epsilon, delta, rng, settings):
    """Honest but with 50 times the noise: no attack on a few hundred samples can see it (no power)."""
    return _noisy_sum(X, k, epsilon, rng, 50.0)


@declared(Settings(blur=Setting(50.0, "REC test: noise multiplier (≥ 1: more noise is still DP)", Interval(float, 1))),
          guarantee=PURE)
def tunable_sum(X, k, epsilon, delta, rng, settings):
    """Honest at every setting; no power at its default blur = 50, power at blur = 1 (the audit's
    `power` variant)."""
    return _noisy_sum(X, k, epsilon, rng, float(settings["blur"]))


@declared(Settings(), guarantee=not_dp("releases the exact sum", "replace one record (n public)"))
def exact_sum(X, k, epsilon, delta, rng, settings):
    acc = Accountant(epsilon)
    acc.spend(epsilon, label="nothing (the sum is exact)")
    centre = np.clip(X.sum(axis=0) / X.shape[0], 0.0, 1.0)
    return ClusteringResult.from_accountant(np.repeat(centre[None], k, 0), acc)


@declared(Settings())
def undeclared_sum(X, k, epsilon, delta, rng, settings):
    """Honest noise, but no guarantee declared: audited as "unknown (undeclared)", never as DP."""
    return honest_sum(X, k, epsilon, delta, rng, settings)


def register() -> str:
    module = types.ModuleType(MODULE)
    for fn in (honest_sum, approx_sum, buggy_sum, blurred_sum, tunable_sum, exact_sum, undeclared_sum):
        setattr(module, fn.__name__, fn)
    sys.modules[MODULE] = module
    return MODULE
