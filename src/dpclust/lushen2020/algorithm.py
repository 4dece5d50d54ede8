"""Algorithm 1 of Lu & Shen, "Differentially Private k-Means Clustering with Guaranteed Convergence"
(arXiv 2002.01043), with the sampling zones of Algorithm 2 in both strategies (§5.2, §5.3).

Names follow §7 and the captions of Figures 8–10: **Posterior** = orientation from past knowledge,
**Prior** = past and future knowledge ([22]); §6.1 has them the other way round (INVENTORY).

**Guarantee: not DP as published** (`GUARANTEE`, declared on `lushen`, `posterior`, `prior`). The paper
claims ε-DP for ε = ε₀ + Σ_t max_i ε_i^(t) (Thm 5, add/remove one record, Def. 1); as published it is
not, for any ε: line 12 divides the exact cluster sums by noisy counts (the direction of every centre is
released exactly), line 1's starts are data records, the stopping time (and so the total ε) is data
dependent, and the sampling zone is a published data-dependent object. The audit
(`tests/lushen2020/test_privacy_audit.py`) rejects the charged ε (an empirical ε ≥ 3.7 where 0.2 is
charged, limited only by its sample size). We implement the paper as written: the run records carry the
guarantee, the figures label both strategies "not DP as published", no ε is reported for them, and they
never enter a comparison of DP methods. ε_step (the x-axis of Figs 7–10) is the paper's knob, not a
guarantee.

Algorithm 1 (``lushen(X, k, epsilon, delta, rng, settings)``; setting ``strategy``):
1. Ŝ^(0): k distinct data points drawn with ``default_rng(run_init_seed(settings, epsilon))`` (line 1):
   the runner's ``init_seed`` mixed with the run's ε (``init_per_epsilon``, §7.1 "the initial set of
   centroids is randomly selected … in each run"), so runs at different ε have independent starts and
   every method of the same (seed, ε) shares them (LLOYD, BLUM, DWORK, SU, Algorithm 1, §7.1).
2. Iteration t (lines 3–9): C^(t) = assignment to Ŝ^(t−1); S^(t) = means; the sampling zone of each
   cluster by Algorithm 2 (`sampling_zone`); Ŝ_i^(t) drawn in it by the ExpDP with ε_step (parallel
   composition over the disjoint clusters, Thm 5: max_i ε_i^(t) = ε_step).
3. Convergence ("while clusters do not converge", line 2): the loop stops at the first iteration
   whose clusters equal those of the previous iteration (setting ``convergence: memberships``), which
   is Lloyd's rule "the k centroids keep the same in two neighbouring iterations" (§3.2) applied to
   the means. Alternative ``shift``: stop when max_i ‖S_i^(t) − Ŝ_i^(t−1)‖ ≤ ``tol``.
4. Line 12: the means of the final clusters with Laplace noise (sensitivity 1, ε₀) on the counts
   only, as §6.1 states ("inject the Laplace noise to the counts when calculating the mean").

Budget (Thm 5, §7.1, bottom-up): the paper charges ε₀ + Σ_t max_i ε_i^(t) = ε₀ + (#sampling
iterations)·ε_step. The run's ``epsilon`` argument is the *cap* on that total (the runner refuses
overspending); the paper's per-atom-step budget (the x-axis of Fig. 7) is ε_step = epsilon /
``atom_steps`` and ε₀ = ``epsilon0_steps``·ε_step. The accountant's total is exactly that nominal sum
(not a guarantee, see above); when the cap is reached the loop stops (``info.forced_stop``).
MISSING→REC: ε_i^(t) = ε₀ = ε_step (INVENTORY).

Interpretations (each is a declared setting, `SETTINGS` below, with its provenance):
* an empty cluster keeps Ŝ_i^(t−1) and draws nothing; a cluster with a = 0 (its mean equals the
  public Ŝ_i^(t−1)) keeps it and draws nothing;
* final noisy counts are floored at ``min_noisy_count`` and the centres clipped to the public box
  (post-processing);
* diagnostics for Figs 7–10 (not part of the released output): Lloyd from the same initial centroids
  (iterations, cost: the normaliser of Fig. 7), the pre-noise output's cost and whether it "matches"
  Lloyd's within [1 − ``match_tolerance``, 1 + ``match_tolerance``] (§7.2: "[0.99, 1.01] of Lloyd's";
  REC: cost ratio).

Iteration counts: ``iterations`` counts the loop's assignment passes (as Lloyd's count does, the
final pass that finds the clusters unchanged included); ``info.lloyd_steps`` also counts the Prior's
look-ahead Lloyd step of every sampling iteration (abstract/§1: "duplicated operations in each
iteration required for computing the future knowledge"; Thm 4's proof counts it), the count Fig. 10
shows.

Further notes: for the Prior the controller S_i^(t+1) depends on points of other clusters after
re-assignment, so the clusters are not disjoint inputs of the zone; the paper's "local sensitivity" is
used for the count (1) and the score (2) as stated. ``info`` also holds exact, non-private diagnostics
(``n``, the exact data size; ``max_a_trace``: the largest ‖S_i − Ŝ_i‖ per iteration; and the Lloyd
comparison listed above).
"""

from __future__ import annotations

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, data_bounds, validate_inputs
from dpclust.baselines import lloyd
from dpclust.blocks.domain import public_box
from dpclust.blocks.initialisation import initial_centers
from dpclust.lushen2020 import sampling_zone as sz
from dpclust.mechanisms import laplace_mechanism
from dpclust.metrics import assign_with_sums, cluster_sums_in_order, kmeans_cost, row_norms
from dpclust.settings import Boolean, Interval, Options, Setting, Settings, declared, not_dp

STRATEGIES = ("posterior", "prior")

#: Algorithm 1's settings. Defaults: the Prior strategy, the paper's headline variant (§7.2: it
#: "matches at least 84%" of Lloyd's outputs, Thm 3); the Posterior variant overrides `strategy`.
SETTINGS = Settings(
    strategy=Setting("prior", "STATED §7 / captions of Figs 8-10: Prior = past + future knowledge (§5.3, "
                     "X = S^(t+1)), Posterior = past knowledge (§5.2); §6.1 has the names swapped (INVENTORY)",
                     Options(*STRATEGIES), "sampling-zone orientation controller of Algorithm 2"),
    atom_steps=Setting(100, "REC budget convention (config/papers/lushen2020.yaml header): the run's epsilon is "
                       "the cap atom_steps·ε_step, so ε_step = epsilon/atom_steps; also caps the loop at "
                       "atom_steps − epsilon0_steps iterations", Interval(float, 0, open_lo=True),
                       "atom steps per run cap (must exceed epsilon0_steps)"),
    epsilon0_steps=Setting(1.0, "MISSING→REC (INVENTORY: ε_i^(t) and ε₀ are MISSING): ε₀ = ε_step",
                           Interval(float, 0, open_lo=True), "ε₀ of line 12 in units of ε_step"),
    convergence=Setting("memberships", "STATED §3.2 / Alg. 1 l.2: stop when the clusters (hence the means) "
                        "equal the previous iteration's; 'shift': stop when max_i ‖S_i − Ŝ_i‖ ≤ tol",
                        Options("memberships", "shift"), "stopping rule of the while loop (line 2)"),
    tol=Setting(1e-4, "MISSING→REC (INVENTORY: the paper rounds values, precision MISSING): max centre move "
                "for convergence: shift (unused with memberships)", Interval(float, 0),
                "tolerance of convergence: shift"),
    prior_clip=Setting(True, "REC Def. 5 requires zone ⊂ convergent zone: Prior's X = S^(t+1) is moved onto "
                       "the border when ‖X − S‖ > a (the proof of Thm 3 assumes ‖S^(t+1) − S^(t)‖ < a)",
                       Boolean(), "clip the Prior controller to the convergent zone"),
    prior_fallback=Setting("posterior", "REC a Prior cluster whose next mean is empty or equal to S uses the "
                           "Posterior controller", Options("posterior"),
                           "controller of degenerate Prior clusters"),
    min_noisy_count=Setting(1.0, "MISSING→REC floor of the noisy final counts (line 12), avoids division by ≤ 0",
                            Interval(float, 0, open_lo=True), "floor of line 12's noisy counts"),
    clip_to_bounds=Setting(True, "REC final centres clipped to the public box [0,1]^d (post-processing)",
                           Boolean(), "clip the released centres to the public box"),
    rejection_batch=Setting(64, "REC speed only: proposals per cluster per rejection round; the output "
                            "distribution is exact regardless", Interval(int, 1),
                            "proposals per cluster and round of the ExpDP rejection sampler"),
    diagnose_lloyd=Setting(True, "REC analysis only: store Lloyd from the same init (iterations, cost) and the "
                           "pre-noise match for Figs 8-10 (not part of the private output)", Boolean(),
                           "record the non-private Lloyd comparison in info"),
    lloyd_max_iter=Setting(300, "REC cap of that Lloyd diagnostic (scikit-learn's default)", Interval(int, 1),
                           "iteration cap of the diagnostic Lloyd run"),
    match_tolerance=Setting(0.01, "STATED §7.2 'once the output of our approach is in [0.99, 1.01] of Lloyd's "
                            "algorithm, we call it a match'; compared quantity MISSING→REC: the k-means cost",
                            Interval(float, 0), "relative tolerance of a 'match' (Fig. 8)"),
    init_per_epsilon=Setting(True, "INFERRED §7.1 'the initial set of centroids is randomly selected for all methods "
                             "in each run': a run at another ε is another run, so its initial centroids are drawn "
                             "afresh (from the runner's init_seed and ε; every method of the same (seed, ε) shares "
                             "them, §7.1); false: one set per seed, reused at every ε",
                             Boolean(), "draw the initial centroids from (init_seed, ε) instead of init_seed alone"),
)

#: The strategy wrappers `posterior` and `prior` fix the strategy.
STRATEGY_SETTINGS = SETTINGS.without("strategy")


#: What Algorithm 1 guarantees as published (and as implemented here): not ε-DP for the ε of Thm 5.
NOT_DP_REASON = (
    "line 12 divides the exact cluster sums by noisy counts, so each centre's direction is released exactly; "
    "the initial centroids Ŝ^(0) are k data records (line 1; a cluster that stays empty releases its record "
    "verbatim); the stopping time, hence the total ε of Thm 5, is data dependent; the sampling zone is a "
    "published data-dependent object. The audit (tests/lushen2020/test_privacy_audit.py) rejects the charged ε")
GUARANTEE = not_dp(NOT_DP_REASON, relation="add/remove one record (Def. 1)")


def run_init_seed(settings, epsilon) -> int:
    """The seed of this run's initial centroids: the runner's ``init_seed``, mixed with the run's ε
    (its cap) when ``init_per_epsilon`` (§7.1: the initial centroids are drawn in each run). Every
    method of the same (seed, ε) gets the same seed, so LLOYD, BLUM, DWORK, SU and Algorithm 1 share
    their initial centroids (§7.1); runs at different ε get independent ones."""
    seed = int(settings["init_seed"])
    if not settings.get("init_per_epsilon", True):
        return seed
    words = [seed & 0xFFFFFFFF, seed >> 32, int(round(float(epsilon) * 1e6)) & 0xFFFFFFFF]
    return int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def _check_settings(s: dict) -> dict:
    """The one cross-setting constraint (the decorator has checked each setting on its own)."""
    if not float(s["atom_steps"]) > float(s["epsilon0_steps"]):
        raise DPClustError("need atom_steps > epsilon0_steps > 0 (the cap must leave room for ε₀ and one iteration)")
    return s


def _means(X, labels, k, fallback, sums=None):
    """Cluster means (empty clusters keep `fallback`), sums (`cluster_sums_in_order`, unless given:
    `metrics.assign_with_sums` formed them with the labels) and counts."""
    counts = np.bincount(labels, minlength=k)
    if sums is None:
        sums = cluster_sums_in_order(X, labels, k)
    S = fallback.copy()
    nonempty = counts > 0
    S[nonempty] = sums[nonempty] / counts[nonempty, None]
    return S, sums, counts


def _prior_controller(X, S, a, S_prev, nonempty, s, rng, X_sq=None):
    """X^(t) = S^(t+1): one more Lloyd step from the true means S^(t) (Alg. 2 line 2); `X_sq` =
    the row norms of X (`metrics.row_norms`), computed once per run."""
    k = S.shape[0]
    labels_next, _, sums_next = assign_with_sums(X, S, X_sq)
    Xc, _, counts_next = _means(X, labels_next, k, S, sums_next)
    dist = np.linalg.norm(Xc - S, axis=1)
    if s["prior_clip"]:
        far = dist > a
        Xc[far] = S[far] + (Xc[far] - S[far]) * (a[far] / dist[far])[:, None]
    degenerate = (counts_next == 0) | (dist <= 0.0)
    degenerate &= nonempty
    if degenerate.any():
        Xc[degenerate] = sz.posterior_controller(S[degenerate], S_prev[degenerate], rng)
    return Xc, int(degenerate.sum())


def final_release(X, labels, S_hat, eps0, rng, acc, settings, sums=None) -> np.ndarray:
    """Line 12: the means of the final clusters with Laplace noise (sensitivity 1, ε₀) on the
    counts only (§6.1); the count vector has L1 sensitivity 1 under add/remove-one (Def. 1).
    `sums`: the final clusters' sums when the caller has them (else formed here)."""
    k = S_hat.shape[0]
    lo, hi = data_bounds(settings)
    _, sums, counts = _means(X, labels, k, S_hat, sums)
    noisy = laplace_mechanism(counts.astype(float), 1.0, eps0, rng, accountant=acc,
                              label="final: Laplace on the cluster counts (line 12)")
    noisy = np.maximum(noisy, float(settings["min_noisy_count"]))
    centers = S_hat.copy()
    nonempty = counts > 0
    centers[nonempty] = sums[nonempty] / noisy[nonempty, None]
    if settings["clip_to_bounds"]:
        np.clip(centers, lo, hi, out=centers)
    return centers


@declared(SETTINGS, guarantee=GUARANTEE, budget="cap")
def lushen(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Algorithm 1 (Lu & Shen 2020) with the Posterior or Prior sampling zone; see module docstring."""
    X = validate_inputs(X, k, epsilon, delta)
    s = _check_settings(settings)
    public_box(s, X)
    if "init_seed" not in s:
        raise DPClustError("settings['init_seed'] is missing: Algorithm 1 shares its initial centroids (§7.1)")
    if float(delta) != 0.0:
        raise DPClustError("Algorithm 1 is pure ε-DP: use delta = 0")
    acc = Accountant(epsilon, 0.0)
    eps_step = float(epsilon) / float(s["atom_steps"])
    eps0 = float(s["epsilon0_steps"]) * eps_step
    n = X.shape[0]
    C0 = initial_centers(X, k, "random_points", rng=np.random.default_rng(run_init_seed(s, epsilon)))
    S_hat = C0.copy()
    prev_labels = None
    iterations = 0
    sampling_iterations = 0
    fallbacks = 0
    converged = False
    forced_stop = False
    trace_a = []
    X_sq = row_norms(X)   # what every iteration reads of X besides X, once
    while True:
        iterations += 1
        labels, _, sums = assign_with_sums(X, S_hat, X_sq)
        S, _, counts = _means(X, labels, k, S_hat, sums)
        a = np.linalg.norm(S - S_hat, axis=1)
        if s["convergence"] == "memberships":
            done = prev_labels is not None and np.array_equal(labels, prev_labels)
        else:
            done = bool(a.max() <= float(s["tol"]))
        if done:
            converged = True
            break
        if not acc.can_spend(eps_step + eps0):
            forced_stop = True
            break
        nonempty = counts > 0
        active = nonempty & (a > 0.0)
        if s["strategy"] == "posterior":
            Xc = S.copy()
            if active.any():
                Xc[active] = sz.posterior_controller(S[active], S_hat[active], rng)
        else:
            Xc, nf = _prior_controller(X, S, a, S_hat, active, s, rng, X_sq)
            fallbacks += nf
        new_S_hat = S_hat.copy()
        if active.any():
            idx = np.nonzero(active)[0]
            P, rho, _ = sz.make_zone(S[idx], Xc[idx], rng)
            # Parallel composition (Thm 5): the clusters are disjoint and each draws with ε_step, so
            # the iteration costs max_i ε_i^(t) = ε_step. One branch stands for all of them (equal
            # costs), which keeps the ledger short.
            with acc.parallel(f"iteration {iterations}: ExpDP in the sampling zones") as par:
                par.branch().spend(eps_step, label=f"each of {idx.size} disjoint clusters")
            new_S_hat[idx] = sz.expdp_in_zones(P, rho, S[idx], a[idx], Xc[idx], eps_step, rng,
                                               batch=int(s["rejection_batch"]))
            sampling_iterations += 1
        trace_a.append(float(a.max()))
        S_hat = new_S_hat
        prev_labels = labels
    S_final = S             # the means of the final clusters (the loop formed them from these labels and S_hat)
    centers = final_release(X, labels, S_hat, eps0, rng, acc, s, sums)
    info = {
        "strategy": s["strategy"], "epsilon_step": eps_step, "epsilon_0": eps0,
        "epsilon_total_bottom_up": eps0 + sampling_iterations * eps_step,
        "sampling_iterations": sampling_iterations, "converged": converged, "forced_stop": forced_stop,
        "prior_fallbacks": fallbacks, "max_a_trace": trace_a, "n": n,
        # assignment passes incl. Prior's look-ahead Lloyd step per iteration (§1: "duplicated
        # operations in each iteration"); a second way to count iterations for Figs 9/10
        "lloyd_steps": iterations + (sampling_iterations if s["strategy"] == "prior" else 0),
    }
    if s["diagnose_lloyd"]:
        ref = lloyd(X, C0, max_iter=int(s["lloyd_max_iter"]), tol=0.0)
        pre = kmeans_cost(X, S_final)
        ratio = pre / ref.cost if ref.cost > 0 else float("nan")
        tol = float(s["match_tolerance"])
        info.update(lloyd_iterations=ref.iterations, lloyd_cost=ref.cost, prenoise_cost=pre,
                    prenoise_ratio=ratio, match=bool(1 - tol <= ratio <= 1 + tol),
                    iteration_ratio=iterations / ref.iterations)
    return ClusteringResult.from_accountant(centers, acc, iterations=iterations, **info)


@declared(STRATEGY_SETTINGS, guarantee=GUARANTEE, budget="cap")
def posterior(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Algorithm 1 with the Posterior (past knowledge) sampling zone."""
    return lushen(X, k, epsilon, delta, rng, dict(settings, strategy="posterior"))


@declared(STRATEGY_SETTINGS, guarantee=GUARANTEE, budget="cap")
def prior(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Algorithm 1 with the Prior (past + future knowledge) sampling zone."""
    return lushen(X, k, epsilon, delta, rng, dict(settings, strategy="prior"))
