"""diffprivlib's `KMeans` (IBM diffprivlib 0.6.6; Holohan, Braghin, Mac Aonghusa, Levacher 2019),
run exactly as a practitioner runs it: `diffprivlib.models.KMeans(n_clusters, epsilon, bounds,
random_state).fit(X)`.

What the library implements (read from diffprivlib/models/k_means.py, 0.6.6): DPLloyd of Su et al.
with the TOPS 2017 rule. T = int(max(min(ε/ε_m, 7), 2)) iterations with
ε_m = sqrt(500·k³/N²·(d + c)³), c = ∛(4dρ²), ρ = 0.225 (N is treated as public); initial centres
drawn uniformly in the public box with a separation rule; per iteration a folded geometric noise on
each cluster's count and bounded-domain Laplace noise on each coordinate sum, clusters in parallel.

Why it is "not DP as published" (declared guarantee below):

* **Swapped split.** `_split_epsilon` returns (ε_s, ε_0) with the intended count budget
  ε_0 = c·ε_s and per-coordinate sum budget ε_s, d·ε_s + ε_0 = ε/T; the caller unpacks them as
  ``epsilon_0, epsilon_i = ...``, so the count gets ε_s and every one of the d coordinate sums gets
  c·ε_s. One iteration's noise then corresponds to ε_s + d·c·ε_s, and the whole run to

      ε_noise = ε · (1 + d·c) / (d + c),

  which exceeds ε exactly when c > 1, i.e. 4dρ² > 1, d ≥ 5: 1.003ε at d = 5, 1.05ε at d = 6,
  1.21ε at d = 10, 5.38ε at d = 784 (MNIST); below it for d ≤ 4 (0.905ε at d = 2, 0.959ε at
  d = 4). `noise_epsilon` computes it; every run records it as `info.epsilon_noise`, and
  tests/leaderboard/test_diffprivlib_peer.py measures it from the mechanisms the library builds.
* **Unaccounted branch.** A cluster with no nearest point is skipped (`if cluster not in labels:
  continue`), so whether a centre moves depends on an exact, un-noised emptiness test.

The run spends (in its record) the ε diffprivlib accounts, as a user of the library would report
it; the ε its noise corresponds to is `info.epsilon_noise`. All randomness comes from the run's
generator: one 32-bit integer drawn from `rng` seeds diffprivlib's `random_state` (a
`numpy.random.RandomState`), which every mechanism it builds draws from. The public box
`settings["bounds"] = [lo, hi]` is passed as per-feature bounds, so diffprivlib never reads the
data's range. diffprivlib (and with it scikit-learn) is imported only when a run starts.
"""

from __future__ import annotations

import warnings

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, data_bounds
from dpclust.settings import Settings, declared, not_dp

#: diffprivlib's coordinate normalisation factor ρ (`_split_epsilon` and `_calc_iters` default).
RHO = 0.225

#: diffprivlib's KMeans takes n_clusters, epsilon, bounds and random_state, all set by the run
#: (k, ε, the public box, a seed from the run's generator): nothing else is tunable.
SETTINGS = Settings()

GUARANTEE = not_dp(
    "diffprivlib 0.6.6 KMeans swaps Su et al.'s count/sum budget split: its noise corresponds to "
    "ε·(1 + d·c)/(d + c), c = (4dρ²)^(1/3), ρ = 0.225, more than ε for d ≥ 5 (1.21ε at d = 10, 5.38ε at "
    "d = 784); empty clusters are skipped by an un-noised test")


def noise_epsilon(epsilon: float, d: int, rho: float = RHO) -> float:
    """The ε that diffprivlib's KMeans noise corresponds to for a nominal `epsilon` at dimension `d`
    (sequential composition over its T iterations; T cancels): ε·(1 + d·c)/(d + c), c = ∛(4dρ²)."""
    c = (4.0 * d * rho ** 2) ** (1.0 / 3.0)
    return float(epsilon) * (1.0 + d * c) / (d + c)


@declared(SETTINGS, guarantee=GUARANTEE)
def diffprivlib_kmeans(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Fit `diffprivlib.models.KMeans(n_clusters=k, epsilon=epsilon, bounds=public box,
    random_state=<seed from rng>)` and return its centres (see module docstring)."""
    import diffprivlib
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import KMeans

    lo, hi = data_bounds(settings, X)
    d = X.shape[1]
    seed = int(rng.integers(0, 2 ** 32 - 1))
    model = KMeans(n_clusters=int(k), epsilon=float(epsilon), bounds=(np.full(d, lo), np.full(d, hi)),
                   random_state=seed, accountant=BudgetAccountant())
    with warnings.catch_warnings():
        warnings.simplefilter("error", diffprivlib.utils.PrivacyLeakWarning)  # never let it read the data's range
        model.fit(X)
    acc = Accountant(epsilon, delta)
    acc.spend(float(epsilon), 0.0, label="diffprivlib KMeans (the ε diffprivlib accounts)")
    eps_noise = noise_epsilon(epsilon, d)
    return ClusteringResult.from_accountant(
        model.cluster_centers_, acc, iterations=int(model.n_iter_), epsilon_noise=eps_noise,
        epsilon_noise_ratio=eps_noise / float(epsilon), random_state=seed, diffprivlib=diffprivlib.__version__)
