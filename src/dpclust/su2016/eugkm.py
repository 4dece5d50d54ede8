"""EUGkM (Su et al. 2016 §4.2 and §4.2.1, Eq. 4): k-means on an extended-uniform-grid synopsis.

Synopsis (§4.2): the public box [lo, hi]^d is cut into a uniform grid of m^d cells and EVERY cell
releases its count plus Lap(1/ε) (a count histogram has L1 sensitivity 1 under add/remove, §4.2.1).
The number of cells follows Eq. (4): M = (Nε/θ)^{2d/(2+d)} with θ = `theta` (STATED "θ = 10 works
well"); m cells per dimension with `cells_rounding` (MISSING→REC ``round_log``: the m whose total
m^d is nearest to M on a log scale; the inventory's ``ceil`` is available but inflates the total by
up to (1 + M^{-1/d})^d — 27× at d = 10, ε = 0.1, N = 10^4 — far from Eq. 4's M). Noisy counts are
kept unrounded — negative values allowed — and used as weights of the cell centres in Lloyd's
update (§4.2: "its contribution to the centroid is c × ñ"; "cells who have negative noisy count can
'cancel out' the effect of other cells with positive noise"); a cluster whose total weight is ≤ 0
keeps its centre and centres are clipped to the box (REC; the paper does not say). Lloyd runs from
each of `n_init_sets` (STATED 30) sphere-packing initialisations — the same sets as DPLloyd's when
the runner passes its shared pool (§5.1) — until no centre moves more than `lloyd_tol` or
`lloyd_max_iter` iterations (MISSING→REC; the paper says "until converge"), and the result with the
lowest NICV *measured on the synopsis* is returned (§5.1) — a post-processing of the synopsis.

Every cell, exactly (no threshold, no sampling)
-----------------------------------------------
The released synopsis is the full vector of M_tot = m^d noisy counts in grid order: one Laplace
mechanism on the whole count histogram (empty cells included: their released value is pure
Lap(1/ε) noise), and the weighted Lloyd uses every cell's noisy count. Nothing is thresholded,
sampled or merged, so the released synopsis and centres have exactly the paper's distribution. (An
earlier version kept only ~5,000 cells — those with |ñ| above a threshold — "for speed"; that
post-processing dropped most of the empty cells' noise and made EUGkM better than the paper's
mechanism in high d: Adult-num ε = 1, 0.2383 vs 0.2421.) Speed comes from the computation, not from
the mechanism: the cell centres are never materialised. With the cell index split as (u, v) — u
the first ⌊d/2⌋ coordinates, v the rest — every coordinate of a cell centre depends on u or on v
only, so ‖x − c_j‖² = a[u, j] + b[v, j] (the two halves' squared distances, float64), and one
compiled pass over the cells in grid order (`_label_and_sum`) gives each cell its nearest centre —
the first j minimising a + b, exact float64 labels that depend on neither float32 rounding nor a
BLAS's tiling — and adds its noisy count to its cluster's row sum R[u, j] and column sum C[v, j],
from which every count and coordinate sum of §4.2's update follows exactly, and to the weighted cost
Σ ñ·min_j ‖x − c_j‖² (`_GridLayout`). The pass is a numba loop because fusing labels and sums costs
about m^d × k additions and comparisons a step, where array code needs a GEMM of m^d × k × d, an
argmin and two bincounts over m^d-long arrays (0.13–0.21 of their time, `benchmarks/bench_eugkm.py`);
it is compiled on first use and cached on disk (importing this module does not import numba). On a
noise-dominated synopsis the weighted Lloyd does not settle (the empty cells' noise keeps moving
the centres), so most sets run all `lloyd_max_iter` steps: the cost is about n_init_sets ×
lloyd_max_iter × m^d × k, e.g. ≈ 0.5 s CPU for d = 10, N = 10^4, ε = 1, k = 10 (3^10 = 59,049 cells;
`benchmarks/su2016_eugkm.py`) and ≈ 7 s for the 4^10 ≈ 10^6 cells of d = 10 at θ = 5 or ε = 2.
Grids above `max_grid_cells` (REC, memory) are refused (`dpclust.api.Refused`: the workflow's run
record says `refused`, with the grid) rather than approximated; e.g. Shuttle (d = 9) at ε = 3 asks
for 6^9 ≈ 10^7 cells (measured: 0.46 GB peak, 53 s CPU a run at k = 5).

Neighbouring relation: add/remove one tuple (§3.1), under which the cell-count histogram has L1
sensitivity 1 (§4.2.1), with N a public parameter: the grid size m follows N through Eq. 4 and is
the same for both neighbours (the paper's "N is public"). `public_n` gives that N; unset, it is the
data's size (the papers' experiments), and then neighbours of different sizes can get different
grids: the privacy audit showed the size leaking that way (design line_sums, n = 20 vs 21,
`dpclust.blocks.public_size`). Under replace-one (two datasets of the same public size differing
in one tuple) one tuple leaves one cell and enters another, so the
histogram has L1 sensitivity 2 and the same noise gives 2ε-DP; the paper's ε is the add/remove one
(see `guarantees.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpclust import mechanisms as mech
from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, Refused, data_bounds, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.blocks.public_size import PUBLIC_N, public_size
from dpclust.compiled import kernel
from dpclust.settings import Interval, Options, Setting, Settings, declared
from dpclust.su2016.common import INIT_SETTINGS, init_set_seeds, initial_centers
from dpclust.su2016.guarantees import EUGKM as EUGKM_GUARANTEE

SETTINGS = Settings(
    theta=Setting(10.0, "STATED §4.2.1/§5.1 'Setting θ = 10 ... works well' (θ of Eq. 4)",
                  Interval(float, 0, open_lo=True)),
    cells_rounding=Setting("round_log", "MISSING→REC cells per dimension m with m^d nearest to Eq. 4's M on a "
                           "log scale; the inventory's 'ceil' inflates M up to 27x at d = 10",
                           Options("round_log", "ceil", "round", "floor")),
    max_grid_cells=Setting(2 ** 23, "REC memory guard: a grid of more cells is refused with one clear error "
                           "(never approximated); the config's largest grid is 4^10 = 10^6 cells",
                           Interval(int, 1)),
    public_n=PUBLIC_N,
    n_init_sets=Setting(30, "STATED §5.1 Lloyd on the synopsis from 30 initial sets, best NICV on the synopsis",
                        Interval(int, 1)),
    lloyd_max_iter=Setting(30, "MISSING→REC §6.4 'runs k-means clustering until converge': iteration cap",
                           Interval(int, 1)),
    lloyd_tol=Setting(1.0e-4, "MISSING→REC convergence: no centre moves more than this (domain width 2)",
                      Interval(float, 0)),
    **INIT_SETTINGS.extend(init=Setting(
        "sphere_packing", "STATED §5.1 'the same 30 sets of initial centroids as those generated for the DPLloyd "
        "method' (sphere packing); must be data independent", Options("sphere_packing"))),
)


def grid_cells(n: int, epsilon: float, d: int, theta: float, rounding: str = "ceil") -> tuple[float, int]:
    """(M of Eq. 4, cells per dimension m)."""
    if theta <= 0:
        raise DPClustError("theta must be > 0")
    M = (n * epsilon / theta) ** (2.0 * d / (2.0 + d))
    root = M ** (1.0 / d)
    if rounding == "round_log":   # the m whose m^d is nearest to M on a log scale
        lo_m = max(1, math.floor(root))
        m = lo_m if root <= math.sqrt(lo_m * (lo_m + 1)) else lo_m + 1
        return M, max(1, m)
    fn = {"ceil": math.ceil, "round": round, "floor": math.floor}.get(rounding)
    if fn is None:
        raise DPClustError(f"unknown cells_rounding {rounding!r}: round_log, ceil, round or floor")
    return M, max(1, int(fn(root - 1e-12 if rounding == "ceil" else root)))


@dataclass(frozen=True)
class Grid:
    """The public uniform grid: m cells per dimension over [lo, lo + m·width]^d, cells numbered in
    row-major order (the first coordinate most significant)."""

    m: int
    d: int
    lo: float
    width: float

    @property
    def total(self) -> int:
        return self.m ** self.d

    @property
    def axis(self) -> np.ndarray:
        """Centre coordinate of each of the m cells along one dimension."""
        return self.lo + (np.arange(self.m) + 0.5) * self.width

    def cell_of(self, X: np.ndarray) -> np.ndarray:
        """Linear cell index of every row of X (points on the upper border go to the last cell)."""
        idx = np.floor((X - self.lo) / self.width).astype(np.int64)
        np.clip(idx, 0, self.m - 1, out=idx)
        return idx @ (self.m ** np.arange(self.d - 1, -1, -1, dtype=np.int64))

    def centres(self, cells: np.ndarray | None = None) -> np.ndarray:
        """Centres (len(cells), d) of the given cells (all cells, in grid order, if None)."""
        cells = np.arange(self.total, dtype=np.int64) if cells is None else np.asarray(cells, dtype=np.int64)
        radix = self.m ** np.arange(self.d - 1, -1, -1, dtype=np.int64)
        return self.axis[(cells[:, None] // radix[None, :]) % self.m]


@dataclass
class Synopsis:
    """The released EUG synopsis: the grid (public) and the noisy count of every cell, grid order."""

    grid: Grid
    weights: np.ndarray
    info: dict


def grid_for(n: int, epsilon: float, d: int, settings, bounds) -> tuple[float, Grid]:
    lo, hi = bounds
    M, m = grid_cells(n, epsilon, d, float(settings["theta"]), settings["cells_rounding"])
    cap = int(settings["max_grid_cells"])
    if m ** d > cap:
        raise Refused(f"EUGkM grid of {m}^{d} = {m ** d:,} cells (Eq. 4, N = {n}, ε = {epsilon:g}, "
                      f"θ = {settings['theta']:g}) exceeds max_grid_cells = {cap:,} (a memory guard: raise the "
                      "setting where memory allows, about 40 bytes a cell)")
    return M, Grid(m, d, float(lo), (hi - lo) / m)


def synopsis(X, epsilon, rng, settings, acc: Accountant) -> Synopsis:
    """The EUG synopsis of §4.2: Laplace(1/ε) on the count of EVERY cell of Eq. 4's grid (of the
    public N, `public_size`)."""
    n, d = public_size(settings, X), X.shape[1]
    M, grid = grid_for(n, epsilon, d, settings, data_bounds(settings))
    counts = np.bincount(grid.cell_of(X), minlength=grid.total).astype(float)
    # one Laplace mechanism on the whole histogram (L1 sensitivity 1 under add/remove, §4.2.1)
    noisy = mech.laplace_mechanism(counts, 1.0, epsilon, rng, accountant=acc,
                                   label="EUG synopsis: Laplace on every cell count")
    info = {"M": M, "cells_per_dim": grid.m, "cells_total": grid.total}
    return Synopsis(grid, noisy, info)


# ---------------------------------------------------------------------------------------------
# weighted Lloyd on every cell of the grid
# ---------------------------------------------------------------------------------------------
class _GridLayout:
    """What the weighted Lloyd needs of a grid and its weights, precomputed once per synopsis.

    Cell t = u·M2 + v (the grid's row-major order), u over the first d1 = ⌊d/2⌋ coordinates
    (M1 = m^d1 values), v over the rest (M2 values). P1 (M1, d1) and P2 (M2, d − d1) are the
    centre coordinates of the two halves (`Grid.centres` of each half), w the noisy counts.
    """

    def __init__(self, grid: Grid, weights: np.ndarray, k: int):
        m, d = grid.m, grid.d
        self.d, self.k = d, k
        self.d1 = d // 2
        self.M1, self.M2 = m ** self.d1, m ** (d - self.d1)
        half1 = Grid(m, self.d1, grid.lo, grid.width) if self.d1 else None
        self.P1 = half1.centres() if half1 else np.zeros((1, 0))
        self.P2 = Grid(m, d - self.d1, grid.lo, grid.width).centres()
        self.w = np.ascontiguousarray(weights, dtype=float)
        self._no_labels = np.empty(0, dtype=np.intp)

    def sums(self, C: np.ndarray, labels: np.ndarray | None = None):
        """Per cluster, over the cells whose nearest centre is C[j] (float64, ties: the lowest j):
        Σ ñ (k,) and Σ ñ·x (k, d); and the weighted cost Σ ñ·min_j ‖x − C[j]‖² (a float). The
        coordinates of a cell centre are separable in (u, v): R[u, j] and Cv[v, j], the noisy counts
        summed per row u and per column v in grid order (`_label_and_sum`), give both sums exactly.
        `labels` (M_tot,) intp, if given, receives every cell's label (tests; the Lloyd needs none)."""
        C = np.ascontiguousarray(C, dtype=float)
        out = self._no_labels if labels is None else labels
        R, Cv, cost = _kernel()(self.P1, self.P2, C, self.w, out)
        count = R.sum(axis=0)
        total = np.empty((self.k, self.d))
        total[:, :self.d1] = R.T @ self.P1
        total[:, self.d1:] = Cv.T @ self.P2
        return count, total, cost


def _label_and_sum(P1, P2, C, w, labels):
    """One pass over the cells in grid order (u outer, v inner; compiled by `_kernel`).

    a[u, j] = ‖P1[u] − C[j, :d1]‖², b[j, v] = ‖P2[v] − C[j, d1:]‖² (float64, coordinates summed in
    order); cell (u, v) goes to the first j minimising a[u, j] + b[j, v] (as numpy's argmin) and
    adds its weight w[u·M2 + v] to R[u, j] and Cv[v, j] (each in grid order, so R and Cv are the
    bytes of one bincount over every cell) and w·(a + b) to the cost. Labels are written to
    `labels` only if it is not empty. Returns (R (M1, k), Cv (M2, k), cost)."""
    M1, d1 = P1.shape
    M2, d2 = P2.shape
    k = C.shape[0]
    a = np.zeros((M1, k))
    for u in range(M1):
        for j in range(k):
            s = 0.0
            for f in range(d1):
                t = P1[u, f] - C[j, f]
                s += t * t
            a[u, j] = s
    b = np.zeros((k, M2))
    for j in range(k):
        for v in range(M2):
            s = 0.0
            for f in range(d2):
                t = P2[v, f] - C[j, d1 + f]
                s += t * t
            b[j, v] = s
    R = np.zeros((M1, k))
    Cv = np.zeros((M2, k))
    cost = 0.0
    best = np.empty(M2)
    lab = np.empty(M2, dtype=np.intp)
    write = labels.shape[0] > 0
    for u in range(M1):
        # one row of cells: a running minimum over j (a loop over v the compiler vectorises) ...
        au = a[u, 0]
        for v in range(M2):
            best[v] = au + b[0, v]
            lab[v] = 0
        for j in range(1, k):
            au = a[u, j]
            for v in range(M2):
                dist = au + b[j, v]
                less = dist < best[v]
                best[v] = dist if less else best[v]
                lab[v] = j if less else lab[v]
        # ... then its weights, in grid order
        t0 = u * M2
        for v in range(M2):
            j = lab[v]
            wt = w[t0 + v]
            R[u, j] += wt
            Cv[v, j] += wt
            cost += wt * best[v]
        if write:
            for v in range(M2):
                labels[t0 + v] = lab[v]
    return R, Cv, cost


#: `_label_and_sum` compiled by numba on first use (`dpclust.compiled`)
_kernel = kernel(_label_and_sum)


def grid_lloyd(syn: Synopsis, inits: np.ndarray, max_iter: int, tol: float, bounds):
    """Weighted Lloyd on every cell of the synopsis from each of S initial sets.

    inits (S, k, d). Each step labels every cell centre by its nearest centre and moves centre j to
    Σ ñ·x / Σ ñ over its cells; a cluster whose total weight is ≤ 0 keeps its centre; centres are
    clipped to the public box (post-processing). Stops when no centre moves more than `tol`, or
    after `max_iter` steps. Returns (centres (S, k, d), weighted cost Σ ñ‖x − c‖² per set (S,),
    steps per set (S,)).
    """
    lo, hi = bounds
    inits = np.asarray(inits, dtype=float)
    S, k, d = inits.shape
    lay = _GridLayout(syn.grid, syn.weights, k)
    out = np.empty_like(inits)
    cost = np.empty(S)
    iters = np.zeros(S, dtype=int)
    for s in range(S):
        C = inits[s].copy()
        for _ in range(max_iter):
            count, total, _ = lay.sums(C)
            new = C.copy()
            pos = count > 0
            new[pos] = total[pos] / count[pos, None]
            np.clip(new, lo, hi, out=new)
            shift = float(np.sqrt(((new - C) ** 2).sum(axis=1)).max())
            C = new
            iters[s] += 1
            if shift <= tol:
                break
        out[s] = C
        cost[s] = lay.sums(C)[2]
    return out, cost, iters


def initial_set_seeds(settings) -> list[int]:
    """The seeds of EUGkM's n_init_sets sphere-packing sets: "the same 30 sets of initial centroids
    as those generated for the DPLloyd method" (§5.1), i.e. the first n_init_sets of the runner's
    shared pool (`init_pool_seeds`, the experiment's `init_sets`) when there is one, else sets
    derived from `init_seed` alone (library use)."""
    S = int(settings["n_init_sets"])
    pool = settings.get("init_pool_seeds")
    if pool:
        if len(pool) < S:
            raise DPClustError(f"EUGkM needs n_init_sets = {S} shared initial sets but the experiment's "
                               f"pool has {len(pool)} (init_sets)")
        return [int(s) for s in pool[:S]]
    return init_set_seeds(int(settings["init_seed"]), S)


def lloyd_on_synopsis(syn: Synopsis, k, settings, bounds, d):
    """Lloyd from the n_init_sets initial sets; pick the lowest NICV on the synopsis (§5.1)."""
    seeds = initial_set_seeds(settings)
    dummy = np.zeros((k, d))  # sphere packing ignores the data
    inits = np.stack([initial_centers(dummy, k, settings, seed=s) for s in seeds])
    C, cost, iters = grid_lloyd(syn, inits, int(settings["lloyd_max_iter"]), float(settings["lloyd_tol"]), bounds)
    best = int(np.argmin(cost))
    total_w = float(syn.weights.sum())
    return C[best], {"chosen_init": best,
                     "synopsis_nicv": float(cost[best] / total_w) if total_w > 0 else None,
                     "lloyd_iterations": int(iters[best])}


def eugkm_centers(X, k, epsilon, rng, settings, acc: Accountant):
    """Synopsis with budget ε, then Lloyd on it (`settings` complete: EUGkM's or the hybrid's)."""
    if settings["init"] != "sphere_packing":
        # also guards the hybrid: any other init would be data dependent (or degenerate)
        raise DPClustError("EUGkM's initial sets must be data independent: init must be sphere_packing")
    bounds = data_bounds(settings)
    syn = synopsis(X, epsilon, rng, settings, acc)
    C, linfo = lloyd_on_synopsis(syn, k, settings, bounds, X.shape[1])
    info = dict(syn.info)
    info.update(linfo)
    return C, info


@declared(SETTINGS, guarantee=EUGKM_GUARANTEE)
def eugkm(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """EUGkM (§4.2.1): ε-DP grid synopsis over every cell + weighted Lloyd from 30 inits, best on
    the synopsis."""
    X = validate_inputs(X, k, epsilon, delta)
    public_box(settings, X)
    acc = Accountant(float(epsilon))
    C, info = eugkm_centers(X, k, float(epsilon), rng, settings, acc)
    return ClusteringResult.from_accountant(C, acc, iterations=info["lloyd_iterations"], **info)
