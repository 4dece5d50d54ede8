"""Algorithm 2 of Nguyen, Chaturvedi & Xu (AAAI 2021): private grid set cover, with the offsets
V_i of Lemma 7 and an exact sampler for the exponential mechanism over the whole grid (Lemma 8).

One call (scale i) repeats k' times: every grid point g ∈ G_i = t_i·Z^{d'} (restricted to the cube
that can reach the unit ball) is drawn with probability

    P(g) ∝ exp(s · |cover[g]|),   cover[g] = {p ∈ D' (remaining) : ‖g − p‖ < R_i},
    s = ε_E / 2 (`mechanisms.exponential_logit_scale(1, ε_E)`: the cover size has sensitivity 1),
    R_i = r_i + t_i·√d'   (Alg. 2),

then the points of cover[g] are removed from D' (D' is passed by reference across the calls).

Offsets (Lemma 7). A grid point t·b can cover p only if b = ⌊p⌋ + s + (2s − 1)v with s ∈ {0,1}^{d'},
v ∈ V = {v ∈ N^{d'} : Σ v_j² < (R/t)²}; per coordinate b_j − ⌊p⌋_j ∈ {−v_j, 1 + v_j}, whose distance
to the unit interval [0, 1] is v_j. `lemma7_offsets` enumerates this set W once per ratio R/t (the
ratio is the same at every scale). The sampler below does not need W; the tests use it as the
reference enumeration of the grid points that can cover a point.

Exact sampling (Lemma 8, without listing the covered grid points). Lemma 8 writes P as a mixture
of the uniform law on G_i and a law on the polynomially many covered grid points. Here the grid has
up to ~10^26 points and the covered ones number ~n·|W| (|W| = 24,736 offsets for d' = 5, α = 1,
so ≈ 10^9 incidences for n = 5·10^4), too many to enumerate in seconds; `GridEM` therefore samples
the same law P exactly by adaptive rejection sampling on a k-d partition of the grid's index cube
[−B_i, B_i]^{d'}:

* every leaf Q (a box of grid indices) stores its *members*, the points p with dist(p, Q) < R; for
  every g ∈ Q, cover[g] ⊆ members(Q), so U_Q = #alive members bounds every c_g in Q and
  M_Q = |Q|·exp(s·U_Q) bounds Q's target mass Σ_{g∈Q} exp(s·c_g);
* a trial draws a leaf with probability M_Q/Σ M (Gumbel-max over log M_Q, in log space), a uniform
  g ∈ Q and accepts it with probability exp(s·(c_g − U_Q)), c_g counted exactly over Q's members;
  so g is proposed with probability ∝ exp(s·U_Q) and accepted ∝ exp(s·c_g)/exp(s·U_Q): every
  accepted g has law exactly P;
* after a rejection the envelope is tightened (members removed by earlier picks are dropped, or the
  leaf is halved along its longest side). Adapting the envelope only after rejections keeps each
  accepted draw exact (adaptive rejection sampling, Gilks & Wild 1992).

Leaves without members hold uncovered grid points only: they are the "uniform on the uncovered grid"
part of Lemma 8 (weight exp(0) = 1 per grid point) and always accept. Every random number comes from
the passed Generator, so the output is a deterministic function of the seed. A call that needs more
than `max_trials` trials raises `DPClustError` (never a silent approximation). The test suite checks
the sampler against brute-force enumeration of the whole grid (chi-square) and audits one call on
neighbouring datasets.

`lemma7_offsets` enumerates the paper's offset set (used by the tests as the reference enumeration
of the grid points that can cover a point).

Interpretations:
1. G_i is the grid t_i·b with b ∈ {−B_i..B_i}^{d'}, B_i = ⌈(1 + R_i)/t_i⌉: a centred cube of grid
   points containing every grid point within R_i of the unit ball (where D' lies); the uniform part
   of the mechanism is uniform on this cube (the authors' code: [−1/r, 1/r]^{d'}).
2. Cover is strict (‖g − p‖ < R_i) as in Alg. 2; c_g uses squared differences in float64; the
   member test is loosened by a relative 1e-9 so rounding can only add members (U stays a bound).
3. A drawn grid point is added to C_i whether or not it covers anything (Alg. 2 adds g after
   either branch); the number of rounds is fixed in advance (never data-dependent).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..api import DPClustError


def lemma7_offsets(dprime: int, ratio: float) -> np.ndarray:
    """Integer offsets w = s + (2s − 1)v (Lemma 7) of the grid points that can be within
    distance `ratio` (in grid units) of a point whose floor cell is 0: all w ∈ Z^{d'} with
    Σ_j dist(w_j, [0, 1])² < ratio²; shape (|W|, d'), |W| = 2^{d'}·|V|."""
    if dprime < 1 or not (math.isfinite(ratio) and ratio > 0):
        raise DPClustError(f"lemma7_offsets needs d' >= 1 and ratio > 0, got {dprime}, {ratio}")
    r2 = ratio * ratio
    vmax = int(math.ceil(ratio))
    # V = {v in N^{d'} : sum v^2 < ratio^2}, built dimension by dimension (pruned by the partial sum)
    V = np.zeros((1, 0), dtype=np.int64)
    for _ in range(dprime):
        vals = np.arange(vmax + 1, dtype=np.int64)
        part = (V * V).sum(axis=1)
        cand = np.repeat(V, vals.size, axis=0)
        newcol = np.tile(vals, V.shape[0])
        keep = part.repeat(vals.size) + newcol * newcol < r2
        V = np.concatenate([cand[keep], newcol[keep, None]], axis=1)
    signs = np.array(list(itertools.product((0, 1), repeat=dprime)), dtype=np.int64)  # s
    # w = s + (2s - 1) v  for every (s, v)
    W = signs[:, None, :] + (2 * signs[:, None, :] - 1) * V[None, :, :]
    return W.reshape(-1, dprime)


class GridEM:
    """Exact exponential-mechanism sampler over one grid G_i by adaptive rejection sampling on a
    k-d partition of the grid's index cube (see the module docstring).

    Every leaf Q (a box of grid indices) stores the points p with dist(p, Q) < R (its *members*);
    U_Q = number of alive members ≥ c_g for every g ∈ Q, so |Q|·e^{s·U_Q} bounds Q's target mass.
    A trial draws a leaf ∝ |Q|·e^{s·U_Q} (Gumbel-max in log space), a uniform g ∈ Q, counts c_g over
    Q's alive members and accepts with probability e^{s(c_g − U_Q)}. A rejection tightens the
    envelope (drops removed members, or halves Q along its longest side). Leaves without members
    carry the uniform mass of the uncovered grid points (Lemma 8) and always accept.
    """

    def __init__(self, P_all: np.ndarray, alive: np.ndarray, t: float, R: float, logit_scale: float,
                 max_trials: int):
        self.P = P_all
        self.alive = alive
        self.t = float(t)
        self.R = float(R)
        self.R2 = self.R * self.R
        self.R2_loose = self.R2 * (1.0 + 1e-9)
        self.dprime = P_all.shape[1]
        self.B = int(math.ceil((1.0 + self.R) / self.t))
        self.s = float(logit_scale)
        self.max_trials = int(max_trials)
        d = self.dprime
        cap = 1024
        self.lo = np.empty((cap, d), dtype=np.int64)
        self.hi = np.empty((cap, d), dtype=np.int64)
        self.U = np.zeros(cap, dtype=np.int64)
        self.logsize = np.zeros(cap)
        self.members: list[np.ndarray] = []
        self.L = 0
        self._add(np.full(d, -self.B), np.full(d, self.B), np.flatnonzero(alive))

    @property
    def log_grid_size(self) -> float:
        return self.dprime * math.log(2 * self.B + 1)

    def _add(self, lo, hi, members, index=None):
        if index is None:
            if self.L == self.lo.shape[0]:
                for name in ("lo", "hi", "U", "logsize"):
                    arr = getattr(self, name)
                    setattr(self, name, np.concatenate([arr, np.empty_like(arr)]))
            index = self.L
            self.L += 1
            self.members.append(members)
        else:
            self.members[index] = members
        self.lo[index] = lo
        self.hi[index] = hi
        self.U[index] = members.size
        self.logsize[index] = float(np.log(hi - lo + 1).sum())

    def _split_members(self, lo, hi, ax, mid, candidates):
        """Members of the two halves of box [lo, hi] cut after index `mid` on axis `ax`: candidates
        p with dist(p, half) < R. The test is loosened by a relative 1e-9 on R² so that rounding
        can only add members (a superset keeps U an upper bound)."""
        Pc = self.P[candidates]
        lo_t, hi_t = lo * self.t, hi * self.t
        gap = np.clip(Pc, lo_t, hi_t)
        gap -= Pc
        gap *= gap
        other = np.einsum("ij->i", gap)
        other -= gap[:, ax]
        np.maximum(other, 0.0, out=other)
        x = Pc[:, ax]
        ga = np.clip(x, lo_t[ax], mid * self.t) - x
        gb = np.clip(x, (mid + 1) * self.t, hi_t[ax]) - x
        ga *= ga
        gb *= gb
        ga += other
        gb += other
        return candidates[ga < self.R2_loose], candidates[gb < self.R2_loose]

    def _refine(self, i):
        mem = self.members[i]
        live = mem[self.alive[mem]]
        if live.size < mem.size:  # points removed by earlier picks: tighten the bound
            self._add(self.lo[i], self.hi[i], live, index=i)
            return
        lo, hi = self.lo[i].copy(), self.hi[i].copy()
        width = hi - lo
        ax = int(np.argmax(width))
        if width[ax] == 0:
            return  # a single grid point: its bound is already exact
        mid = lo[ax] + width[ax] // 2
        hi_a, lo_b = hi.copy(), lo.copy()
        hi_a[ax] = mid
        lo_b[ax] = mid + 1
        mem_a, mem_b = self._split_members(lo, hi, ax, mid, live)
        self._add(lo, hi_a, mem_a, index=i)
        self._add(lo_b, hi, mem_b)

    def draw(self, rng: np.random.Generator):
        """One exact draw: (grid index vector b, cover count c_b over the alive points, trials)."""
        for trial in range(1, self.max_trials + 1):
            L = self.L
            logm = self.logsize[:L] + self.s * self.U[:L]
            i = int(np.argmax(logm + rng.gumbel(size=L)))
            b = rng.integers(self.lo[i], self.hi[i] + 1)
            u = rng.random()
            mem = self.members[i]
            if mem.size:
                mem = mem[self.alive[mem]]
                diff = self.P[mem] - b * self.t
                c = int(np.count_nonzero(np.einsum("ij,ij->i", diff, diff) < self.R2))
            else:
                c = 0
            if math.log(u) < self.s * (c - int(self.U[i])):
                return b, c, trial
            self._refine(i)
        raise DPClustError(
            f"Algorithm 2: no grid point accepted after {self.max_trials} trials at R = {self.R:.3g}; "
            "raise the setting `em_max_trials`")


def private_grid_cover(P_all: np.ndarray, alive: np.ndarray, t: float, r: float, rounds: int,
                       logit_scale: float, rng: np.random.Generator, max_trials: int = 200_000):
    """Algorithm 2 for one scale: `rounds` = k' exponential-mechanism picks over G_i.

    `alive` (bool, n) marks the points of D' not yet covered; it is updated in place (D' is
    "passed by reference"). Returns (centres (rounds, d') in D'-space, per-pick cover counts,
    trials used, leaves of the final partition). The privacy cost is accounted by the caller for
    all calls together (Lemma 17).
    """
    R = r + t * math.sqrt(P_all.shape[1])
    em = GridEM(P_all, alive, t, R, logit_scale, max_trials)
    centres = np.empty((rounds, P_all.shape[1]))
    counts = np.empty(rounds, dtype=np.int64)
    trials = 0
    for j in range(rounds):
        b, c, used = em.draw(rng)
        trials += used
        g = b * t
        centres[j] = g
        counts[j] = c
        if c:
            live = np.flatnonzero(alive)
            diff = P_all[live] - g
            alive[live[np.einsum("ij,ij->i", diff, diff) < em.R2]] = False
    return centres, counts, trials, em.L
