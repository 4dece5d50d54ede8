"""Algorithm 4 of Balcan et al. (ICML 2017): private k-means (and the §6.2 k-median variant).

Per trial t = 1..T (Alg. 4): JL-project the data to p dimensions, build a private candidate set
(Alg. 2, `candidates.py`), run the private local swap on it (Alg. 3, `local_swap.py`), partition the
ORIGINAL points by their nearest chosen centre in the projected space, and recover each centre in
R^d by a noisy mean, s_j = max(|S_j| + Lap, 1), z_j = (Σ_{S_j} x + Lap)/s_j (parallel composition
over the disjoint clusters, Lemma 1). With T > 1 the final Z is chosen among the trials by the
exponential mechanism on −L(Z) (Alg. 4, last step). The experiments then "perform 8 iterations of
the SuLQ k-means algorithm to further improve the quality" (STATED §7; `sulq.private_lloyd_steps`).

Budget (the paper's Alg. 4 gives each stage a fixed fraction of ε; the experiments' split is
MISSING). Setting `budget_weights` = {candidate, local_swap, recovery, select, refine}: each stage
gets ε·w/Σw of the parts that are used, so the parts sum to exactly ε. Default 8 : 1 : 2 : 0 : 6,
the authors' MATLAB proportions 2/3 : 1/12 : 1/6 : 1/2 (EXT) rescaled (their code spends 17ε/12).
Within a stage the budget is reserved up front (`Accountant.sub_budget`) so the record shows ε
spent = ε even when Alg. 1 stops early; the child accountant still refuses any overspend. δ goes to
the stages that need it (Gaussian refinement sums; NoisyAVG recovery), split by `delta_weights`.

Recovery sensitivity (interpretation, a correction): the paper prints a per-coordinate
Lap(24TΛ/(ε s_j)) on the mean, i.e. calibrated to the L2 radius Λ; the Laplace mechanism needs the
L1 sensitivity of a cluster sum, which for a point of the box [lo, hi]^d centred at its middle is
min(d·(hi − lo)/2, √d·Λ) (= √d·Λ for the box radius). We use the L1 value (the authors' code also uses the L2
range, and an exact
count). The count and the sum each get half of the recovery budget (as the paper's two
Lap(24T/ε) terms). Recovered centres are clipped to the public box (post-processing).

Settings `recovery` ∈ {`noisy_mean` (Alg. 4), `noisyavg` (Nguyen et al. 2021 Alg. 3,
`dpclust.blocks.noisy_average:noisy_avg_centers`, (ε, δ))}. The k-median variant (§6.2) runs the
local swap on the k-median loss and recovers each centre by a private 1-median
(`dpclust.blocks.one_median:private_one_median`, parallel over clusters). Data are centred
at the middle of the public box; Λ = √d·(hi − lo)/2. Other interpretations: see `partition.py`,
`candidates.py`, `local_swap.py`, `sulq.py`.

Run-record diagnostics (not part of the private output): `info.trials[*].swap_loss_trace` (the
exact local-swap losses L(Z⁽ᵗ⁾) in the projected space) and `info.refine_cost_trace` (the exact
k-means cost before each SuLQ step) are computed from the private data without noise, like the
runner's evaluation costs; no released quantity of the algorithm depends on them. Everything else
in `info` is a function of released (noised) quantities and public parameters.

Run-record diagnostics added for the MNIST non-reproduction (non-private, exact functions of the
data, never fed back): `info.recovery_cost` (the exact k-means cost right after the recovery, before
any refinement), `info.recovery_nonempty_clusters` and `info.nonempty_clusters` (how many of the
recovered / final centres are the nearest centre of at least one point). With correctly calibrated
noise on MNIST (d = 784) the recovered centres are pure noise clipped to the box, all points fall
to one of them, and the 8 refinement steps cannot split that cluster again: one non-empty cluster.

The authors' calibration (`calibration: authors`, the named variant `balcan2017.balcan_authors`):
NOT DIFFERENTIALLY PRIVATE, run only to show where the published curves come from. It follows the
authors' MATLAB code (EXT, mouwenlong/dp-clustering-icml17 `clustering.m`, `recover.m`; facts, not
code) in the three places where it departs from the paper's privacy proof:
* recovery: the exact cluster mean plus per-coordinate Laplace noise of scale Λ/(ε_rec·|S_j|), i.e.
  the sum noised with Lap(Λ/ε_rec) per coordinate — the L2 radius Λ used as if it were the L1
  sensitivity of a cluster sum (which is min(d·h, √d·Λ): √d = 28 times larger on MNIST) — divided
  by the EXACT count |S_j| (an empty cluster gets a uniform point of the public box, as the code);
  Λ is our (centred) public radius: the authors' rule (noise scale = the data radius) applied to our
  centred data. Their code's `range` = 255·√784 is that radius for un-centred pixels, 2Λ in our
  coordinates, so their noise was 2× this variant's: this variant is, if anything, more accurate
  than their code, and the gap it shows to the DP calibration is larger than theirs would be;
* refinement: the code's Lloyd steps use the same recovery (exact counts, L2-scaled Laplace) at
  ε/(2·nLloyd) per step, with nLloyd = 3 (the paper says 8 SuLQ steps): `refine_iterations: 3` in
  the variant's config;
* budget: candidate 2ε/3, local swap ε/12, recovery ε/6, refinement ε/2 — 17ε/12 in total
  (`AUTHORS_STAGE_FRACTIONS`; `budget_weights` and `delta_weights` are not read in this mode).
The candidate set (Alg. 2) and the local swap (Alg. 3) stay ours (ε-DP at their shares). Its run
records say `not DP as published`, report no ε spent (`epsilon_spent` is NaN; the authors' nominal
charges are in the ledger and `info.nominal_epsilon_authors`), and it never enters a comparison of
private methods. tests/balcan2017/test_audit.py::test_authors_calibration_fails_the_audit shows the
empirical audit rejecting its claimed ε while the DP calibration passes.

Privacy guarantee (declared, `balcan.guarantee(settings)`): (ε, δ)-DP with the default Gaussian
refinement sums (or NoisyAVG recovery), ε-DP with `refine_sum_mechanism: laplace` and noisy-mean
recovery, for add/remove-one neighbours with n treated as public (n sets p, ε', γ and the depth of
Alg. 1, as in the paper); `not_dp(...)` under `calibration: authors`. The k-median variant is ε-DP
(its private 1-median is pure ε; see `dpclust.blocks.one_median` for its solver caveat).

Algorithm 3's per-round budget ε/(T + 1) and weights exp(−ε·ΔL/(8Λ²(T + 1))) are the paper's, verbatim
(see `local_swap.py`): the factor-2 slack found by the audit is in the paper's analysis (Thm 6),
not in our implementation, and we keep the paper's (conservative) scale.

Every setting is declared below (`SETTINGS` for Alg. 4 + §7, `KMEDIAN_SETTINGS` for §6.2) with its
default, allowed values and provenance; `dpclust.settings.declared` fills the defaults and refuses
unknown names and bad values before the algorithm runs, and config/papers/balcan2017.yaml holds only
the named variants' overrides.
"""

from __future__ import annotations

import math

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, validate_inputs
from dpclust.balcan2017.candidates import candidate_set, clip_rows, jl_project, projection_dimension
from dpclust.balcan2017.local_swap import local_swap, swap_rounds
from dpclust.balcan2017.partition import PARTITION_SETTINGS
from dpclust.balcan2017.sulq import DATA_RADIUS, GAUSSIAN_CALIBRATION, clip_to, data_geometry, private_lloyd_steps
from dpclust.baselines import cluster_sums
from dpclust.blocks.domain import public_box
from dpclust.blocks.one_median import ONE_MEDIAN_SETTINGS
from dpclust.blocks.public_size import public_size
from dpclust.mechanisms import exponential_mechanism, laplace_mechanism
from dpclust.metrics import assign
from dpclust.settings import (
    APPROXIMATE,
    PURE,
    AnyOf,
    Boolean,
    Guarantee,
    Interval,
    MappingOf,
    Options,
    Setting,
    Settings,
    declared,
    not_dp,
)

STAGES = ("candidate", "local_swap", "recovery", "select", "refine")

#: Settings of Algorithm 4 as run in §7 (the named variant `balcan2017.balcan`): the one home of
#: their defaults. Algorithm 1's settings are `partition.PARTITION_SETTINGS`; Λ and the Gaussian
#: calibration are SuLQ's (`sulq.DATA_RADIUS`, `sulq.GAUSSIAN_CALIBRATION`), shared, not copied.
SETTINGS = Settings(
    data_radius=DATA_RADIUS,
    projection_rule=Setting(
        "half_log_n", "STATED §7 'p = log(n)/2, rather than 8 log(n)'; EXT ⌊0.5·ln n⌋ (authors' code). "
        "'eight_log_n': ⌈8 ln n⌉ of Alg. 4", Options("half_log_n", "eight_log_n"), "JL dimension p"),
    no_projection_max_d=Setting(
        5, "EXT clustering.m: no projection when d ≤ 5", Interval(int, 0), "largest d run without the JL step"),
    projected_radius_factor=Setting(
        1.0, "MISSING→REC projected points clipped to B(0, ρΛ), ρ = 1 (Algs. 1-3 assume X ⊆ B(0, Λ), which a "
        "Gaussian projection satisfies only approximately)", Interval(float, 0.0, open_lo=True), "ρ"),
    candidate_repetitions=Setting(
        "k", "STATED §7 'repeats the candidate set construction routine only k times' (Alg. 2: "
        "T = 27k log(n/δ), rule 'theory'; or a fixed positive integer)",
        AnyOf(Options("k", "theory"), Interval(int, 1)), "T of Alg. 2"),
    **PARTITION_SETTINGS,
    swap_rounds_rule=Setting(
        "capped", "EXT the authors' code runs min(k, swap_rounds_cap) rounds; MISSING in §7 (Alg. 3's "
        "T = 100k log(n/δ) is STATED for the theory: rule 'theory')", Options("capped", "theory"), "T of Alg. 3"),
    swap_rounds_cap=Setting(20, "EXT authors' code: min(k, 20) local-swap rounds", Interval(int, 1),
                            "cap of the 'capped' rule"),
    trials=Setting(
        1, "MISSING→REC Alg. 4 runs T = 2 log(1/δ) trials (theory); §7 is silent → 1 trial, as the EXT code",
        Interval(int, 1), "trials of Alg. 4 (> 1: exponential-mechanism choice, needs budget_weights.select > 0)"),
    recovery=Setting(
        "noisy_mean", "STATED Alg. 4 noisy mean (L1 sensitivity: see the module docstring); 'noisyavg' = "
        "Nguyen et al. 2021 Alg. 3 (their Figure 1)", Options("noisy_mean", "noisyavg"),
        "how centres are recovered in R^d"),
    recovery_count_fraction=Setting(
        0.5, "STATED Alg. 4: count and sum get equal budgets (both Lap(24T/ε)-type terms)",
        Interval(float, 0.0, 1.0, open_lo=True), "share of the recovery ε for the counts, in (0, 1)"),
    refine_iterations=Setting(
        8, "STATED §7 'we perform 8 iterations of the SuLQ k-means algorithm'", Interval(int, 0),
        "SuLQ steps after the recovery (0: none)"),
    refine_count_fraction=Setting(
        0.5, "MISSING→REC as SuLQ: half of each refinement iteration's ε to the counts",
        Interval(float, 0.0, 1.0, open_lo=True), "share of a refinement step's ε for the counts, in (0, 1)"),
    refine_sum_mechanism=Setting(
        "gaussian", "STATED §7 (SuLQ 'uses the Gaussian mechanism' on the sums); needs δ > 0 ('laplace': pure ε)",
        Options("gaussian", "laplace"), "noise of the refinement's cluster sums"),
    gaussian_calibration=GAUSSIAN_CALIBRATION,
    budget_weights=Setting(
        {"candidate": 8, "local_swap": 1, "recovery": 2, "select": 0, "refine": 6},
        "EXT (the paper's split is MISSING) the authors' code proportions 2/3 : 1/12 : 1/6 : 1/2, rescaled "
        "to sum to ε (8 : 1 : 2 : 6 of 17; their code spends 17ε/12); 'select' is used only when trials > 1",
        MappingOf(keys=STAGES, values=Interval(float, 0.0)), "ε split over the stages (all five keys)"),
    delta_weights=Setting(
        {"recovery": 1, "refine": 1}, "MISSING→REC equal δ shares for the stages that need δ",
        MappingOf(keys=("recovery", "refine"), values=Interval(float, 0.0)), "δ split (NoisyAVG, Gaussian sums)"),
    store_candidates=Setting(
        False, "REC keep the candidate set and the swap's centres in info, for illustrations only (large)",
        Boolean(), "diagnostics"),
    calibration=Setting(
        "paper_dp", "STATED Alg. 4 with the noise calibrated for ε-DP ('paper_dp': L1 sensitivity of the recovery "
        "sums, noisy counts, stages summing to ε). 'authors': EXT the authors' MATLAB calibration (per-coordinate "
        "Laplace scaled to the L2 radius, exact counts, 17ε/12) — NOT DP, only to show where the published "
        "curves come from (module docstring)", Options("paper_dp", "authors"),
        "noise calibration of the recovery and refinement"),
)

#: The authors' MATLAB budget (EXT `clustering.m`): stage → fraction of ε. The refinement's ε/2 is
#: split over its steps. They add up to 17/12: the code is not a faithful accounting (not DP).
AUTHORS_STAGE_FRACTIONS = {"candidate": 2.0 / 3.0, "local_swap": 1.0 / 12.0, "recovery": 1.0 / 6.0,
                           "select": 0.0, "refine": 0.5}

#: Neighbouring relation of every Alg. 4 guarantee: n sets p, ε', γ and the depth of Alg. 1.
RELATION = "add/remove one record (n public: it sets p, ε', γ and Alg. 1's depth, as in the paper)"
AUTHORS_NOT_DP = ("authors' calibration (EXT MATLAB code): the recovery and refinement add per-coordinate "
                  "Laplace noise scaled to the L2 radius Λ (the L1 sensitivity of a cluster sum is up to "
                  "√d·Λ), divide by EXACT cluster sizes, and the stages' budgets add to 17ε/12")


def balcan_guarantee(settings) -> Guarantee:
    """What `balcan` guarantees with these (complete) settings."""
    if settings.get("calibration") == "authors":
        return not_dp(AUTHORS_NOT_DP, relation=RELATION)
    gaussian = int(settings["refine_iterations"]) > 0 and settings["refine_sum_mechanism"] == "gaussian"
    if settings["recovery"] == "noisyavg" or gaussian:
        parts = (["Gaussian sums of the SuLQ refinement"] if gaussian else []) + \
            (["NoisyAVG recovery"] if settings["recovery"] == "noisyavg" else [])
        return Guarantee(APPROXIMATE.kind, "δ from the " + " and the ".join(parts), RELATION)
    return Guarantee(PURE.kind, "Laplace recovery and refinement", RELATION)

#: §6.2 k-median variant: no SuLQ refinement (a k-means step), hence no 'refine' share of ε, and a
#: private 1-median per cluster instead of the noisy mean (its settings are a nested mapping,
#: resolved by the callee). The k-means recovery, refinement and calibration settings are not
#: declared: the k-median objective never reads them.
KMEDIAN_UNUSED = ("recovery", "recovery_count_fraction", "refine_iterations", "refine_count_fraction",
                  "refine_sum_mechanism", "gaussian_calibration", "delta_weights", "calibration")
KMEDIAN_SETTINGS = SETTINGS.without(*KMEDIAN_UNUSED).extend(
    budget_weights=Setting(
        {"candidate": 8, "local_swap": 1, "recovery": 2, "select": 0, "refine": 0},
        "EXT (MISSING in the paper) the authors' code proportions without the Lloyd part (8 : 1 : 2 of 11)",
        MappingOf(keys=STAGES, values=Interval(float, 0.0)), "ε split over the stages (all five keys)"),
    one_median=Setting(
        {}, "MISSING→REC settings of the private 1-median (dpclust.blocks.one_median.private_one_median, which "
        "holds their defaults and checks them: objective perturbation, Iyengar et al. 2019); §6.2 names "
        "log-concave sampling (Bassily et al. 2014) without parameters", MappingOf(keys=tuple(ONE_MEDIAN_SETTINGS)),
        "partial settings of private_one_median (empty: its defaults)"),
)


def stage_budgets(epsilon: float, weights: dict, used: dict) -> dict:
    """ε per stage: ε·w_s/Σ_{used} w; unused stages (and weight 0) get 0. Parts sum to ε."""
    missing = [s for s in STAGES if s not in weights]
    if missing:
        raise DPClustError(f"budget_weights lacks {missing}; give all of {list(STAGES)}")
    w = {s: float(weights[s]) if used.get(s, False) else 0.0 for s in STAGES}
    if any(v < 0 for v in w.values()):
        raise DPClustError(f"budget_weights must be >= 0, got {weights!r}")
    for s in ("candidate", "local_swap", "recovery"):
        if w[s] <= 0:
            raise DPClustError(f"budget_weights[{s!r}] must be > 0")
    total = sum(w.values())
    if used.get("select") and w["select"] <= 0:
        raise DPClustError("trials > 1 needs budget_weights['select'] > 0")
    if used.get("refine") and w["refine"] <= 0:
        raise DPClustError("refine_iterations > 0 needs budget_weights['refine'] > 0")
    return {s: epsilon * v / total for s, v in w.items()}


def _delta_budgets(delta: float, weights: dict, needs: dict) -> dict:
    parts = {s: float(weights.get(s, 0.0)) for s in ("recovery", "refine") if needs.get(s)}
    if not parts:
        return {"recovery": 0.0, "refine": 0.0}
    if delta <= 0:
        raise DPClustError(f"stage(s) {sorted(parts)} need delta > 0 (Gaussian refinement or NoisyAVG); "
                           "set the run's delta (e.g. 1e-6) or use refine_sum_mechanism: laplace")
    if any(v <= 0 for v in parts.values()):
        raise DPClustError(f"delta_weights must be > 0 for {sorted(parts)}, got {weights!r}")
    total = sum(parts.values())
    return {s: delta * parts.get(s, 0.0) / total for s in ("recovery", "refine")}


def _noisy_mean_recovery(Xc, labels, k, epsilon, h, rng, acc, count_fraction, radius=None, l1=None):
    """Alg. 4 recovery: Laplace counts (sens. 1) and Laplace sums (L1 sensitivity = the L1 radius,
    d·h for the box), parallel over clusters."""
    d = Xc.shape[1]
    l1 = d * h if l1 is None else l1
    radius = math.sqrt(d) * h if radius is None else radius
    sums, counts = cluster_sums(Xc, labels, k)
    eps_c = count_fraction * epsilon
    eps_s = epsilon - eps_c
    s = laplace_mechanism(counts, 1.0, eps_c, rng, acc, label="Alg.4 recovery counts (parallel over clusters)")
    s = np.maximum(s, 1.0)
    noisy = laplace_mechanism(sums, l1, eps_s, rng, acc, label="Alg.4 recovery sums (parallel over clusters)")
    Z = noisy / s[:, None]
    return clip_to(Z, h, radius)


def _authors_recovery(Xc, labels, k, epsilon, h, radius, rng, acc, label):
    """The authors' calibration (NOT DP): exact mean + per-coordinate Lap(Λ/(ε·|S_j|)), i.e. the sums
    noised with the L2 radius Λ as if it were their L1 sensitivity, divided by the EXACT counts; an
    empty cluster gets a uniform point of the public box. `acc` only records the nominal charge."""
    sums, counts = cluster_sums(Xc, labels, k)
    noisy = laplace_mechanism(sums, radius, epsilon, rng, acc,
                              label=f"{label}: NOT DP (L2 radius as L1 sensitivity, exact counts; authors' nominal ε)")
    Z = np.empty_like(noisy)
    full = counts > 0
    Z[full] = noisy[full] / counts[full, None]
    if (~full).any():
        Z[~full] = rng.uniform(-h, h, size=(int((~full).sum()), Xc.shape[1]))
    return clip_to(Z, h, radius)


def _authors_refine(Xc, Z, iterations, epsilon, h, radius, rng, acc):
    """The authors' Lloyd steps (NOT DP): assign, then `_authors_recovery` at ε/iterations per step."""
    trace = []
    for it in range(iterations):
        labels, d2 = assign(Xc, Z)
        trace.append(float(d2.sum()))
        Z = _authors_recovery(Xc, labels, Z.shape[0], epsilon / iterations, h, radius, rng, acc,
                              f"authors' Lloyd step {it + 1}")
    return Z, trace


def _recover(Xc, labels, k, eps_rec, delta_rec, geo, bounds, rng, acc, settings, objective):
    centre, h = geo["centre"], geo["h"]
    if objective == "kmedian":
        from dpclust.blocks.one_median import private_one_median

        Z = np.empty((k, Xc.shape[1]))
        order = np.argsort(labels, kind="stable")
        cuts = np.searchsorted(labels[order], np.arange(k + 1))
        with acc.parallel("k-median recovery: private 1-median per cluster") as par:
            for j in range(k):
                branch = par.branch()
                P = Xc[order[cuts[j]:cuts[j + 1]]] + centre
                Z[j] = private_one_median(P, eps_rec, delta_rec, list(bounds), rng, branch,
                                          dict(settings["one_median"])) - centre
        return clip_to(Z, h, geo["radius"])
    if settings["calibration"] == "authors":
        return _authors_recovery(Xc, labels, k, eps_rec, h, geo["radius"], rng, acc, "authors' recovery")
    rule = settings["recovery"]
    if rule == "noisy_mean":
        return _noisy_mean_recovery(Xc, labels, k, eps_rec, h, rng, acc, float(settings["recovery_count_fraction"]),
                                    geo["radius"], geo["l1"])
    if rule == "noisyavg":
        from dpclust.blocks.noisy_average import noisy_avg_centers

        diameter = 2.0 * geo["radius"]
        Z = noisy_avg_centers(Xc + centre, labels, k, eps_rec, delta_rec, diameter, list(bounds), rng, acc)
        return clip_to(np.asarray(Z, dtype=float) - centre, h, geo["radius"])
    raise DPClustError(f"unknown recovery {rule!r} (use 'noisy_mean' or 'noisyavg')")


def _nonempty(Xc, Z) -> tuple[int, float]:
    """Non-private diagnostic: how many centres are the nearest centre of some point, and the cost."""
    labels, d2 = assign(Xc, Z)
    return int(np.unique(labels).size), float(d2.sum())


def _run(X, k, epsilon, delta, rng, settings, objective: str) -> ClusteringResult:
    X = validate_inputs(X, k, epsilon, delta)
    bounds = public_box(settings, X)
    n, d = public_size(settings, X), X.shape[1]   # n: the public N (p, T, and Alg. 1's ε', γ, depth)
    geo = data_geometry(d, bounds, settings["data_radius"])
    centre, h, radius = geo["centre"], geo["h"], geo["radius"]
    trials = int(settings["trials"])
    kmeans = objective == "kmeans"
    authors = kmeans and settings["calibration"] == "authors"
    refine_it = int(settings["refine_iterations"]) if kmeans else 0
    power = 2 if kmeans else 1
    if authors:
        if trials != 1 or settings["recovery"] != "noisy_mean":
            raise DPClustError("calibration 'authors' reproduces the authors' code: trials 1 and recovery 'noisy_mean'")
        eps = {s: epsilon * f for s, f in AUTHORS_STAGE_FRACTIONS.items()}
        if refine_it == 0:
            eps["refine"] = 0.0
        dlt = {"recovery": 0.0, "refine": 0.0}
        # The accountant only holds the authors' NOMINAL charges (17ε/12 with refinement): no DP bound.
        acc = Accountant(sum(eps.values()), 0.0)
    else:
        needs_delta = {"recovery": kmeans and settings["recovery"] == "noisyavg",  # private_one_median is pure ε
                       "refine": refine_it > 0 and settings["refine_sum_mechanism"] == "gaussian"}
        eps = stage_budgets(epsilon, settings["budget_weights"],
                            {"candidate": True, "local_swap": True, "recovery": True,
                             "select": trials > 1, "refine": refine_it > 0})
        dlt = (_delta_budgets(delta, settings["delta_weights"], needs_delta) if kmeans
               else {"recovery": 0.0, "refine": 0.0})
        acc = Accountant(epsilon, delta)
    a_delta = float(settings["analysis_delta"])
    Xc = clip_rows(X - centre, radius)  # per-point map enforcing the public radius Λ (no-op for the box)
    p = projection_dimension(n, d, settings["projection_rule"], int(settings["no_projection_max_d"]))
    T_swap = swap_rounds(settings["swap_rounds_rule"], int(settings["swap_rounds_cap"]), k, n, a_delta)
    results, stage_info = [], []
    for t in range(trials):
        Y, _, R = jl_project(Xc, p, radius, float(settings["projected_radius_factor"]), rng)
        cand_acc = acc.sub_budget(eps["candidate"] / trials, 0.0, label=f"trial {t + 1}: Alg.2 candidate set")
        cand = candidate_set(Y, k, eps["candidate"] / trials, a_delta, R, rng, cand_acc, settings)
        swap_acc = acc.sub_budget(eps["local_swap"] / trials, 0.0, label=f"trial {t + 1}: Alg.3 local swap")
        sw = local_swap(Y, cand["centers"], k, eps["local_swap"] / trials, R, T_swap, rng, swap_acc, power=power)
        labels, _ = assign(Y, sw["centers"])
        Z = _recover(Xc, labels, k, eps["recovery"] / trials, dlt["recovery"] / trials, geo, bounds,
                     rng, acc, settings, objective)
        results.append(Z)
        info = {"projection_dim": p, "candidates": int(cand["centers"].shape[0]),
                "candidate_sizes": cand["sizes"], "partition_levels": cand["levels"],
                "gamma": cand["gamma"], "eps_level": cand["eps_level"],
                "candidate_eps_spent": cand_acc.spent_epsilon,
                "swap_rounds": T_swap, "swap_loss_trace": sw["loss_trace"], "swap_chosen_round": sw["chosen_round"]}
        if settings["store_candidates"]:
            info["candidate_centers"] = cand["centers"]
            info["swap_centers"] = sw["centers"]
        stage_info.append(info)
    chosen = 0
    if trials > 1:
        losses = np.array([_loss(Xc, Z, power) for Z in results])
        sens = (2.0 * radius) ** power
        chosen = exponential_mechanism(-losses, sens, eps["select"], rng, acc, label="Alg.4 choice among trials")
    Z = results[chosen]
    recovery_nonempty, recovery_cost = _nonempty(Xc, Z)  # non-private diagnostics (never fed back)
    trace = []
    if refine_it > 0 and authors:
        Z, trace = _authors_refine(Xc, Z, refine_it, eps["refine"], h, radius, rng, acc)
    elif refine_it > 0:
        Z, trace = private_lloyd_steps(
            Xc, Z, refine_it, eps["refine"], dlt["refine"], h, rng, acc,
            count_fraction=float(settings["refine_count_fraction"]),
            sum_mechanism=settings["refine_sum_mechanism"], calibration=settings["gaussian_calibration"],
            label="refine (SuLQ)", radius_l2=radius, radius_l1=geo["l1"])
    nonempty = _nonempty(Xc, Z)[0] if refine_it > 0 else recovery_nonempty
    # Reserved-but-unused budget (none with the defaults) is charged so the record is explicit.
    rest = acc.remaining_epsilon
    if rest > 1e-12 * acc.epsilon:
        acc.spend(rest, 0.0, label="unused remainder (charged, nothing released)")
    info = dict(iterations=refine_it, stage_epsilon=eps, stage_delta=dlt, trial_chosen=int(chosen) + 1,
                trials=stage_info, refine_cost_trace=trace, objective=objective,
                recovery_cost=recovery_cost, recovery_nonempty_clusters=recovery_nonempty,
                nonempty_clusters=nonempty)
    if authors:
        # NOT DP: the run reports the nominal ε it was given (the pipeline's convention for every
        # configured variant that takes a budget, see tests/test_conformance.py); no guarantee goes with
        # it (the record's guarantee is "not DP as published") and the items never report it as an ε.
        # The authors' own accounting (17ε/12) stays in `info` and the ledger.
        nominal = acc.spent_epsilon
        return ClusteringResult(
            centers=np.asarray(Z + centre, dtype=float), epsilon_spent=float(epsilon), delta_spent=0.0,
            iterations=refine_it, ledger=[[c.label, c.epsilon, c.delta] for c in acc.ledger],
            info={k_: v for k_, v in info.items() if k_ != "iterations"} | {
                "nominal_epsilon_authors": nominal, "privacy_note": "NOT DP: " + AUTHORS_NOT_DP})
    info.pop("iterations")
    return ClusteringResult.from_accountant(Z + centre, acc, iterations=refine_it, **info)


def _loss(Xc, Z, power):
    _, d2 = assign(Xc, Z)
    return float(d2.sum() if power == 2 else np.sqrt(d2).sum())


@declared(SETTINGS, guarantee=balcan_guarantee)
def balcan(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Private k-means of Balcan et al. 2017 (Alg. 4 + the §7 SuLQ refinement); `calibration: authors`
    is the authors' code's calibration, NOT DP (module docstring)."""
    return _run(X, k, epsilon, delta, rng, settings, "kmeans")


@declared(KMEDIAN_SETTINGS, guarantee=Guarantee(
    PURE.kind, "Laplace/exponential stages and a pure-ε private 1-median per cluster", RELATION), objective="kmedian")
def balcan_kmedian(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Private k-median of Balcan et al. 2017 §6.2 (local swap on the k-median loss, private 1-median recovery)."""
    return _run(X, k, epsilon, delta, rng, settings, "kmedian")
