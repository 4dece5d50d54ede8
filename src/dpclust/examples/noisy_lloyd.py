"""Noisy Lloyd from public random centres: the worked example of docs/ADD_AN_ALGORITHM.md.

Not from a paper. Start from k centres drawn uniformly in the public box [lo, hi]^d (data
independent: they cost no budget), then run `iterations` Lloyd steps; each step releases, per
cluster, the count and the coordinate sums with Laplace noise and moves the centre to
noisy sum / noisy count (Blum et al. 2005's SuLQ step; Su et al. 2016 §4.1.1).

Privacy (add/remove one record, ε-DP): a record lies in one cluster and in [lo, hi]^d, so one step's
(counts, sums) vector changes by at most 1 + d·max(|lo|, |hi|) in L1 norm; each step gets ε / t, so
the t steps spend ε by sequential composition. Centres whose noisy count is below 1 stay put;
clipping to the box is post-processing. All noise comes from `dpclust.mechanisms` (so the privacy
audit can reach it) and is charged to an `Accountant` that refuses to overspend.
"""
from __future__ import annotations

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.mechanisms import laplace_mechanism
from dpclust.metrics import assign
from dpclust.settings import PURE, Interval, Setting, Settings, declared

SETTINGS = Settings(
    iterations=Setting(3, "REC Lloyd steps; each spends ε / iterations", Interval(int, 1, 50)),
)


@declared(SETTINGS, guarantee=PURE, objective="kmeans")
def noisy_lloyd(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Noisy Lloyd from public random centres (module docstring); ε-DP, spends exactly ε."""
    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    n, d = X.shape
    steps = int(settings["iterations"])
    accountant = Accountant(float(epsilon))
    centres = np.random.default_rng(settings.get("init_seed", 0)).uniform(lo, hi, size=(k, d))
    sensitivity = 1.0 + d * max(abs(lo), abs(hi))
    for step in range(steps):
        labels, _ = assign(X, centres)
        counts = np.bincount(labels, minlength=k).astype(float)
        sums = np.zeros((k, d))
        np.add.at(sums, labels, X)
        noisy = laplace_mechanism(np.concatenate([counts, sums.ravel()]), sensitivity, epsilon / steps, rng,
                                  accountant=accountant, label=f"step {step + 1}")
        noisy_counts, noisy_sums = noisy[:k], noisy[k:].reshape(k, d)
        moved = noisy_counts >= 1.0
        centres[moved] = np.clip(noisy_sums[moved] / noisy_counts[moved, None], lo, hi)
    return ClusteringResult.from_accountant(centres, accountant, iterations=steps)
