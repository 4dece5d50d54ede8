"""The authors' sampler for Algorithm 2 (`em_sampler: authors`): NOT differentially private.

Nguyen et al.'s released code (EXT: Anamay-Chaturvedi/Differentially-private-k-means, `ours.h`,
`get_candidate_centers`; facts only, no code copied) does not draw from Lemma 8's law. Per pick it
lists the covered grid points g (cover c_g ≥ 1 over the remaining points D'), normalises their
weights by the largest cover M = max_g c_g,

    w̃_g = e^{s(c_g − M)} − e^{−sM}   (s = ε_E/2),   Σ_g w̃_g = e^{−sM}·T,   T = Σ_g (e^{s·c_g} − 1),

and takes the covered branch with probability

    p = 1 − |G| / (|G|·Σ_g w̃_g − K),     K = #{g : c_g ≥ 1},

clipped to [0, 1] (the C++ `bernoulli_distribution` compares a uniform [0, 1) draw with p: p > 1
always, p < 0 never). In the covered branch g is drawn ∝ w̃_g, i.e. ∝ e^{s·c_g} − 1 (Lemma 8's P'),
and cover[g] leaves D'; otherwise g is a uniform grid point that covers nothing.

Lemma 8's mechanism takes the covered branch with P_samp = T/(|G| + T). With normalised weights,
p ≈ 1 − e^{sM}/T instead, which is ≈ 1 as soon as a few grid points have near-maximal cover: the
uniform mass of the whole grid (|G| ≈ 10^20 points and more) that dominates the exponential
mechanism at the per-call ε_E ≈ 0.004 almost never wins. The picks are therefore greedy covers, and
one record moves the output law by far more than e^{ε_E}: the candidate set is not (ε, δ)-DP (the
test suite's audit of Step 2 rejects the claimed ε). This module exists to show that difference
next to the paper's mechanism (Figure 1, "authors' sampler (not DP)"); never use it as a private
algorithm.

Implementation (everything else of Algorithm 1, including the scale ladder, is the paper's; only
the sampler differs). The authors enumerate every covered grid point, which their coarser ladder
(first radius 1000/n) allows; at the paper's first radius 1/n there are ≈ n·10^4 covered grid
points (d' = 5), so here:

* **P' (covered branch)** is sampled exactly by rejection, with one of two proposals chosen per
  scale by a cheap density bound M̄ ≥ M (M̄ = 2^{d'} × the largest number of remaining points in
  one cell of a 2R grid: a ball of radius R meets at most 2^{d'} such cells):
  - *points* (s·M̄ ≤ `POINT_REGIME_MAX`, the fine scales): pick a remaining point p ∝ C(p), the
    number of grid points in the cube of half-side R around p, then a uniform grid point g of that
    cube; the proposal probability of g is m(g)/Σ_p C(p) with m(g) the number of remaining points
    whose cube holds g, and g is accepted with probability (e^{s·c_g} − 1)/(m(g)·φ(M̄)),
    φ(x) = (e^{sx} − 1)/x (≤ 1 since c_g ≤ m(g) and c_g ≤ M̄);
  - *partition* (the coarse scales): `GridEM` in its `covered_only` mode (leaf envelope
    |Q|·(e^{s·U_Q} − 1)).
* **T and K** are estimated without bias from `estimate_draws` proposals of the same law
  (T = mass of the envelope × mean acceptance probability; K likewise with weight 1[c ≥ 1]/proposal).
  On a sparse grid (partition regime, no acceptable proposal among `MAX_ESTIMATE_DRAWS`) the envelope
  is first refined as the rejection sampler does until one covered point is accepted (`warmups` in
  the trace), and the estimate is drawn afresh on the finer partition.
* **M** is bracketed: M_lo = the largest exact cover found (estimation proposals; in the partition
  regime also a branch-and-bound refinement of the leaves with the largest bound U until
  s·(max U − M_lo) ≤ `M_TOLERANCE` or `MAX_BOUND_STEPS` refinements), M_hi = M̄ or max U; p uses
  M_lo. The run's `scale_trace` records, per scale, the regime, the smallest and mean p, the number
  of uniform picks and the largest s·(M_hi − M_lo) (the factor e^{that} bounds the error of
  e^{−sM}·T).
* **Uniform branch**: a uniform grid point of the cube [−B_i, B_i]^{d'}, redrawn while it covers a
  remaining point (the authors redraw up to 100 times, then add no centre).

Further differences of the authors' code that are *not* reproduced here (documented in the
algorithm's docstring): their scale ladder (grid side ε·1000/(n√d'), radius 1000/n, both doubled
while the side is ≤ 1: about 7 scales instead of ⌈log₂(2n)⌉ = 17), the early end of a scale once
D' is empty (a data-dependent number of candidates), the data-dependent normalisation of the JL
image, and the fallback centre of NoisyAVG at m̂ ≤ 0.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dpclust.api import DPClustError
from dpclust.nguyen2021.grid_cover import AliveTree, GridEM, log_expm1

#: Proposal regime "points" when s·M̄ is at most this (acceptance ≥ (c/m)·x/(e^x − 1) at x = s·M̄).
POINT_REGIME_MAX = 3.0
#: The estimation sample is sized so that about ACCEPTED_MASS of its proposals would be accepted,
#: within [estimate_draws, MAX_ESTIMATE_DRAWS] (an effort cap: the variance of T̂ is that of a mean of
#: N importance weights).
ACCEPTED_MASS = 2.0
MAX_ESTIMATE_DRAWS = 512
#: Branch-and-bound target on s·(M_hi − M_lo) in the partition regime, and its effort cap per pick.
M_TOLERANCE = 0.05
MAX_BOUND_STEPS = 4000
_BATCH = 16
_SLACK = 1.0 + 1e-9
_QUERY = 1.0 + 1e-6   # tree queries: a superset of every cube/ball member, filtered exactly


#: Odd multipliers of the linear cell hash (collisions only merge cells: the bound stays a bound).
_HASH = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                  0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9],
                 dtype=np.uint64)


def max_cover_bound(P: np.ndarray, R: float, s: float) -> int:
    """An upper bound M̄ ≥ max_g |{p ∈ P : ‖g − p‖ < R}|: a ball of radius R lies in a cube of side
    2R, which meets at most 2^{d'} cells of the grid of side 2R (one 2×…×2 block). First 2^{d'}·(the
    largest cell count); when s times that exceeds POINT_REGIME_MAX, the exact largest block sum."""
    if not len(P):
        return 0
    d = P.shape[1]
    cells = np.floor(P / (2.0 * R)).astype(np.int64)
    mult = np.resize(_HASH, d)
    keys = (cells.astype(np.uint64) * mult).sum(axis=1)          # wraps mod 2^64
    uk, cnt = np.unique(keys, return_counts=True)
    crude = int(2 ** d * cnt.max())
    if s * crude <= POINT_REGIME_MAX:
        return crude
    offsets = np.array(list(itertools.product((0, 1), repeat=d)), dtype=np.uint64)
    anchors = (uk[:, None] - (offsets * mult).sum(axis=1)[None, :]).ravel()   # block anchors of each cell
    _, inv = np.unique(anchors, return_inverse=True)
    return int(np.bincount(inv.ravel(), weights=np.repeat(cnt, offsets.shape[0])).max())


def _phi(s: float, x: float) -> float:
    """(e^{s·x} − 1)/x, increasing in x > 0."""
    return math.expm1(s * x) / x


class AuthorsScale:
    """The authors' sampler at one scale (grid side t, cover radius R, logit s) over the remaining
    points `alive` of `P_all` (updated in place by `pick`)."""

    def __init__(self, P_all: np.ndarray, alive: np.ndarray, t: float, R: float, s: float,
                 index: AliveTree, max_trials: int, estimate_draws: int):
        self.P, self.alive, self.index = P_all, alive, index
        self.t, self.R, self.s = float(t), float(R), float(s)
        self.R2 = self.R * self.R
        self.dprime = P_all.shape[1]
        self.B = int(math.ceil((1.0 + self.R) / self.t))
        self.log_G = self.dprime * math.log(2 * self.B + 1)
        self.max_trials = int(max_trials)
        self.estimate_draws = int(estimate_draws)
        self.M_bar = max_cover_bound(P_all[alive], self.R, self.s)
        self.regime = "points" if self.s * self.M_bar <= POINT_REGIME_MAX else "partition"
        if self.regime == "points":
            self.lo = np.ceil((P_all - self.R * _SLACK) / self.t).astype(np.int64)
            self.hi = np.floor((P_all + self.R * _SLACK) / self.t).astype(np.int64)
            self.C = np.prod((self.hi - self.lo + 1).astype(float), axis=1)
            self.phi_bar = _phi(self.s, max(self.M_bar, 1))
        else:
            self.em = GridEM(P_all, alive, self.t, self.R, self.s, self.max_trials, covered_only=True,
                             index=index)
        self.trace = {"regime": self.regime, "p": [], "uniform_picks": 0, "M_gap": 0.0, "trials": 0}

    # -- exact covers ---------------------------------------------------------------------------
    def _near(self, G: np.ndarray, linf: bool) -> list[np.ndarray]:
        """Alive points within R·(1 + 1e-6) of each row of G (L∞ or L2), as index arrays (a superset
        of the cube and ball members, which the callers filter exactly)."""
        return self.index.near(G, self.R * _QUERY, linf=linf)

    def _cover(self, g: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The points of `idx` strictly within R of the grid point g (Alg. 2's cover)."""
        diff = self.P[idx] - g
        return idx[np.einsum("ij,ij->i", diff, diff) < self.R2]

    # -- proposals of the law ∝ e^{s·c} − 1 -----------------------------------------------------
    def _points_proposals(self, rng: np.random.Generator, m: int):
        """m proposals (points regime): grid indices, exact covers, acceptance probabilities,
        1/(m(g)·φ(M̄)) (the K weight without the mass), and the envelope's mass."""
        live = np.flatnonzero(self.alive)
        cum = np.cumsum(self.C[live])
        mass = float(cum[-1]) * self.phi_bar
        pick = live[np.minimum(np.searchsorted(cum, rng.random(m) * cum[-1], side="right"), live.size - 1)]
        b = rng.integers(self.lo[pick], self.hi[pick] + 1)
        near = self._near(b * self.t, linf=True)
        c = np.empty(m, dtype=np.int64)
        a = np.empty(m)
        kw = np.empty(m)
        for j in range(m):
            idx = near[j]
            inside = idx[np.all((self.lo[idx] <= b[j]) & (b[j] <= self.hi[idx]), axis=1)]
            c[j] = self._cover(b[j] * self.t, inside).size
            denom = inside.size * self.phi_bar
            a[j] = math.expm1(self.s * c[j]) / denom
            kw[j] = 1.0 / denom
            if a[j] > 1.0 + 1e-9:
                raise DPClustError("authors' sampler: proposal bound violated (a bug)")
        return b, c, a, kw, mass

    # -- one pick -------------------------------------------------------------------------------
    def _terms(self, rng: np.random.Generator, m: int):
        """m proposals of the law ∝ e^{s·c} − 1 with their unbiased terms for T and K (in logs),
        exact covers and acceptance probabilities."""
        if self.regime == "points":
            _, c, a, kw, mass = self._points_proposals(rng, m)
            with np.errstate(divide="ignore"):
                log_t = math.log(mass) + np.log(a)
                log_k = np.where(c >= 1, math.log(mass) + np.log(kw), -np.inf)
            return log_t, log_k, c, a
        em = self.em
        log_t, log_k = np.empty(m), np.full(m, -np.inf)
        c_all, a_all = np.empty(m, dtype=np.int64), np.empty(m)
        for j in range(m):
            i, b, c, log_a, log_E = em.trial(rng)
            log_t[j] = log_E + log_a
            if c >= 1:
                log_k[j] = log_E - float(log_expm1(self.s * int(em.U[i])))
            c_all[j], a_all[j] = c, math.exp(log_a)
            if rng.random() >= a_all[j]:  # refine as a rejection would (the next terms stay unbiased)
                em._refine(i)
        return log_t, log_k, c_all, a_all

    def _estimate(self, rng: np.random.Generator):
        """(log T̂, log K̂, M_lo, M_hi) over the remaining points: a pilot of `estimate_draws`
        proposals sizes a fresh sample of N proposals, N ≈ ACCEPTED_MASS / (the pilot's mean
        acceptance) within [`estimate_draws`, MAX_ESTIMATE_DRAWS], whose mean terms are unbiased (a
        sample without one acceptable proposal is redrawn twice as large)."""
        n0 = self.estimate_draws
        _, _, c0, a0 = self._terms(rng, n0)
        M_lo, used = int(c0.max()), n0
        acc = float(a0.mean())
        N = int(min(MAX_ESTIMATE_DRAWS, max(n0, math.ceil(ACCEPTED_MASS / acc) if acc > 0 else MAX_ESTIMATE_DRAWS)))
        while True:
            log_t, log_k, c, a = self._terms(rng, N)
            used += N
            M_lo = max(M_lo, int(c.max()))
            if a.any():
                break
            if N >= MAX_ESTIMATE_DRAWS:
                if self.regime != "partition":
                    raise DPClustError(f"authors' sampler: no covered grid point among {used} proposals at "
                                       f"R = {self.R:.3g}")
                # A sparse grid (few covered points among |G|): the envelope is still too coarse. Refine it
                # the way a rejection sampler does until one covered point is accepted (GridEM.draw, capped
                # by `em_max_trials`), then estimate afresh on the finer partition (terms stay unbiased).
                _, c_warm, warm = self.em.draw(rng)
                used += warm
                M_lo = max(M_lo, int(c_warm))
                self.trace["warmups"] = self.trace.get("warmups", 0) + 1
            N = min(2 * N, MAX_ESTIMATE_DRAWS)
        self.trace["trials"] += used
        log_T = float(np.logaddexp.reduce(log_t)) - math.log(N)
        log_K = (float(np.logaddexp.reduce(log_k)) - math.log(N)) if np.isfinite(log_k).any() else -math.inf
        if self.regime == "points":
            return log_T, log_K, M_lo, self.M_bar
        M_lo, M_hi = self._bound_max(M_lo)
        return log_T, log_K, M_lo, M_hi

    def _bound_max(self, M_lo: int) -> tuple[int, int]:
        """Branch and bound on the partition: refine the leaf with the largest bound U until
        s·(max U − M_lo) ≤ M_TOLERANCE (single grid points get their exact cover as U)."""
        em = self.em
        for _ in range(MAX_BOUND_STEPS):
            U = em.U[:em.L]
            i = int(np.argmax(U))
            if self.s * (int(U[i]) - M_lo) <= M_TOLERANCE:
                break
            mem = em.members[i]
            keep = self.alive[mem]
            live = mem[keep]
            if live.size < mem.size:
                em._add(em.lo[i], em.hi[i], live, em.gap2[i][keep], index=i)
                continue
            if np.array_equal(em.lo[i], em.hi[i]):  # one grid point: its exact cover
                covering = self._cover(em.lo[i] * self.t, live)
                em._add(em.lo[i], em.hi[i], covering, em._box_gap2(em.lo[i], em.hi[i], covering), index=i)
                M_lo = max(M_lo, int(covering.size))
                continue
            em._refine(i)
        return M_lo, int(em.U[:em.L].max())

    def _draw_covered(self, rng: np.random.Generator):
        if self.regime == "partition":
            b, c, trials = self.em.draw(rng)
            self.trace["trials"] += trials
            return b, c
        used = 0
        while used < self.max_trials:
            b, c, a, _, _ = self._points_proposals(rng, _BATCH)
            u = rng.random(_BATCH)
            hit = np.flatnonzero(u < a)
            if hit.size:
                j = int(hit[0])
                self.trace["trials"] += used + j + 1
                return b[j], int(c[j])
            used += _BATCH
        raise DPClustError(f"authors' sampler: no covered grid point accepted after {self.max_trials} trials; "
                           "raise the setting `em_max_trials`")

    def _draw_uncovered(self, rng: np.random.Generator):
        used = 0
        while used < self.max_trials:
            b = rng.integers(-self.B, self.B + 1, size=(_BATCH, self.dprime))
            near = self._near(b * self.t, linf=False)
            for j in range(_BATCH):
                if self._cover(b[j] * self.t, near[j]).size == 0:
                    self.trace["trials"] += used + j + 1
                    return b[j]
            used += _BATCH
        raise DPClustError(f"authors' sampler: no uncovered grid point after {self.max_trials} trials")

    def pick(self, rng: np.random.Generator):
        """One pick: (grid index b, its cover c); covered points leave D' (`alive`)."""
        if self.alive.any():
            log_T, log_K, M_lo, M_hi = self._estimate(rng)
            self.trace["M_gap"] = max(self.trace["M_gap"], self.s * (M_hi - M_lo))
            D = (math.exp(log_T - self.s * M_lo) if log_T > -math.inf else 0.0) - \
                (math.exp(log_K - self.log_G) if log_K > -math.inf else 0.0)
            p = 1.0 if D < 0 else (0.0 if D == 0 else min(max(1.0 - 1.0 / D, 0.0), 1.0))
        else:
            p = 0.0  # no covered grid point: the authors' formula gives −∞
        self.trace["p"].append(p)
        if p > 0 and rng.random() < p:
            b, c = self._draw_covered(rng)
            g = b * self.t
            gone = self.index.cover(g, self.R)
            self.index.remove(gone)
            return b, int(gone.size)
        self.trace["uniform_picks"] += 1
        return self._draw_uncovered(rng), 0

    def summary(self) -> dict:
        p = self.trace["p"]
        return {"regime": self.regime, "p_min": float(min(p)) if p else None,
                "p_mean": float(np.mean(p)) if p else None, "uniform_picks": int(self.trace["uniform_picks"]),
                "M_gap": float(self.trace["M_gap"]), "M_bar": int(self.M_bar)}


def authors_grid_cover(P_all: np.ndarray, alive: np.ndarray, t: float, r: float, rounds: int,
                       logit_scale: float, rng: np.random.Generator, index: AliveTree, max_trials: int,
                       estimate_draws: int):
    """Algorithm 2 for one scale with the authors' sampler (see the module docstring): returns
    (centres (rounds, d') in D'-space, per-pick cover counts, trials, per-scale summary)."""
    R = r + t * math.sqrt(P_all.shape[1])
    scale = AuthorsScale(P_all, alive, t, R, logit_scale, index, max_trials, estimate_draws)
    centres = np.empty((rounds, P_all.shape[1]))
    counts = np.empty(rounds, dtype=np.int64)
    for j in range(rounds):
        b, c = scale.pick(rng)
        centres[j] = b * t
        counts[j] = c
    return (centres, counts, int(scale.trace["trials"]),
            scale.summary() | {"warmups": int(scale.trace.get("warmups", 0))})
