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

from dpclust import mechanisms
from dpclust.api import DPClustError


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


class AliveTree:
    """A k-d tree over the remaining points of D' (`alive`): exact strict covers {p alive :
    ‖g − p‖ < R} of grid points in O(log n + cover) instead of a scan of a leaf's members. Points
    leave only through `remove` (the only way once a `GridEM` shares the index: its leaves re-filter
    their members only when `version` changed). The tree keeps the points that have left until they
    are more than `REBUILD_DEAD_FRACTION` of those it holds (then it is built again over the alive
    ones); queries drop them, so every answer is the same sorted set of alive indices as a tree of
    the alive points alone would give. Queries use radius R·(1 + 1e-9) (a superset) and then the
    exact strict test in float64, so a cover is the same set whichever way it is counted."""

    #: Rebuild when the points that have left exceed this fraction of the tree (speed only: between
    #: rebuilds queries filter them out). Against a rebuild after every covered pick, the authors'
    #: sampler runs 1.45x faster on Balcan et al.'s synthetic set, 1.22x on MNIST, 1.24x on Shuttle
    #: (benchmarks/bench_against_previous.py, same records).
    REBUILD_DEAD_FRACTION = 0.5

    def __init__(self, P_all: np.ndarray, alive: np.ndarray):
        self.P, self.alive = P_all, alive
        self.version = 1
        self.rebuilds = 0
        self._build()

    def _build(self) -> None:
        self.idx = np.flatnonzero(self.alive)
        self.dead = 0   # points of the tree that have left
        from scipy.spatial import cKDTree  # imported here: planning imports this module, and scipy.spatial takes 0.5 s

        self.tree = cKDTree(self.P[self.idx]) if self.idx.size else None
        self.rebuilds += 1

    def near(self, G: np.ndarray, radius: float, linf: bool = False) -> list[np.ndarray]:
        """Alive points within `radius` (L2, or L∞) of each row of G, as sorted global index arrays
        (the tree's own ≤ test: callers filter exactly)."""
        G = np.atleast_2d(G)
        if self.tree is None:
            return [np.empty(0, dtype=np.int64) for _ in range(G.shape[0])]
        lists = self.tree.query_ball_point(G, radius, p=np.inf if linf else 2.0, return_sorted=True)
        out = [self.idx[np.asarray(ix, dtype=np.int64)] for ix in lists]
        if self.dead:
            out = [ix[self.alive[ix]] for ix in out]
        return out

    def count(self, g: np.ndarray, R: float) -> int:
        """|{p alive : ‖g − p‖ < R}|: the tree's counts at R·(1 − 1e-12) and R·(1 + 1e-9) agree
        unless a point lies in that thin shell, where the exact strict test decides (with points
        that have left still in the tree, the exact test always decides)."""
        if self.tree is None:
            return 0
        if self.dead:
            return int(self.cover(g, R).size)
        inner, outer = self.tree.query_ball_point(np.stack([g, g]), [R * (1.0 - 1e-12), R * (1.0 + 1e-9)],
                                                  return_length=True)
        if inner == outer:
            return int(inner)
        return int(self.cover(g, R).size)

    def cover(self, g: np.ndarray, R: float) -> np.ndarray:
        """Global indices of the alive points strictly within R of g (sorted)."""
        cand = self.near(g, R * (1.0 + 1e-9))[0]
        diff = self.P[cand] - g
        return cand[np.einsum("ij,ij->i", diff, diff) < R * R]

    def remove(self, gone: np.ndarray) -> None:
        """Points `gone` (alive, distinct) leave D'."""
        if gone.size:
            self.alive[gone] = False
            self.version += 1
            self.dead += int(gone.size)
            if self.dead > self.REBUILD_DEAD_FRACTION * self.idx.size:
                self._build()


class _SumTree:
    """Leaf weights exp(log m_i − ref) in a Fenwick tree: O(log L) updates, totals and draws ∝
    weight (used by `GridEM` in its `covered_only` mode, whose number of leaves grows with every
    estimation proposal). `ref` is the largest log mass at the last rebuild (rebuilt when a new one
    exceeds it by 600, so no weight overflows, and when the total falls below 10^-6 of its peak, so
    the prefix sums keep their relative precision after large weights are replaced); a weight
    below e^{-745} of the largest is 0 in float64."""

    def __init__(self, cap: int):
        self.logm = np.full(cap, -np.inf)
        self.ref = 0.0
        self.n = cap
        self.tree = np.zeros(cap + 1)
        self.w = np.zeros(cap)
        self.peak = 0.0

    def _rebuild(self, cap: int) -> None:
        finite = self.logm[np.isfinite(self.logm)]
        self.ref = float(finite.max()) if finite.size else 0.0
        if cap > self.n:
            self.logm = np.concatenate([self.logm, np.full(cap - self.n, -np.inf)])
            self.n = cap
        with np.errstate(under="ignore"):
            self.w = np.exp(self.logm - self.ref)
        prefix = np.concatenate([[0.0], np.cumsum(self.w)])
        idx = np.arange(1, self.n + 1)
        tree = np.zeros(self.n + 1)
        tree[1:] = prefix[idx] - prefix[idx - (idx & -idx)]   # node i sums w over (i − lowbit(i), i]
        self.tree = tree
        self.peak = float(self.w.sum())

    def set(self, i: int, logm: float) -> None:
        if i >= self.n:
            self._rebuild(max(2 * self.n, i + 1))
        self.logm[i] = logm
        if logm > self.ref + 600.0:
            self._rebuild(self.n)
            return
        with np.errstate(under="ignore"):
            new = math.exp(logm - self.ref) if logm > -math.inf else 0.0
        delta = new - self.w[i]
        self.w[i] = new
        j = i + 1
        while j <= self.n:
            self.tree[j] += delta
            j += j & -j
        tot = self.total()
        self.peak = max(self.peak, tot)
        if tot < 1e-6 * self.peak:  # the sums lost their precision to removed large weights
            self._rebuild(self.n)

    def total(self) -> float:
        """Σ weights, from the tree in O(log L)."""
        tot, j = 0.0, self.n
        while j > 0:
            tot += self.tree[j]
            j -= j & -j
        return tot

    def find(self, u: float) -> int:
        """The leaf i with prefix(i) ≤ u < prefix(i + 1) (u in [0, total))."""
        pos, step = 0, 1 << (self.n.bit_length())
        while step:
            nxt = pos + step
            if nxt <= self.n and self.tree[nxt] <= u:
                pos = nxt
                u -= self.tree[nxt]
            step >>= 1
        return min(pos, self.n - 1)


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
                 max_trials: int, covered_only: bool = False, index: AliveTree | None = None):
        self.covered_only = bool(covered_only)
        self.P = P_all
        self.alive = alive
        self.index = index if index is not None else AliveTree(P_all, alive)
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
        self.stamp = np.zeros(cap, dtype=np.int64)   # index.version when the leaf's members were set
        self._sum = _SumTree(cap) if self.covered_only else None
        self.members: list[np.ndarray] = []
        self.gap2: list[np.ndarray] = []   # squared distance of each member to its leaf's box
        self.L = 0
        lo, hi = np.full(d, -self.B), np.full(d, self.B)
        live = np.flatnonzero(alive)
        self._add(lo, hi, live, self._box_gap2(lo, hi, live))

    @property
    def log_grid_size(self) -> float:
        return self.dprime * math.log(2 * self.B + 1)

    def _box_gap2(self, lo, hi, idx) -> np.ndarray:
        """Squared distance of the points `idx` to the box t·[lo, hi]."""
        Pc = self.P[idx]
        gap = lo * self.t - Pc                # per-coordinate distance to the box (0 inside)
        np.maximum(gap, Pc - hi * self.t, out=gap)
        np.maximum(gap, 0.0, out=gap)
        return np.einsum("ij,ij->i", gap, gap)

    def _add(self, lo, hi, members, gap2, index=None):
        if index is None:
            if self.L == self.lo.shape[0]:
                for name in ("lo", "hi", "U", "logsize", "stamp"):
                    arr = getattr(self, name)
                    setattr(self, name, np.concatenate([arr, np.empty_like(arr)]))
            index = self.L
            self.L += 1
            self.members.append(members)
            self.gap2.append(gap2)
        else:
            self.members[index] = members
            self.gap2[index] = gap2
        self.lo[index] = lo
        self.hi[index] = hi
        self.U[index] = members.size
        self.stamp[index] = self.index.version
        self.logsize[index] = float(np.log(hi - lo + 1).sum())
        if self.covered_only:
            self._sum.set(index, self.logsize[index] + float(log_expm1(self.s * members.size)))

    def _split_members(self, lo, hi, ax, mid, candidates, gap2):
        """Members of the two halves of box [lo, hi] cut after index `mid` on axis `ax`: candidates
        p with dist(p, half) < R, from the parent's squared distances `gap2` by replacing the
        split axis's term. The test is loosened by a relative 1e-9 on R² so that rounding can only
        add members (a superset keeps U an upper bound)."""
        x = self.P[candidates, ax]
        below = lo[ax] * self.t - x              # (each side's distance is formed once, as before twice)
        above = x - hi[ax] * self.t
        g = np.maximum(np.maximum(below, above), 0.0)
        other = gap2 - g * g
        np.maximum(other, 0.0, out=other)
        ga = np.maximum(np.maximum(below, x - mid * self.t), 0.0)
        gb = np.maximum(np.maximum((mid + 1) * self.t - x, above), 0.0)
        ga *= ga
        gb *= gb
        ga += other
        gb += other
        keep_a, keep_b = ga < self.R2_loose, gb < self.R2_loose
        return candidates[keep_a], ga[keep_a], candidates[keep_b], gb[keep_b]

    def _refine(self, i):
        mem = self.members[i]
        keep = self.alive[mem]
        live = mem[keep]
        if live.size < mem.size:  # points removed by earlier picks: tighten the bound
            self._add(self.lo[i], self.hi[i], live, self.gap2[i][keep], index=i)
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
        mem_a, g_a, mem_b, g_b = self._split_members(lo, hi, ax, mid, live, self.gap2[i])
        self._add(lo, hi_a, mem_a, g_a, index=i)
        self._add(lo_b, hi, mem_b, g_b)

    def log_masses(self) -> np.ndarray:
        """log of every leaf's envelope mass: |Q|·e^{s·U_Q} (the exponential mechanism's law), or
        |Q|·(e^{s·U_Q} − 1) with `covered_only` (the law ∝ e^{s·c} − 1 on the covered grid points;
        a leaf without alive members then has mass 0)."""
        L = self.L
        if not self.covered_only:
            return self.logsize[:L] + self.s * self.U[:L]
        return self.logsize[:L] + log_expm1(self.s * self.U[:L])

    def cover_in_leaf(self, i: int, b: np.ndarray) -> int:
        """Exact cover count of grid point t·b (b in leaf i) over the alive points (0 without
        members: cover[g] ⊆ members(Q))."""
        mem = self.members[i]
        if not mem.size:
            return 0
        if self.stamp[i] != self.index.version:  # points left D' since the leaf was built
            mem = mem[self.alive[mem]]
        diff = self.P[mem] - b * self.t
        return int(np.count_nonzero(np.einsum("ij,ij->i", diff, diff) < self.R2))

    def log_accept(self, c: int, U: int) -> float:
        """log of the acceptance probability of a grid point with cover c proposed from a leaf with
        bound U: e^{s(c − U)}, or (e^{s·c} − 1)/(e^{s·U} − 1) with `covered_only`."""
        if not self.covered_only:
            return self.s * (c - U)
        if c == 0:
            return -math.inf
        return float(log_expm1(self.s * c) - log_expm1(self.s * U))

    def trial(self, rng: np.random.Generator):
        """One proposal (`covered_only` mode): (leaf, grid index b, exact cover c, log acceptance
        probability, log of the envelope's total mass). The proposal law of b is (leaf mass)/(total
        mass)·1/|leaf|; the leaf is drawn from the cached masses in O(log L)."""
        if not self.covered_only:
            raise DPClustError("GridEM.trial is the covered_only proposal (the paper's law uses draw)")
        tot = self._sum.total()
        if not tot > 0:
            raise DPClustError("GridEM: no covered grid point (every leaf has mass 0)")
        i = self._sum.find(rng.random() * tot)
        while self._sum.w[i] <= 0:  # rounding at a boundary of the prefix sums: redraw
            i = self._sum.find(rng.random() * tot)
        b = rng.integers(self.lo[i], self.hi[i] + 1)
        c = self.cover_in_leaf(i, b)
        return i, b, c, self.log_accept(c, int(self.U[i])), self._sum.ref + math.log(tot)

    def _accepts(self, i: int, b: np.ndarray, log_u: float) -> bool:
        """Whether e^{s(c_b − U)} > u, i.e. c_b > U + log(u)/s, deciding from the leaf's members
        in chunks: stop as soon as the hits seen exceed that need, or the members left cannot
        reach it (the decision equals the one from the full count)."""
        U = int(self.U[i])
        need = U + log_u / self.s
        if need < 0:
            return True
        mem = self.members[i]
        if self.stamp[i] != self.index.version:
            mem = mem[self.alive[mem]]
        g = b * self.t
        hits, left, start, step = 0, mem.size, 0, 1024
        while start < mem.size:
            chunk = mem[start:start + step]
            diff = self.P[chunk] - g
            h = int(np.count_nonzero(np.einsum("ij,ij->i", diff, diff) < self.R2))
            hits += h
            left -= chunk.size
            if hits > need:
                return True
            if hits + left <= need:
                return False
            start += step
            step *= 2
        return hits > need

    def draw(self, rng: np.random.Generator):
        """One exact draw: (grid index vector b, cover count c_b over the alive points, trials)."""
        if self.covered_only:
            for trial in range(1, self.max_trials + 1):
                i, b, c, log_a, _ = self.trial(rng)
                if math.log(rng.random()) < log_a:
                    return b, c, trial
                self._refine(i)
        else:
            for trial in range(1, self.max_trials + 1):
                i = mechanisms.sample_from_log_weights(self.log_masses(), rng)  # Gumbel-max: the same draw
                b = rng.integers(self.lo[i], self.hi[i] + 1)
                if self._accepts(i, b, math.log(rng.random())):
                    return b, self.cover_in_leaf(i, b), trial
                self._refine(i)
        raise DPClustError(
            f"Algorithm 2: no grid point accepted after {self.max_trials} trials at R = {self.R:.3g}; "
            "raise the setting `em_max_trials`")


def log_expm1(x):
    """log(e^x − 1) for x ≥ 0, stable for large x; −inf at 0 (vectorised). A scalar takes the same
    NumPy loops on one element without the array bookkeeping (the samplers call it per trial)."""
    if isinstance(x, (float, int, np.floating, np.integer)):
        v = np.float64(x)
        if v > 30.0:
            return float(v + np.log1p(-np.exp(-v)))
        if v == 0.0:
            return -math.inf
        return float(np.log(np.expm1(v)))
    x = np.asarray(x, dtype=float)
    flat = np.atleast_1d(x)
    out = np.empty_like(flat)
    big = flat > 30.0
    out[big] = flat[big] + np.log1p(-np.exp(-flat[big]))
    with np.errstate(divide="ignore"):
        out[~big] = np.log(np.expm1(flat[~big]))
    return out.reshape(x.shape) if x.ndim else float(out[0])


def private_grid_cover(P_all: np.ndarray, alive: np.ndarray, t: float, r: float, rounds: int,
                       logit_scale: float, rng: np.random.Generator, max_trials: int = 200_000,
                       index: AliveTree | None = None):
    """Algorithm 2 for one scale: `rounds` = k' exponential-mechanism picks over G_i.

    `alive` (bool, n) marks the points of D' not yet covered; it is updated in place (D' is
    "passed by reference"); `index` is the k-d tree over it (`AliveTree`, shared across the scales
    of a run; built here when not given). Returns (centres (rounds, d') in D'-space, per-pick cover
    counts, trials used, leaves of the final partition). The privacy cost is accounted by the caller for
    all calls together (Lemma 17).
    """
    R = r + t * math.sqrt(P_all.shape[1])
    index = index if index is not None else AliveTree(P_all, alive)
    em = GridEM(P_all, alive, t, R, logit_scale, max_trials, index=index)
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
            index.remove(index.cover(g, R))
    return centres, counts, trials, em.L
