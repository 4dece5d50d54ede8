"""NoisyAVG: Algorithm 3 of Nguyen, Chaturvedi & Xu (AAAI 2021) = Algorithm 5 of Nissim, Stemmer &
Vadhan (PODS 2016), applied to every cluster of a partition (Algorithm 1, Step 4).

For one cluster V_j = {x : label(x) = j} (Alg. 3)::

    m̂_j = |V_j| + Lap(5/ε) − (5/ε)·ln(2/δ)
    if m̂_j < 0: output a uniformly random point of the domain
    σ_j = 5Δ / (4ε·m̂_j) · sqrt(2 ln(3.5/δ))
    output mean(V_j) + N(0, σ_j² I_d)

which is (ε, δ)-DP (Nissim et al. 2016, Lemma/Thm of Alg. 5). The clusters are disjoint, so the k
applications cost (ε, δ) in total by parallel composition (McSherry 2010; Nguyen et al., proof of
Thm 16): each cluster is one branch of `accountant.parallel`, charged (ε, δ) before its draws.

The noise scales are computed only by `dpclust.mechanisms` (so the privacy audit can perturb them):
* Lap(5/ε) = `laplace_scale(1, ε/5)` (count sensitivity 1, ε/5 of the cluster's budget);
* σ_j = `gaussian_sigma(Δ/m̂_j, 4ε/5, 1.25·δ/3.5, "classic")`, which is algebraically the formula
  above: (Δ/m̂)·sqrt(2 ln(1.25/(1.25δ/3.5)))/(4ε/5) = 5Δ/(4εm̂)·sqrt(2 ln(3.5/δ)).

Interpretations (each a documented choice):
1. The domain is the public box ``bounds = [lo, hi]^d`` (the paper's ball B_{Δ/2}(0) contains it
   when Δ ≥ (hi − lo)·√d); the fallback for m̂ < 0 is a uniform point of that box (the authors'
   code also draws a uniform point of its domain; it uses m̂ ≤ 0, we follow the paper's m̂ < 0).
2. ``diameter`` is the public diameter bound Δ of the domain (e.g. (hi − lo)·√d for the box); it is
   the L2 sensitivity of a cluster's sum, never estimated from the data.
3. The "classic" Gaussian calibration is proved for its ε' = 4ε/5 < 1, i.e. ε < 1.25. For a larger
   per-cluster ε the noise is calibrated to ``ε_cal = min(ε, MAX_CALIBRATION_EPSILON)`` and the full
   ε is still charged: noise valid for ε_cal ≤ ε is (ε, δ)-DP a fortiori (conservative, recorded in
   the ledger label).
4. An empty cluster whose noisy size m̂ ≥ 0 (probability ≤ δ/2) has no average: the box centre is
   used as its mean (any fixed public point keeps the guarantee; this event is inside δ).
5. ``labels`` must be a per-point function of public or already-privatised quantities (e.g. the
   Voronoi cells of private or post-processed centres); that is what makes the clusters a
   data-independent partition and parallel composition valid. This is the caller's responsibility.
"""

from __future__ import annotations

import math

import numpy as np

from dpclust import mechanisms
from dpclust.accountant import Accountant
from dpclust.api import DPClustError
from dpclust.baselines import cluster_sums

#: Largest ε for which the classic Gaussian calibration behind Alg. 3's σ holds (4ε/5 < 1).
MAX_CALIBRATION_EPSILON = 1.25 * (1.0 - 1e-9)


def _check(X, labels, k, epsilon, delta, diameter, bounds):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise DPClustError(f"NoisyAVG: X must be a non-empty (n, d) array, got shape {X.shape}")
    labels = np.asarray(labels)
    if labels.shape != (X.shape[0],) or not np.issubdtype(labels.dtype, np.integer):
        raise DPClustError("NoisyAVG: labels must be an integer array with one entry per row of X")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise DPClustError(f"NoisyAVG: k must be a positive integer, got {k!r}")
    if labels.size and (labels.min() < 0 or labels.max() >= k):
        raise DPClustError(f"NoisyAVG: labels must lie in 0..{k - 1}")
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise DPClustError(f"NoisyAVG: epsilon must be a finite number > 0, got {epsilon!r}")
    if not (isinstance(delta, (int, float)) and math.isfinite(delta) and 0 < delta < 1):
        raise DPClustError(f"NoisyAVG is (ε, δ)-DP and needs 0 < delta < 1, got {delta!r}")
    if not (isinstance(diameter, (int, float)) and math.isfinite(diameter) and diameter > 0):
        raise DPClustError(f"NoisyAVG: diameter must be a finite number > 0, got {diameter!r}")
    if bounds is None or len(bounds) != 2 or not float(bounds[1]) > float(bounds[0]):
        raise DPClustError(f"NoisyAVG: bounds must be [lo, hi] with lo < hi, got {bounds!r}")
    return X, labels.astype(np.int64, copy=False)


def noisy_avg_centers(X, labels, k, epsilon, delta, diameter, bounds, rng: np.random.Generator,
                      accountant: Accountant, label: str = "noisyavg") -> np.ndarray:
    """Private centres (k, d): Algorithm 3 (NoisyAVG) on each cluster ``{x_i : labels[i] = j}``.

    Costs (epsilon, delta) in total by parallel composition over the k disjoint clusters; every
    cluster's branch is charged (epsilon, delta) before any noise is drawn, so an accountant that
    cannot afford it raises `BudgetExceeded` and nothing is released.
    """
    X, labels = _check(X, labels, k, epsilon, delta, diameter, bounds)
    if accountant is None:
        raise DPClustError("NoisyAVG needs an Accountant to charge (use dpclust.accountant.Accountant)")
    eps, delta, diameter = float(epsilon), float(delta), float(diameter)
    lo, hi = float(bounds[0]), float(bounds[1])
    n, d = X.shape
    eps_cal = min(eps, MAX_CALIBRATION_EPSILON)
    sums, counts = cluster_sums(X, labels, k)
    counts = np.rint(counts)
    means = np.empty_like(sums)
    nonempty = counts > 0
    means[nonempty] = sums[nonempty] / counts[nonempty, None]
    means[~nonempty] = 0.5 * (lo + hi)  # interpretation 4

    lap_b = mechanisms.laplace_scale(1.0, eps_cal / 5.0)  # Lap(5/ε)
    centers = np.empty((k, d))
    with accountant.parallel(label) as par:
        for j in range(k):  # charge every branch first: a refused charge releases nothing
            par.branch().spend(eps, delta, label=f"{label}[{j}]" + (
                f" (noise calibrated to eps={eps_cal:.6g})" if eps_cal < eps else ""))
        # released on the grid of each scale (mechanisms.FLOATING_POINT_GUARANTEE); the draws (Laplace k,
        # normal (k, d), uniform (k, d)) are the old ones, in the old order; one record changes one cluster
        m_hat = mechanisms.laplace_on_grid(counts, lap_b, rng, accountant=accountant, epsilon=eps_cal / 5.0,
                                           changed=1, who=f"{label} counts") - lap_b * math.log(2.0 / delta)
        sigma = np.ones((k, 1))  # rows with m̂ ≤ 0 release u instead (their σ is unused)
        for i in np.flatnonzero(m_hat > 0):  # paper: m̂ < 0; m̂ = 0 (probability 0) would divide by zero
            sigma[i] = mechanisms.gaussian_sigma(diameter / m_hat[i], 4.0 * eps_cal / 5.0,
                                                 1.25 * delta / 3.5, calibration="classic")
        noisy = mechanisms.gaussian_on_grid(means, sigma, rng, accountant=accountant, epsilon=4.0 * eps_cal / 5.0,
                                            changed=d, who=f"{label} means")
        u = rng.uniform(lo, hi, size=(k, d))
        centers[:] = np.where(m_hat[:, None] > 0, noisy, u)
    return centers


def noisy_avg_sigma(m_hat: float, epsilon: float, delta: float, diameter: float) -> float:
    """σ of Alg. 3 for a noisy size m̂ > 0 (through `mechanisms.gaussian_sigma`; for tests/docs)."""
    eps_cal = min(float(epsilon), MAX_CALIBRATION_EPSILON)
    return mechanisms.gaussian_sigma(diameter / m_hat, 4.0 * eps_cal / 5.0, 1.25 * delta / 3.5,
                                     calibration="classic")
