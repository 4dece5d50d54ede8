"""The hybrid approach (Su et al. 2016 §6.3, Inequalities 14-15).

If Inequality (15) holds, ε ≥ (X/Y)^{(2+d)/(2d)} with
  X = 8d(1 + (2ρr)²)·(k(dr + 1)/N)²                            (Formula 13 without ε),
  Y = 2dr²·k^{(d−2)/d} / (3·θ^{2d/(2+d)}·N^{4/(2+d)})          (Formula 12 without ε; θ = 10),
run EUGkM with ε/2 (its synopsis plus Lloyd from the 30 sets, best on the synopsis) and then ONE
DPLloyd iteration (uniform allocation, t = 1: Lap((dr + 1)/(ε/2)) on counts and sums) from the
EUGkM centres with the other ε/2; otherwise fall back to EUGkM with the full ε. Inequality (14)
(t ≥ 2) holds because DPLloyd uses t = 5. Settings: `mode` ∈ {auto (the paper's rule), forced
(always EUGkM(ε/2) + one DPLloyd iteration: the "0.244 on Adult-num at ε = 0.05" variant of §6.4),
eugkm (always fall back)}; `rho` (MISSING in the CODASPY text; EXT 0.225 from diffprivlib, which
cites the journal analysis); `budget_split` (STATED 1/2). r is the half-width of [−r, r]^d for the
geometric terms (Y) and max(|lo|, |hi|) for the sensitivity term (d·r + 1); both are 1 for the
paper's [−1, 1] domain. N is public (as in the paper).

Protocol note: the paper runs EUGkM 10 times and DPLloyd 10 times on each result (100 values); we
run 100 independent (synopsis, DPLloyd) pairs, which has the same expected NICV.
"""

from __future__ import annotations



from ..accountant import Accountant
from ..blocks.domain import public_box
from ..api import ClusteringResult, DPClustError, data_bounds, estimator_for, validate_inputs
from .common import sum_sensitivity_radius
from .dplloyd import noisy_lloyd_step
from .eugkm import DEFAULTS as EUG_DEFAULTS
from .eugkm import eugkm_centers

DEFAULTS = dict(EUG_DEFAULTS, mode="auto", rho=0.225, budget_split=0.5, min_count=1.0, clip_centers=True)


def epsilon_threshold(n: int, k: int, d: int, r_geom: float, r_sens: float, rho: float, theta: float) -> float:
    """Right-hand side of Inequality (15)."""
    X = 8.0 * d * (1.0 + (2.0 * rho * r_geom) ** 2) * (k * (d * r_sens + 1.0) / n) ** 2
    Y = (2.0 * d * r_geom ** 2 * k ** ((d - 2.0) / d)
         / (3.0 * theta ** (2.0 * d / (2.0 + d)) * n ** (4.0 / (2.0 + d))))
    return (X / Y) ** ((2.0 + d) / (2.0 * d))


def hybrid(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    settings = {**DEFAULTS, **settings}   # keys a caller omits take the documented defaults
    X = validate_inputs(X, k, epsilon, delta)
    public_box(settings, X)
    n, d = X.shape
    epsilon = float(epsilon)
    lo, hi = data_bounds(settings)
    r_geom, r_sens = (hi - lo) / 2.0, sum_sensitivity_radius((lo, hi))
    mode = settings.get("mode", "auto")
    if mode not in ("auto", "forced", "eugkm"):
        raise DPClustError(f"unknown hybrid mode {mode!r}: auto, forced or eugkm")
    split = float(settings["budget_split"])
    if not 0 < split < 1:
        raise DPClustError("budget_split must be in (0, 1)")
    eps_star = epsilon_threshold(n, k, d, r_geom, r_sens, float(settings["rho"]), float(settings["theta"]))
    use_hybrid = mode == "forced" or (mode == "auto" and epsilon >= eps_star)
    acc = Accountant(epsilon)
    if not use_hybrid:
        C, info = eugkm_centers(X, k, epsilon, rng, settings, acc)
        info.update(hybrid_applied=False, epsilon_threshold=eps_star, mode=mode)
        return ClusteringResult.from_accountant(C, acc, iterations=info["lloyd_iterations"], **info)
    eps_eug = split * epsilon
    sub = acc.sub_budget(eps_eug, label="hybrid: EUGkM part")
    C, info = eugkm_centers(X, k, eps_eug, rng, settings, sub)
    eps_lloyd = acc.remaining_epsilon
    C, _, _ = noisy_lloyd_step(X, C, (eps_lloyd, None), acc, rng, r_sens, (lo, hi), settings,
                            "hybrid: one DPLloyd iteration")
    info.update(hybrid_applied=True, epsilon_threshold=eps_star, mode=mode)
    return ClusteringResult.from_accountant(C, acc, iterations=info["lloyd_iterations"] + 1, **info)


Hybrid = estimator_for(hybrid, DEFAULTS, "Hybrid")
