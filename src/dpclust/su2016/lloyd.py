"""Non-private Lloyd on the §5.1 initial centroid sets (the baseline of Su et al. 2016).

§5.1: "As the baseline, we run standard k-means algorithm over the same 30 sets of initial
centroids and take the minimum NICV among all the 30 runs." Each run starts from the
sphere-packing set of its `init_seed` — the same function and seed DPLloyd uses, so with the
runner's `init_sets: 30` the baseline and DPLloyd share their 30 sets exactly. Lloyd iterates until
no centre moves (`tol` 0) or `max_iter` (REC 300). `record_trace` stores the NICV after every
iteration (Figure 4's Lloyd curve, averaged over the 30 sets).
"""

from __future__ import annotations

from ..api import ClusteringResult, estimator_for, validate_inputs
from ..baselines import lloyd as _lloyd
from .common import initial_centers

DEFAULTS = {"init": "sphere_packing", "init_max_tries": 100, "init_search_steps": 20,
            "max_iter": 300, "tol": 0.0, "record_trace": False}


def lloyd(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    X = validate_inputs(X, k)
    C0 = initial_centers(X, k, settings)
    res = _lloyd(X, C0, max_iter=int(settings["max_iter"]), tol=float(settings["tol"]),
                 record_trace=bool(settings.get("record_trace", False)))
    info = {"converged": res.converged}
    if res.trace:
        info["trace_nicv"] = [c / X.shape[0] for c in res.trace]
    return ClusteringResult(res.centers, 0.0, 0.0, res.iterations, info)


Lloyd = estimator_for(lloyd, DEFAULTS, "Lloyd")
