"""Non-private Lloyd on the §5.1 initial centroid sets (the baseline of Su et al. 2016).

§5.1: "As the baseline, we run standard k-means algorithm over the same 30 sets of initial
centroids and take the minimum NICV among all the 30 runs." Each run starts from the
sphere-packing set of its `init_seed` — the same function and seed DPLloyd uses, so with the
runner's `init_sets: 30` the baseline and DPLloyd share their 30 sets exactly. Lloyd iterates until
no centre moves (`tol` 0) or `max_iter` (REC 300). `record_trace` stores the NICV after every
iteration (Figure 4's Lloyd curve, averaged over the 30 sets). ``init: kmeans++`` (REC, analysis
only) seeds each run by k-means++ from `default_rng(init_seed)`: the "best optimum of many restarts"
that §6.4's Adult-num cluster sizes are compared with (items/fig5.py). Non-private (its runs report
no ε).
"""

from __future__ import annotations

from dpclust.api import ClusteringResult, validate_inputs
from dpclust.baselines import lloyd as _lloyd
from dpclust.settings import Boolean, Interval, Options, Setting, Settings, declared
from dpclust.su2016.common import INIT_SETTINGS, initial_centers
from dpclust.su2016.guarantees import NON_PRIVATE_ANALYSIS

SETTINGS = Settings(
    **INIT_SETTINGS.extend(init=Setting(
        "sphere_packing", "STATED §5.1 'the same 30 sets of initial centroids' as DPLloyd (sphere packing, "
        "§4.1.1; 'random_points': k shared data points; 'kmeans++': REC analysis only, the many-restarts "
        "optimum of §6.4's cluster sizes)", Options("sphere_packing", "random_points", "kmeans++"))),
    max_iter=Setting(300, "MISSING→REC standard k-means runs to convergence; 300 (scikit-learn's cap) bounds it",
                     Interval(int, 1)),
    tol=Setting(0.0, "REC stop when no centre moves by more than tol (0: the centres stay the same)",
                Interval(float)),
    record_trace=Setting(False, "REC analysis only: the NICV after every iteration in info.trace_nicv "
                         "(Figure 4 turns it on)", Boolean()),
)


@declared(SETTINGS, guarantee=NON_PRIVATE_ANALYSIS)
def lloyd(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """The §5.1 baseline: Lloyd from the sphere-packing set of `init_seed` (ε spent = 0)."""
    X = validate_inputs(X, k)
    C0 = initial_centers(X, k, settings)
    res = _lloyd(X, C0, max_iter=int(settings["max_iter"]), tol=float(settings["tol"]),
                 record_trace=bool(settings["record_trace"]))
    info = {"converged": res.converged}
    if res.trace:
        info["trace_nicv"] = [c / X.shape[0] for c in res.trace]
    return ClusteringResult(res.centers, 0.0, 0.0, res.iterations, info)
