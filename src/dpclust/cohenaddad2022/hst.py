"""Private hierarchically separated tree (Cohen-Addad et al. 2022, §2 "shifted quadtree", Alg. 2
MakePrivate, Lemma 3).

Geometry. The root cell is the public box [lo, hi]^d. A cell at binary depth t splits dimension
j = t mod d of its interval [a, b] at a + u·(b − a) (points with x_j ≤ cut go left). One "layer"
splits every dimension once, so the maximal binary depth is D = ``layers``·d (EXT-code: `--layers`,
default 10). The fraction u is drawn uniformly in ``split_fraction_range`` (EXT-code: [1/3, 2/3])
once per (layer, dimension), from the run's generator, i.e. public randomness independent of the
data; all cells of a level share it, as in the released code.

Because the cuts of dimension j nest, the leaves of the per-dimension binary tree are the 2^layers
intervals between sorted boundaries, and the binary digits (most significant first) of the interval
index of x_j are exactly the left/right decisions of the splits of dimension j. `cell_indices` maps
the rows to these indices in one pass over row chunks (an in-memory array, an h5py dataset or any
iterable of chunks), so the float data are never held in memory; the per-point state is the uint16
index array (2·d bytes per point).

Privacy (Lemma 3). Every level t = 0..D gets ε_tree/(D+1): the noisy count of every cell of the
level that exists (the root, then both children of every split cell) is released with
Laplace(1/ε_level): the cells of one level are disjoint, so one point changes one count by one (L1
sensitivity 1, add/remove neighbours, parallel composition) and the levels compose sequentially.
A cell is split iff its noisy count is ≥ the weight threshold w and t < D (the paper's §6 stopping
rule "stop splitting when w̃(c) < w"), a post-processing of released counts. Levels reached by no
cell are still charged so the spent ε always equals ε_tree.

Interpretations (ours, MISSING in the extracted text): w = ``weight_threshold_factor`` × the
Laplace scale of one level (REC: the paper tunes w; a multiple of the noise scale keeps the rule
meaningful for every ε and depth); Laplace counts (the paper) instead of the code's Gaussian
thresholding.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from dpclust.accountant import Accountant
from dpclust.api import DPClustError
from dpclust.blocks.domain import require_inside
from dpclust.mechanisms import laplace_mechanism, laplace_scale

#: Most bins of the per-dimension lookup table of `Grid.interval_index` (speed only; exact for any value).
LOOKUP_BINS = 1 << 16


def lookup_bins(layers: int) -> int:
    """Bins of the lookup table for a grid of `layers`: about 4^layers·4, so that with cut fractions
    in [1/3, 2/3] a bin holds at most one of the 2^layers − 1 cut points, up to LOOKUP_BINS. A small
    tree needs no 65,536-bin table: building one cost more than the rest of an audit's small runs."""
    return min(LOOKUP_BINS, 1 << (2 * int(layers) + 2))


#: Steps `Grid.interval_index` corrects its lookup-table guess by before it does a binary search.
CORRECTIONS = 4

#: Largest number of layers (bits per dimension) the uint16 cell index can hold.
MAX_LAYERS = 16


@dataclass
class Grid:
    """Public geometry of the shifted quadtree."""

    lo: float
    hi: float
    d: int
    layers: int
    fractions: np.ndarray          # (layers, d) cut fractions u
    boundaries: list = field(default_factory=list)  # per dim: sorted interior cut points (2^L − 1)
    luts: list = field(default_factory=list)        # per dim: #cut points below each lookup bin's left edge

    def interval_index(self, j: int, x: np.ndarray) -> np.ndarray:
        """Number of cut points of dimension j strictly below each x (= searchsorted(..., 'left')).

        A uniform lookup table gives a guess that is then corrected exactly against the two
        neighbouring cut points (usually no correction), ~3x faster than a binary search."""
        bnd = self.boundaries[j]
        ext = np.concatenate([[-np.inf], bnd, [np.inf]])
        G = self.luts[j].shape[0]
        b = ((x - self.lo) * (G / (self.hi - self.lo))).astype(np.int64)
        np.clip(b, 0, G - 1, out=b)
        g = self.luts[j][b].astype(np.int64)
        for _ in range(CORRECTIONS):  # exact: ext[g] < x <= ext[g + 1]
            up = x > ext[g + 1]
            down = x <= ext[g]
            if not (up.any() or down.any()):
                return g
            g += up
            g -= down
        # cut points crowded into a few bins (cut fractions far from 1/2): one step at a time would
        # take as many passes as a bin has cut points
        return np.searchsorted(bnd, x, side="left")

    @property
    def depth(self) -> int:
        return self.layers * self.d


def make_grid(d: int, bounds, layers: int, fraction_range, rng: np.random.Generator) -> Grid:
    lo, hi = float(bounds[0]), float(bounds[1])
    if not hi > lo:
        raise DPClustError(f"bounds must satisfy lo < hi, got {bounds!r}")
    if not (1 <= int(layers) <= MAX_LAYERS):
        raise DPClustError(f"layers must be an integer in [1, {MAX_LAYERS}], got {layers!r}")
    f_lo, f_hi = float(fraction_range[0]), float(fraction_range[1])
    if not (0 < f_lo <= f_hi < 1):
        raise DPClustError(f"split_fraction_range must satisfy 0 < a <= b < 1, got {fraction_range!r}")
    layers = int(layers)
    u = rng.uniform(f_lo, f_hi, size=(layers, d))
    boundaries = []
    for j in range(d):
        a = np.array([lo])
        b = np.array([hi])
        for layer in range(layers):
            cut = a + u[layer, j] * (b - a)
            a, b = np.stack([a, cut], 1).ravel(), np.stack([cut, b], 1).ravel()
        boundaries.append(a[1:].copy())  # interior left ends = all cut points, sorted
    G = lookup_bins(layers)
    edges = lo + (hi - lo) * np.arange(G) / G
    luts = [np.searchsorted(bnd, edges, side="left").astype(np.int32) for bnd in boundaries]
    return Grid(lo, hi, d, layers, u, boundaries, luts)


def _iter_chunks(source, chunk_rows: int) -> Iterable[np.ndarray]:
    if hasattr(source, "shape") and hasattr(source, "__getitem__") and len(getattr(source, "shape", ())) == 2:
        n = source.shape[0]
        for start in range(0, n, chunk_rows):
            yield np.asarray(source[start:start + chunk_rows], dtype=np.float64)
    else:
        for chunk in source:
            yield np.asarray(chunk, dtype=np.float64)


def cell_indices(source, grid: Grid, chunk_rows: int = 262_144) -> np.ndarray:
    """Per-dimension interval index of every row: a (d, n) uint16 array, computed chunk by chunk.

    `source`: an (n, d) array, an h5py dataset, or an iterable of (m, d) chunks (map step); the
    index arrays are concatenated (reduce step). Rows outside the box raise `DPClustError`."""
    parts = []
    for chunk in _iter_chunks(source, chunk_rows):
        if chunk.ndim != 2 or chunk.shape[1] != grid.d:
            raise DPClustError(f"chunk of shape {chunk.shape} does not have d = {grid.d} columns")
        require_inside(chunk, grid.lo, grid.hi)
        idx = np.empty((grid.d, chunk.shape[0]), dtype=np.uint16)
        for j in range(grid.d):
            idx[j] = grid.interval_index(j, chunk[:, j])
        parts.append(idx)
    if not parts:
        return np.empty((grid.d, 0), dtype=np.uint16)
    return np.concatenate(parts, axis=1)


@dataclass
class PrivateTree:
    """The released tree, level by level (all arrays are outputs of the mechanism).

    Level t holds m_t cells; `weights[t]` their noisy counts, `split[t]` whether they were split,
    `lo[t]`, `hi[t]` (m_t, d) their boxes. The children of the r-th split cell of level t are cells
    2r and 2r+1 of level t+1 (left, right)."""

    grid: Grid
    weights: list
    split: list
    lo: list
    hi: list
    noise_scale: float
    threshold: float

    @property
    def n_cells(self) -> int:
        return int(sum(len(w) for w in self.weights))


def build_private_tree(indices: np.ndarray, grid: Grid, epsilon: float, rng: np.random.Generator,
                       accountant: Accountant, weight_threshold_factor: float,
                       max_depth: int | None = None) -> PrivateTree:
    """Alg. 2 (MakePrivate) with the §6 stopping rule; spends exactly `epsilon` (Lemma 3).

    `indices` from `cell_indices`; `max_depth` (≤ grid.depth, default grid.depth) is D."""
    D = grid.depth if max_depth is None else int(max_depth)
    if not (0 <= D <= grid.depth):
        raise DPClustError(f"max_depth must be in [0, {grid.depth}], got {max_depth!r}")
    d, L = grid.d, grid.layers
    n_levels = D + 1
    eps_level = epsilon / n_levels
    scale = laplace_scale(1.0, eps_level)
    threshold = float(weight_threshold_factor) * scale

    n = indices.shape[1]
    active = np.arange(n, dtype=np.int64)      # points whose cell at the current level exists
    node = np.zeros(n, dtype=np.int64)         # their cell index within the level
    counts = np.array([n], dtype=np.int64)
    lo = np.full((1, d), grid.lo)
    hi = np.full((1, d), grid.hi)
    weights, splits, los, his = [], [], [], []
    for t in range(n_levels):
        if counts.size:
            w = laplace_mechanism(counts.astype(float), 1.0, eps_level, rng, accountant=accountant,
                                  label=f"tree level {t} counts (disjoint cells, Lemma 3)")
        else:
            accountant.spend(eps_level, 0.0, label=f"tree level {t} counts (no cell reached)")
            w = np.empty(0)
        split = (w >= threshold) if t < D else np.zeros(w.shape, dtype=bool)
        weights.append(w)
        splits.append(split)
        los.append(lo)
        his.append(hi)
        if t == D or not split.any():
            # remaining levels are charged with no cell (keeps spent ε = ε_tree)
            for t2 in range(t + 1, n_levels):
                accountant.spend(eps_level, 0.0, label=f"tree level {t2} counts (no cell reached)")
            break
        rank = np.cumsum(split) - 1
        keep = split[node]
        active, node = active[keep], rank[node[keep]]
        j, layer = t % d, t // d
        bit = (indices[j, active] >> np.uint16(L - 1 - layer)) & np.uint16(1)
        node = 2 * node + bit.astype(np.int64)
        n_split = int(split.sum())
        counts = np.bincount(node, minlength=2 * n_split)
        # children boxes
        plo, phi = lo[split], hi[split]
        cut = plo[:, j] + grid.fractions[layer, j] * (phi[:, j] - plo[:, j])
        lo = np.repeat(plo, 2, axis=0)
        hi = np.repeat(phi, 2, axis=0)
        lo[1::2, j] = cut
        hi[0::2, j] = cut
    return PrivateTree(grid, weights, splits, los, his, scale, threshold)
