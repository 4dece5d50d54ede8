"""DPLloyd (Su et al. 2016 §4.1.1; Blum et al. 2005 SuLQ k-means; McSherry 2009 PINQ).

Each of t iterations assigns every point to its nearest centre, then releases, per cluster, the
count and the d coordinate sums with Laplace noise and moves each centre to noisy-sum / noisy-count.
With data in [−r, r]^d one tuple changes one cluster's count by 1 and its sums by at most r per
coordinate, so the per-iteration (counts, sums) vector has L1 sensitivity d·r + 1 (§4.1.1: "the
global sensitivity of DPLloyd is (dr+1)t"). Budget allocation strategies (setting `allocation`):

* ``uniform`` (this paper; Lu & Shen's BLUM): ε/t per iteration, i.e. Lap((d·r+1)·t/ε) on every
  count and sum (§4.1.1, also Eq. 7's analysis).
* ``geometric`` (Dwork 2011; Lu & Shen's DWORK "1/2^i of the overall budget at iteration i"):
  ε_i ∝ 2^{−i}, normalised so that Σ_i ε_i = ε exactly (interpretation: the raw 1/2^i series spends
  only ε(1 − 2^{−t}) after t iterations; we hand the remainder out proportionally so the run spends
  its whole ε, which the run record checks).
* ``su_tops`` (TOPS 2017 journal version, "SU" in Lu & Shen; EXT diffprivlib's formulas, see
  INVENTORY): T = int(max(min(ε/ε_m, 7), 2)) iterations with
  ε_m = sqrt(500·k³/N²·(d + ∛(4dρ²))³), ρ = `rho` (EXT 0.225); per iteration ε/T split so that the
  count query gets ε_0 = ∛(4dρ²)·ε_s and each of the d coordinate-sum queries gets ε_s, with
  d·ε_s + ε_0 = ε/T. This is the INTENDED split (count : per-coordinate sum = ∛(4dρ²) : 1);
  diffprivlib returns the two values swapped and overspends for d ≥ 5 (ρ = 0.225). Counts get
  Lap(1/ε_0); each coordinate-sum vector (over clusters) has L1 sensitivity r and gets Lap(r/ε_s).
  N is treated as public (as everywhere in the paper: ℓ = N^0.4, M of Eq. 4, Ineq. 15).

Interpretations (declared settings, `SETTINGS` below):
* `min_count` (MISSING→REC 1): a noisy count below it (e.g. ≤ 0 for an empty cluster) makes the
  centre keep its previous position; PINQ's noisy average is undefined there.
* `clip_centers` (REC true): new centres are clipped to the public box (post-processing).
* `init`: ``sphere_packing`` (§4.1.1, data independent) or ``random_points`` (Lu & Shen); drawn
  from `default_rng(settings["init_seed"])`, so the 30 sets of §5.1 are shared via the runner.
  ``random_points`` picks k actual data points and is NOT differentially private (nothing is
  charged for it): it is Lu & Shen's protocol, used only where their config asks for it.
* Neighbouring datasets: add/remove one tuple (§3.1, Def. 1). ``uniform`` and ``geometric`` do not
  use N; ``su_tops`` sets T from N, treated as public.
"""

from __future__ import annotations

import math

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, data_bounds, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.blocks.public_size import PUBLIC_N, public_size
from dpclust.mechanisms import laplace_mechanism
from dpclust.metrics import assign_with_sums, row_norms
from dpclust.settings import Boolean, Interval, Options, Setting, Settings, declared
from dpclust.su2016.common import INIT_SETTINGS, initial_centers, sum_sensitivity_radius

#: DPLloyd's noisy-update settings, shared with the one DPLloyd iteration of the hybrid (hybrid.py).
MIN_COUNT = Setting(1.0, "MISSING→REC a noisy count below this keeps the previous centre (PINQ's noisy "
                    "average is undefined for an empty cluster)", Interval(float))
CLIP_CENTERS = Setting(True, "REC clip new centres to the public box (post-processing)", Boolean())

SETTINGS = Settings(
    iterations=Setting(5, "STATED §4.1.1 'DPLloyd runs for t = 5 iterations' (uniform, geometric; su_tops "
                       "sets its own T)", Interval(int, 1)),
    allocation=Setting("uniform", "STATED §4.1.1 uniform: Lap((dr+1)t/ε) on every count and sum; geometric = "
                       "Lu & Shen's DWORK (Dwork 2011, renormalised to spend ε); su_tops = TOPS 2017, EXT "
                       "diffprivlib's formulas with the intended split", Options("uniform", "geometric", "su_tops"),
                       "budget allocation over the iterations (module docstring)"),
    **INIT_SETTINGS,
    public_n=PUBLIC_N,
    rho=Setting(0.225, "EXT diffprivlib (su_tops only): the normalised centroid coordinate ρ of TOPS 2017",
                Interval(float, 0)),
    min_count=MIN_COUNT,
    clip_centers=CLIP_CENTERS,
    record_trace=Setting(False, "REC analysis only: store the centres after every iteration in "
                         "info.trace_centers", Boolean()),
)


def su_tops_schedule(epsilon: float, n: int, k: int, d: int, rho: float) -> tuple[int, float, float]:
    """(T, ε_count, ε_sum_per_coordinate) of the TOPS 2017 allocation (intended split)."""
    c = (4.0 * d * rho ** 2) ** (1.0 / 3.0)
    eps_m = math.sqrt(500.0 * k ** 3 / n ** 2 * (d + c) ** 3)
    T = int(max(min(epsilon / eps_m, 7), 2))
    per_iter = epsilon / T
    eps_sum = per_iter / (d + c)
    return T, c * eps_sum, eps_sum


def iteration_budgets(epsilon: float, settings, n: int, k: int, d: int) -> list[tuple[float, float | None]]:
    """Per-iteration budgets: list of (ε_iteration, None) for joint (count+sums) releases, or
    (ε_count, ε_sum_coordinate) pairs for the su_tops split."""
    how = settings["allocation"]
    if how == "uniform":
        t = int(settings["iterations"])
        return [(epsilon / t, None)] * t
    if how == "geometric":
        t = int(settings["iterations"])
        raw = np.array([2.0 ** -(i + 1) for i in range(t)])
        shares = raw / raw.sum()
        return [(float(epsilon * s), None) for s in shares]
    if how == "su_tops":
        T, e_count, e_sum = su_tops_schedule(epsilon, n, k, d, float(settings["rho"]))
        return [(e_count, e_sum)] * T
    raise DPClustError(f"unknown allocation {how!r}: use uniform, geometric or su_tops")


def noisy_lloyd_step(X, C, budget, acc: Accountant, rng, r: float, bounds, settings, label: str,
                     X_sq=None):
    """One DPLloyd iteration from centres C with the given budget; returns the new centres, the
    noisy counts (k,) and the noisy sums (k, d). `X_sq` = `row_norms(X)`, computed once by a
    caller that runs many iterations (the same bytes either way)."""
    k, d = C.shape
    labels, _, sums = assign_with_sums(X, C, X_sq)   # the ordered cluster sums, in one pass over X at large d
    counts = np.bincount(labels, minlength=k).astype(float)
    e_joint, e_sum = budget
    if e_sum is None:
        # counts and sums released together: L1 sensitivity d·r + 1 (§4.1.1)
        packed = np.concatenate([counts, sums.ravel()])
        noisy = laplace_mechanism(packed, d * r + 1.0, e_joint, rng, accountant=acc, label=label)
        n_counts, n_sums = noisy[:k], noisy[k:].reshape(k, d)
    else:
        n_counts = laplace_mechanism(counts, 1.0, e_joint, rng, accountant=acc, label=label + " counts")
        n_sums = np.empty_like(sums)
        for i in range(d):  # d coordinate-sum queries, each L1 sensitivity r over the k clusters
            n_sums[:, i] = laplace_mechanism(sums[:, i], r, e_sum, rng, accountant=acc,
                                             label=f"{label} sums[{i}]")
    new = C.copy()
    ok = n_counts >= float(settings["min_count"])
    new[ok] = n_sums[ok] / n_counts[ok, None]
    if settings["clip_centers"]:
        np.clip(new, bounds[0], bounds[1], out=new)
    return new, n_counts, n_sums


def dplloyd_from(X, C0, epsilon, rng, settings, acc: Accountant | None = None, label_prefix: str = ""):
    """DPLloyd from given (data-independent) centres C0 with complete `settings` (SETTINGS filled);
    returns (centres, accountant, info)."""
    n, d = public_size(settings, X), X.shape[1]   # n: su_tops' T only
    k = C0.shape[0]
    bounds = data_bounds(settings)
    r = sum_sensitivity_radius(bounds)
    acc = acc if acc is not None else Accountant(epsilon)
    budgets = iteration_budgets(epsilon, settings, n, k, d)
    C = np.array(C0, dtype=float, copy=True)
    trace = []
    X_sq = row_norms(X)
    for it, budget in enumerate(budgets, start=1):
        C, _, _ = noisy_lloyd_step(X, C, budget, acc, rng, r, bounds, settings, f"{label_prefix}iteration {it}",
                                   X_sq)
        if settings["record_trace"]:
            trace.append(C.tolist())
    info = {"allocation": settings["allocation"], "iterations_run": len(budgets)}
    if trace:
        info["trace_centers"] = trace
    return C, acc, info


@declared(SETTINGS, guarantee=__import__(__package__ + ".guarantees", fromlist=["*"]).dplloyd)
def dplloyd(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """DPLloyd (§4.1.1) with the allocation named in `settings["allocation"]` (settings a caller
    omits take their declared defaults, `SETTINGS`)."""
    X = validate_inputs(X, k, epsilon, delta)
    public_box(settings, X)
    C0 = initial_centers(X, k, settings)
    C, acc, info = dplloyd_from(X, C0, float(epsilon), rng, settings)
    return ClusteringResult.from_accountant(C, acc, iterations=info["iterations_run"], **info)
