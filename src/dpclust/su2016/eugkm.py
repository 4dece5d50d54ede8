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
the mechanism: the cell centres are never materialised in float64, labels come from one
GEMM + argmin pass per Lloyd step (`_nearest`: scikit-learn's Cython Lloyd kernel, labels only,
float32; a NumPy fallback computes the same formula, its labels can differ at float32 near-ties:
a float32 GEMM rounds a product by where its row falls in the BLAS tiles, which is also why the
labelling is not batched across the 30 sets), and the weighted cluster sums are separable on a
grid: with the cell index split as (u, v) — u the first ⌊d/2⌋ coordinates, v the rest — every
coordinate of a cell centre depends on u or on v only, so two accumulations per step (row sums
R[u, j] and column sums C[v, j] of the noisy counts per cluster, in cache-sized blocks of whole
rows, in grid order) give every count, coordinate sum and Σ ñ‖x‖² exactly (`_GridLayout`). On a
noise-dominated synopsis the weighted Lloyd does not settle (the empty cells' noise keeps moving
the centres), so most sets run all `lloyd_max_iter` steps: the cost is about n_init_sets ×
lloyd_max_iter × m^d × k, e.g. ≈ 1 s for d = 10, N = 10^4, ε = 1, k = 10 (3^10 = 59,049 cells;
`benchmarks/su2016_eugkm.py`) and tens of seconds for the 4^10 ≈ 10^6 cells of d = 10 at θ = 5 or
ε = 2. Grids above `max_grid_cells` (REC, memory) are refused (`dpclust.api.Refused`: the
workflow's run record says `refused`, with the grid) rather than approximated; e.g. Shuttle (d =
9) at ε = 3 asks for 6^9 ≈ 10^7 cells (measured: 1.6 GB, 155 s CPU a run at k = 5).

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

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpclust import mechanisms as mech
from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, Refused, data_bounds, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.blocks.public_size import PUBLIC_N, public_size
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
                      "setting where memory allows, about 160 bytes a cell)")
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
#: Cells per block of `_GridLayout.sums` (whole rows u; speed only, the sums are the same bytes).
SUMS_BLOCK_CELLS = 131_072


class _GridLayout:
    """What the weighted Lloyd needs of a grid and its weights, precomputed once per synopsis.

    Cell t = u·M2 + v, u over the first d1 = ⌊d/2⌋ coordinates (M1 = m^d1 values), v over the rest
    (M2 values). P1 (M1, d1) and P2 (M2, d − d1) are the centre coordinates of the two halves, h1, h2
    their squared norms; `points` (M_tot, d) float32 are the cell centres for the labelling pass.
    """

    def __init__(self, grid: Grid, weights: np.ndarray, k: int):
        m, d = grid.m, grid.d
        self.d, self.k = d, k
        self.d1 = d // 2
        self.M1, self.M2 = m ** self.d1, m ** (d - self.d1)
        half1 = Grid(m, self.d1, grid.lo, grid.width) if self.d1 else None
        self.P1 = half1.centres() if half1 else np.zeros((1, 0))
        self.P2 = Grid(m, d - self.d1, grid.lo, grid.width).centres()
        self.h1 = np.einsum("ij,ij->i", self.P1, self.P1)
        self.h2 = np.einsum("ij,ij->i", self.P2, self.P2)
        self.w = np.ascontiguousarray(weights, dtype=float)
        self.points = _centres32(grid)
        self.w32 = np.ones(grid.total, dtype=np.float32)                   # unused by the labelling pass
        # the cells are summed in blocks of whole rows u (rows_per_block · M2 cells, about
        # SUMS_BLOCK_CELLS): a block's keys come from two fixed patterns and stay in cache; keys
        # are int32 where they fit (a cheaper add than int32 labels + intp keys; the same keys)
        self.rows_per_block = max(1, min(self.M1, SUMS_BLOCK_CELLS // self.M2))
        block = self.rows_per_block * self.M2
        key_type = _key_type(max(self.rows_per_block, self.M2) * k)
        self.ubase = np.repeat(np.arange(self.rows_per_block, dtype=key_type) * k, self.M2)
        self.vbase = np.tile(np.arange(self.M2, dtype=key_type) * k, self.rows_per_block)
        self.labels = np.empty(grid.total, dtype=np.int32)
        self.key = np.empty(block, dtype=key_type)

    def assign(self, C: np.ndarray) -> np.ndarray:
        """Nearest centre of every cell centre (ties: the lowest index), in float32."""
        _nearest(self.points, np.ascontiguousarray(C, dtype=np.float32), self.labels, self.w32)
        return self.labels

    def sums(self, labels: np.ndarray):
        """Per cluster: Σ ñ (k,), Σ ñ·x (k, d) and Σ ñ‖x‖² (k,) over the cells labelled j, exactly
        (the cell centre's coordinates are separable in (u, v): R[u, j] and Cv[v, j] are the
        noisy counts summed per row u and per column v, each in grid order as one bincount over all
        cells would add them: a block of whole rows holds every cell of its R[u, ·], and Cv
        accumulates block after block with `np.add.at`, which adds in index order)."""
        k, M2, rows = self.k, self.M2, self.rows_per_block
        R = np.empty(self.M1 * k)
        Cv = np.zeros(M2 * k)
        for u0 in range(0, self.M1, rows):
            u1 = min(self.M1, u0 + rows)
            cells = slice(u0 * M2, u1 * M2)
            n = (u1 - u0) * M2
            key, lab, w = self.key[:n], labels[cells], self.w[cells]
            np.add(self.ubase[:n], lab, out=key)
            R[u0 * k:u1 * k] = np.bincount(key, weights=w, minlength=(u1 - u0) * k)
            np.add(self.vbase[:n], lab, out=key)
            np.add.at(Cv, key, w)
        R, Cv = R.reshape(self.M1, k), Cv.reshape(M2, k)
        count = R.sum(axis=0)
        total = np.empty((k, self.d))
        total[:, :self.d1] = R.T @ self.P1
        total[:, self.d1:] = Cv.T @ self.P2
        sq = R.T @ self.h1 + Cv.T @ self.h2
        return count, total, sq


def _key_type(n_keys: int) -> type[np.signedinteger]:
    """Integer type of `_GridLayout.sums`' bincount keys 0 … n_keys − 1: int32 where they fit."""
    return np.int32 if n_keys <= 2 ** 31 else np.intp


def _centres32(grid: Grid) -> np.ndarray:
    """`grid.centres()` as float32 (M_tot, d), the same values (each an axis value cast to float32),
    written one coordinate at a time by broadcasting instead of through int64 cell indices and a
    float64 copy (at 10^6 cells: a quarter of the memory, a third of the time)."""
    m, d = grid.m, grid.d
    axis32 = grid.axis.astype(np.float32)
    out = np.empty((m,) * d + (d,), dtype=np.float32)
    for f in range(d):
        out[..., f] = axis32.reshape((1,) * f + (m,) + (1,) * (d - 1 - f))
    return out.reshape(grid.total, d)


def _nearest(points32, C32, labels, dummy_w):
    """labels[i] = argmin_j ‖points[i] − C[j]‖² (first index on ties)."""
    kernel = _lloyd_kernel()
    if kernel is not None:
        kernel(points32, dummy_w, C32, None, None, labels, None, 1, False)
        return
    _nearest_numpy(points32, C32, labels)


def _nearest_numpy(points32, C32, labels, chunk: int = 65_536):
    """Fallback of `_nearest` (GEMM + argmin per chunk, the same formula in float32; at near-ties a
    label can differ from the kernel's, whose GEMM has other shapes)."""
    c_sq = np.einsum("ij,ij->i", C32, C32)
    for s0 in range(0, points32.shape[0], chunk):
        D = points32[s0:s0 + chunk] @ (C32.T * np.float32(-2.0))
        D += c_sq
        labels[s0:s0 + chunk] = D.argmin(axis=1)


@functools.lru_cache(maxsize=1)
def _lloyd_kernel():
    """scikit-learn's Cython Lloyd step (labels only: GEMM + argmin per chunk, no Python loop),
    imported on first use so that importing this module (every run job does) stays light."""
    try:
        from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense
    except ImportError:  # pragma: no cover - the pinned scikit-learn has it
        return None
    return lloyd_iter_chunked_dense


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
            count, total, _ = lay.sums(lay.assign(C))
            new = C.copy()
            pos = count > 0
            new[pos] = total[pos] / count[pos, None]
            np.clip(new, lo, hi, out=new)
            shift = float(np.sqrt(((new - C) ** 2).sum(axis=1)).max())
            C = new
            iters[s] += 1
            if shift <= tol:
                break
        count, total, sq = lay.sums(lay.assign(C))
        out[s] = C
        cost[s] = float((sq - 2.0 * np.einsum("kd,kd->k", C, total) + np.einsum("kd,kd->k", C, C) * count).sum())
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
