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
paper's [−1, 1] domain. N is public (as in the paper): `public_n`, else the data's size.

Protocol note: the paper runs EUGkM 10 times and DPLloyd 10 times on each result (100 values); we
run 100 independent (synopsis, DPLloyd) pairs, which has the same expected NICV. The EUGkM stage
releases the noisy count of every grid cell (eugkm.py).

Guarantee (guarantees.HYBRID): ε-DP for add/remove neighbours with N public (the grid of Eq. 4 and
the switch of Inequality 15 are computed from the public N, the same for both neighbours); the
Laplace noise is calibrated to add/remove sensitivities, so under replace-one it is 2ε-DP.
"""

from __future__ import annotations

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, data_bounds, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.blocks.public_size import public_size
from dpclust.settings import Interval, Options, Setting, declared
from dpclust.su2016.common import OpenUnitInterval, sum_sensitivity_radius
from dpclust.su2016.dplloyd import CLIP_CENTERS, MIN_COUNT, noisy_lloyd_step
from dpclust.su2016.eugkm import SETTINGS as EUGKM_SETTINGS
from dpclust.su2016.eugkm import eugkm_centers
from dpclust.su2016.guarantees import HYBRID

#: EUGkM's settings (its stage runs with them) plus the rule and the one DPLloyd iteration.
SETTINGS = EUGKM_SETTINGS.extend(
    mode=Setting("auto", "STATED §6.3 rule (Inequality 15); 'forced' = §6.4 'if it applies EUGkM plus "
                 "one-iteration of DPLloyd'; 'eugkm' = always fall back", Options("auto", "forced", "eugkm")),
    rho=Setting(0.225, "EXT diffprivlib, which cites the journal analysis (ρ of Formula 13 is MISSING in the "
                "CODASPY text)", Interval(float, 0)),
    budget_split=Setting(0.5, "STATED §6.3 'half privacy budget to EUGkM'", OpenUnitInterval()),
    min_count=MIN_COUNT,
    clip_centers=CLIP_CENTERS,
)


def epsilon_threshold(n: int, k: int, d: int, r_geom: float, r_sens: float, rho: float, theta: float) -> float:
    """Right-hand side of Inequality (15)."""
    X = 8.0 * d * (1.0 + (2.0 * rho * r_geom) ** 2) * (k * (d * r_sens + 1.0) / n) ** 2
    Y = (2.0 * d * r_geom ** 2 * k ** ((d - 2.0) / d)
         / (3.0 * theta ** (2.0 * d / (2.0 + d)) * n ** (4.0 / (2.0 + d))))
    return (X / Y) ** ((2.0 + d) / (2.0 * d))


@declared(SETTINGS, guarantee=HYBRID)
def hybrid(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """The hybrid approach (§6.3): EUGkM(ε/2) + one DPLloyd iteration(ε/2) if Inequality 15 holds
    (or `mode` forces it), else EUGkM(ε)."""
    X = validate_inputs(X, k, epsilon, delta)
    public_box(settings, X)
    n, d = public_size(settings, X), X.shape[1]
    epsilon = float(epsilon)
    lo, hi = data_bounds(settings)
    r_geom, r_sens = (hi - lo) / 2.0, sum_sensitivity_radius((lo, hi))
    mode = settings["mode"]
    split = float(settings["budget_split"])
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
