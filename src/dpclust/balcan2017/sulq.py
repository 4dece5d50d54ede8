"""SuLQ k-means (Blum, Dwork, McSherry & Nissim 2005) as configured in Balcan et al. (2017) §7.

"Our implementation of the SuLQ k-means algorithm runs for 20 iterations and uses the Gaussian
mechanism to approximate the sum of points in each cluster … The SuLQ algorithm initializes its
centers to be k randomly chosen points from the bounding box of the data." (STATED §7)

Each iteration: assign every point to its nearest centre; release the k cluster counts with the
Laplace mechanism (L1 sensitivity 1: a point is in one cluster) and the (k, d) cluster sums with the
Gaussian mechanism (L2 sensitivity Λ: one point of norm ≤ Λ in one cluster); the new centre is
noisy sum / max(noisy count, 1), clipped to the public box. The same routine performs the
"8 iterations of the SuLQ k-means algorithm" that Balcan et al. run after their recovery step.

Interpretations (named settings, declared in `SETTINGS` below with their provenance):
* Data are centred at the middle of the public box [lo, hi]^d before summing, so the L2
  sensitivity of a cluster sum is Λ = √d·(hi − lo)/2 (the radius of the box around its centre), or
  the public L2 radius `data_radius` when the data come with one (points are clipped to it).
* The bounding box is the PUBLIC box `settings["bounds"]` (the data's own min/max would leak).
* δ of the Gaussian mechanism and the count mechanism are MISSING in the paper → REC: δ from the
  run (config 1e-6), Laplace counts, budget split evenly over iterations and `count_fraction` = ½
  between counts and sums; δ split evenly over iterations.
* Initial centres are drawn from `default_rng(settings["init_seed"])` so runs with equal init_seed
  share them (data-independent, no privacy cost).
* `info.trace_cost` (the exact cost before each step) and `info.nonempty_clusters` (how many final
  centres are the nearest centre of some point) are non-private run-record diagnostics, like the
  runner's evaluation costs; they are never fed back into the algorithm.

Privacy guarantee (declared): per iteration, the Laplace counts (L1 sensitivity 1) and the cluster
sums (Gaussian: L2 sensitivity Λ, analytic calibration; or Laplace: L1 sensitivity min(d·h, √d·Λ))
are released for the Voronoi partition of the previous, already released centres (parallel over
clusters); sequential composition over the iterations gives (ε, δ)-DP with Gaussian sums and ε-DP
with Laplace sums, for add/remove-one neighbours (n is never used). Initial centres are
data-independent.
"""

from __future__ import annotations

import math

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.mechanisms import gaussian_mechanism, laplace_mechanism
from dpclust.metrics import assign, assign_with_sums
from dpclust.settings import APPROXIMATE, PURE, Guarantee, Interval, Options, Setting, Settings, declared, nullable

#: Λ and the Gaussian calibration are shared with Algorithm 4 (`algorithm.SETTINGS` reuses them).
DATA_RADIUS = Setting(
    None, "INFERRED Λ of Algs. 1-4 (the public L2 radius of the data around the box centre, a public input "
    "of the paper's algorithms); null → the box's radius √d·(hi − lo)/2. Set per dataset where the data "
    "carry a public L2 bound (e.g. the synthetic mixture's ‖x‖ ≤ 11)",
    nullable(Interval(float, 0.0, open_lo=True)), "public L2 radius Λ (null: the box's)")
GAUSSIAN_CALIBRATION = Setting(
    "analytic", "REC Balle & Wang 2018 analytic Gaussian mechanism (tight for every ε); 'classic' is "
    "Dwork & Roth Thm A.1 (ε < 1 only)", Options("analytic", "classic"), "σ of the Gaussian sum mechanism")

SETTINGS = Settings(
    data_radius=DATA_RADIUS,
    iterations=Setting(20, "STATED §7 'runs for 20 iterations'", Interval(int, 1), "SuLQ iterations"),
    count_fraction=Setting(
        0.5, "MISSING→REC Laplace counts get half of each iteration's ε (the sums the other half)",
        Interval(float, 0.0, 1.0, open_lo=True), "share of an iteration's ε for the counts, in (0, 1)"),
    sum_mechanism=Setting(
        "gaussian", "STATED §7 'uses the Gaussian mechanism to approximate the sum' (needs δ > 0); "
        "'laplace' (L1 sensitivity) for pure ε", Options("gaussian", "laplace"), "noise of the cluster sums"),
    gaussian_calibration=GAUSSIAN_CALIBRATION,
)


def box_geometry(d: int, bounds) -> tuple[np.ndarray, float, float]:
    """Centre of the public box, its half side h and the L2 radius Λ = √d·h around the centre."""
    lo, hi = bounds
    h = (hi - lo) / 2.0
    return np.full(d, (lo + hi) / 2.0), h, math.sqrt(d) * h


def data_geometry(d: int, bounds, data_radius=None) -> dict:
    """The public geometry every mechanism is calibrated to.

    `centre`, half side `h` of the box, L2 radius Λ of the data around the centre (`data_radius`
    when the data come with a public L2 bound — e.g. the synthetic mixture's ‖x‖ ≤ 11 — else the
    box radius √d·h), and the L1 radius min(d·h, √d·Λ) (a point's L1 norm around the centre).
    """
    centre, h, box_r = box_geometry(d, bounds)
    if data_radius is None:
        r = box_r
    else:
        r = float(data_radius)
        if not (math.isfinite(r) and r > 0):
            raise DPClustError(f"data_radius must be a finite number > 0 or null, got {data_radius!r}")
        r = min(r, box_r)
    return {"centre": centre, "h": h, "radius": r, "l1": min(d * h, math.sqrt(d) * r)}


def clip_to(C: np.ndarray, h: float, radius: float) -> np.ndarray:
    """Post-processing: clip points into the box [−h, h]^d and the ball B(0, radius) (in place)."""
    from dpclust.balcan2017.candidates import clip_rows

    np.clip(C, -h, h, out=C)
    return clip_rows(C, radius)


def private_lloyd_steps(Xc: np.ndarray, C0c: np.ndarray, iterations: int, epsilon: float, delta: float,
                        half_side: float, rng: np.random.Generator, accountant, *,
                        count_fraction: float, sum_mechanism: str, calibration: str = "analytic",
                        label: str = "SuLQ", radius_l2: float | None = None,
                        radius_l1: float | None = None) -> tuple[np.ndarray, list[float]]:
    """`iterations` SuLQ steps on centred data (every |coordinate| ≤ half_side, every row of L2 norm
    ≤ radius_l2 and L1 norm ≤ radius_l1; defaults: the box's √d·h and d·h). Spends (ε, δ).

    Returns the final centred centres and the non-private cost trace (for diagnostics only: it is
    computed from the released centres, never fed back into the algorithm).
    """
    n, d = Xc.shape
    k = C0c.shape[0]
    radius_l2 = math.sqrt(d) * half_side if radius_l2 is None else float(radius_l2)
    radius_l1 = d * half_side if radius_l1 is None else float(radius_l1)
    if not 0 < count_fraction < 1:
        raise DPClustError(f"count_fraction must lie in (0, 1), got {count_fraction!r}")
    if iterations < 1:
        raise DPClustError(f"SuLQ needs iterations >= 1, got {iterations!r}")
    eps_it = epsilon / iterations
    eps_c, eps_s = count_fraction * eps_it, (1 - count_fraction) * eps_it
    delta_it = delta / iterations
    if sum_mechanism == "gaussian" and not delta_it > 0:
        raise DPClustError("the Gaussian mechanism on cluster sums needs delta > 0 (set the run's delta, "
                           "e.g. 1e-6, or use sum_mechanism: laplace)")
    C = np.array(C0c, dtype=float, copy=True)
    trace = []
    for it in range(iterations):
        labels, d2, sums = assign_with_sums(Xc, C)   # the ordered cluster sums, in one pass over Xc at large d
        trace.append(float(d2.sum()))
        counts = np.bincount(labels, minlength=k).astype(float)
        noisy_counts = laplace_mechanism(counts, 1.0, eps_c, rng, accountant, label=f"{label} it {it + 1} counts")
        if sum_mechanism == "gaussian":
            noisy_sums = gaussian_mechanism(sums, radius_l2, eps_s, delta_it, rng, accountant,
                                            label=f"{label} it {it + 1} sums", calibration=calibration)
        elif sum_mechanism == "laplace":
            noisy_sums = laplace_mechanism(sums, radius_l1, eps_s, rng, accountant, label=f"{label} it {it + 1} sums")
        else:
            raise DPClustError(f"unknown sum_mechanism {sum_mechanism!r} (use 'gaussian' or 'laplace')")
        C = noisy_sums / np.maximum(noisy_counts, 1.0)[:, None]
        clip_to(C, half_side, radius_l2)
    return C, trace


def sulq_guarantee(settings) -> Guarantee:
    """(ε, δ)-DP with Gaussian sums, ε-DP with Laplace sums; add/remove one record."""
    if settings["sum_mechanism"] == "gaussian":
        return Guarantee(APPROXIMATE.kind, "Laplace counts, Gaussian sums (analytic calibration)")
    return Guarantee(PURE.kind, "Laplace counts and sums")


@declared(SETTINGS, guarantee=sulq_guarantee)
def sulq(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """SuLQ k-means (Balcan et al. §7 configuration); (ε, δ)-DP with the Gaussian sum mechanism."""
    X = validate_inputs(X, k, epsilon, delta)
    bounds = public_box(settings, X)
    geo = data_geometry(X.shape[1], bounds, settings["data_radius"])
    centre, h = geo["centre"], geo["h"]
    acc = Accountant(epsilon, delta)
    init_rng = np.random.default_rng(settings["init_seed"])
    C0 = init_rng.uniform(bounds[0], bounds[1], size=(k, X.shape[1]))
    from dpclust.balcan2017.candidates import clip_rows

    Xc = clip_rows(X - centre, geo["radius"])  # per-point map: enforces the public radius
    C, trace = private_lloyd_steps(
        Xc, C0 - centre, int(settings["iterations"]), epsilon, delta, h, rng, acc,
        count_fraction=float(settings["count_fraction"]), sum_mechanism=settings["sum_mechanism"],
        calibration=settings["gaussian_calibration"],
        radius_l2=geo["radius"], radius_l1=geo["l1"])
    labels, _ = assign(Xc, C)  # non-private diagnostic: clusters that are not empty at the end
    return ClusteringResult.from_accountant(C + centre, acc, iterations=int(settings["iterations"]),
                                            trace_cost=trace, nonempty_clusters=int(np.unique(labels).size))
