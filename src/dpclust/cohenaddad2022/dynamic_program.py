"""Dynamic program for k-median (p = 1) and k-means (p = 2) on the private tree (Cohen-Addad et al.
2022, Alg. 3 DynamicProgram-kMedian, Lemma 2).

f(c, j) = cheapest cost of serving the (noisy) points of cell c with j centres inside c:
  * leaf c (not split, the recursion is trimmed here):  f(c, 0) = Z·w(c)·diam(c)^p,
    f(c, j ≥ 1) = w(c)·diam(c)^p (one centre at the cell's geometric centre; more do not help);
  * split c with children c₁, c₂: f(c, 0) = Z·w(c)·diam(c)^p and, for j ≥ 1,
    f(c, j) = min_{j₁ + j₂ = j} f(c₁, j₁) + f(c₂, j₂).
w(c) = max(w̃(c), 0) (EXT-code clamps negative noisy weights), Z = ``empty_cell_cost_factor``
(EXT-code: an empty subtree costs 2·diam^p·w). The root is solved for j = k and the allocation is
traced back top-down; the centres are the geometric centres of the leaves that get a centre
(EXT-code). Everything is post-processing of the released tree: no privacy cost.

Running time: one batched (min, +) convolution of length k + 1 per tree level, i.e.
O(#cells · k²) vectorised operations — near-linear in n because the tree is trimmed at light cells.
If fewer than k leaves receive a centre (tiny trees), the returned array repeats the last centre
to keep shape (k, d) (`n_distinct` says how many are distinct).
"""

from __future__ import annotations

import numpy as np

from dpclust.cohenaddad2022.hst import PrivateTree


def _diam(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.sqrt(((hi - lo) ** 2).sum(axis=1))


def solve(tree: PrivateTree, k: int, p: int = 1, empty_cell_cost_factor: float = 2.0):
    """Return (centres (k, d), tree cost f(root, k), n_distinct centres)."""
    levels = len(tree.weights)
    f_next = None
    choices: list = [None] * levels
    for t in range(levels - 1, -1, -1):
        w = np.maximum(tree.weights[t], 0.0)
        base = w * _diam(tree.lo[t], tree.hi[t]) ** p
        m = w.shape[0]
        f = np.empty((m, k + 1))
        f[:, 0] = empty_cell_cost_factor * base
        f[:, 1:] = base[:, None]
        split = tree.split[t]
        if split.any():
            A, B = f_next[0::2], f_next[1::2]
            best = np.full((A.shape[0], k + 1), np.inf)
            arg = np.zeros((A.shape[0], k + 1), dtype=np.int32)
            for j1 in range(k + 1):  # (min, +) convolution, batched over the level's split cells
                cand = A[:, j1:j1 + 1] + B[:, :k + 1 - j1]
                better = cand < best[:, j1:]
                best[:, j1:] = np.where(better, cand, best[:, j1:])
                arg[:, j1:] = np.where(better, j1, arg[:, j1:])
            f[split, 1:] = best[:, 1:]
            choices[t] = arg
        f_next = f
    root_cost = float(f_next[0, k])
    # trace back
    alloc = np.array([k], dtype=np.int64)
    centres = []
    for t in range(levels):
        split = tree.split[t]
        leaf_with = (~split) & (alloc >= 1)
        if leaf_with.any():
            centres.append(0.5 * (tree.lo[t][leaf_with] + tree.hi[t][leaf_with]))
        if not split.any():
            break
        a = alloc[split]
        j1 = choices[t][np.arange(a.size), a]
        j1 = np.where(a >= 1, j1, 0)
        alloc = np.empty(2 * a.size, dtype=np.int64)
        alloc[0::2] = j1
        alloc[1::2] = a - j1
    C = np.concatenate(centres, axis=0) if centres else np.full((1, tree.grid.d), 0.5 * (tree.grid.lo + tree.grid.hi))
    n_distinct = int(C.shape[0])
    if n_distinct < k:
        C = np.concatenate([C, np.repeat(C[-1:], k - n_distinct, axis=0)], axis=0)
    return C[:k], root_cost, n_distinct
