"""Benchmark: EUGkM's weighted Lloyd on the synopsis (`dpclust.su2016.eugkm.grid_lloyd`), now vs the
code before the exact refactor of `_GridLayout` (kept below as `_PreviousLayout`, so no git is
needed), on synopses shaped like the full protocol's dearest EUGkM / hybrid cells. Prints CPU
seconds (time.process_time, best of --repeats, old and new interleaved), the ratio and whether both
give the same bytes (centres, costs, steps).

    .venv/bin/python benchmarks/bench_eugkm.py [--sets 6] [--repeats 3] [--proposal]

Cells (grid of Eq. 4 with round_log, as in the runs): Lifesci-like d = 10, m = 4, k = 3 (hybrid at
ε = 2: EUGkM with ε/2 = 1 on N = 26,733); Adult-num-like d = 6, m = 10, k = 5 (EUGkM at ε = 2) and
m = 8 (hybrid at ε = 2); su_synth-like d = 10, m = 3, k = 10 (EUGkM at ε = 1, N = 10,000). Each
synopsis is Gaussian-blob counts plus Lap(1/ε) on every cell, as `eugkm.synopsis` releases it.

--proposal also times a NUMERICS CHANGE that is not in the source (`_SeparableLabels`): labels from
the separable float64 distances a[u, j] + b[v, j] (the grid's (u, v) split) by a NumPy running
minimum instead of scikit-learn's private float32 Lloyd kernel. Its labels can differ from the
kernel's at float32 near-ties, so its results are not the same bytes; it prints how often.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from dpclust.accountant import Accountant  # noqa: E402
from dpclust.su2016 import eugkm  # noqa: E402

#: (name, d, n, epsilon of the synopsis, k): the grid follows Eq. 4 (θ = 10, round_log)
CELLS = [("lifesci-like hybrid eps=2", 10, 26_733, 1.0, 3),
         ("adult-like eugkm eps=2", 6, 48_842, 2.0, 5),
         ("adult-like hybrid eps=2", 6, 48_842, 1.0, 5),
         ("su_synth-like eugkm eps=1", 10, 10_000, 1.0, 10)]


class _PreviousLayout(eugkm._GridLayout):
    """`_GridLayout` before the refactor: float32 points cast from `Grid.centres()` (int64 cell
    indices, a float64 copy) and intp bincount keys. Labelling (`assign`) unchanged."""

    def __init__(self, grid, weights, k):   # noqa: D107 - the previous constructor, verbatim
        m, d = grid.m, grid.d
        self.d, self.k = d, k
        self.d1 = d // 2
        self.M1, self.M2 = m ** self.d1, m ** (d - self.d1)
        half1 = eugkm.Grid(m, self.d1, grid.lo, grid.width) if self.d1 else None
        self.P1 = half1.centres() if half1 else np.zeros((1, 0))
        self.P2 = eugkm.Grid(m, d - self.d1, grid.lo, grid.width).centres()
        self.h1 = np.einsum("ij,ij->i", self.P1, self.P1)
        self.h2 = np.einsum("ij,ij->i", self.P2, self.P2)
        self.w = np.ascontiguousarray(weights, dtype=float)
        self.points = np.ascontiguousarray(grid.centres(), dtype=np.float32)
        self.w32 = np.ones(grid.total, dtype=np.float32)
        self.rows_per_block = max(1, min(self.M1, eugkm.SUMS_BLOCK_CELLS // self.M2))
        block = self.rows_per_block * self.M2
        self.ubase = np.repeat(np.arange(self.rows_per_block, dtype=np.intp) * k, self.M2)
        self.vbase = np.tile(np.arange(self.M2, dtype=np.intp) * k, self.rows_per_block)
        self.labels = np.empty(grid.total, dtype=np.int32)
        self.key = np.empty(block, dtype=np.intp)


class _SeparableLabels(eugkm._GridLayout):
    """PROPOSAL (numerics change, not in the source): nearest centre of every cell from the separable
    float64 squared distances a[u, j] + b[v, j] (a over the first d1 coordinates, b over the rest),
    a running minimum over j in blocks of rows (first index on ties); sums unchanged."""

    BLOCK_CELLS = 65_536

    def assign(self, C):
        C = np.asarray(C, dtype=float)
        k = C.shape[0]
        aT = np.ascontiguousarray(((self.P1[:, None, :] - C[None, :, :self.d1]) ** 2).sum(axis=2).T)
        bT = np.ascontiguousarray(((self.P2[:, None, :] - C[None, :, self.d1:]) ** 2).sum(axis=2).T)
        rows = max(1, min(self.M1, self.BLOCK_CELLS // self.M2))
        best, dist = np.empty((rows, self.M2)), np.empty((rows, self.M2))
        less = np.empty((rows, self.M2), dtype=bool)
        L = self.labels.reshape(self.M1, self.M2)
        for u0 in range(0, self.M1, rows):
            r = min(rows, self.M1 - u0)
            bs, ds, ms, ls = best[:r], dist[:r], less[:r], L[u0:u0 + r]
            np.add(aT[0, u0:u0 + r, None], bT[0], out=bs)
            ls.fill(0)
            for j in range(1, k):
                np.add(aT[j, u0:u0 + r, None], bT[j], out=ds)
                np.less(ds, bs, out=ms)
                np.copyto(bs, ds, where=ms)
                np.copyto(ls, j, where=ms)
        return self.labels


def _synopsis(d: int, n: int, epsilon: float, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.6, 0.6, size=(k, d))
    X = np.clip(centres[rng.integers(0, k, n)] + rng.normal(0, 0.15, size=(n, d)), -1, 1)
    st = dict(eugkm.eugkm.settings.defaults(), bounds=[-1.0, 1.0], init_seed=3)
    syn = eugkm.synopsis(X, epsilon, np.random.default_rng(seed + 1), st, Accountant(epsilon))
    seeds = eugkm.initial_set_seeds(st)
    inits = np.stack([eugkm.initial_centers(np.zeros((k, d)), k, st, seed=s) for s in seeds])
    return syn, inits, st


def _run(layout, syn, inits, st):
    """grid_lloyd with `layout` as its _GridLayout (CPU seconds, result)."""
    saved = eugkm._GridLayout
    eugkm._GridLayout = layout
    try:
        t = time.process_time()
        out = eugkm.grid_lloyd(syn, inits, int(st["lloyd_max_iter"]), float(st["lloyd_tol"]), (-1.0, 1.0))
        return time.process_time() - t, out
    finally:
        eugkm._GridLayout = saved


def _same(a, b) -> bool:
    return all(np.asarray(x).tobytes() == np.asarray(y).tobytes() for x, y in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=6, help="initial sets per cell (the runs use 30)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--proposal", action="store_true", help="also time the separable-labels proposal")
    args = ap.parse_args()
    variants = {"previous": _PreviousLayout, "now": eugkm._GridLayout}
    if args.proposal:
        variants["proposal"] = _SeparableLabels
    print(f"EUGkM grid Lloyd, {args.sets} sets x 30 steps, CPU s, best of {args.repeats}: previous vs now")
    for name, d, n, eps, k in CELLS:
        syn, inits, st = _synopsis(d, n, eps, k)
        inits = inits[:args.sets]
        best = dict.fromkeys(variants, np.inf)
        outs = {}
        for _ in range(args.repeats):
            for label, layout in variants.items():
                t, outs[label] = _run(layout, syn, inits, st)
                best[label] = min(best[label], t)
        line = (f"  {name:27s} {syn.grid.m}^{d} = {syn.grid.total:>9,d} cells, k = {k:2d}: "
                f"{best['previous']:6.2f} s -> {best['now']:6.2f} s  now/previous {best['now'] / best['previous']:.3f}"
                f"  same bytes: {_same(outs['previous'], outs['now'])}")
        if args.proposal:
            same_sets = int(sum(np.array_equal(a, b) for a, b in zip(outs["now"][0], outs["proposal"][0])))
            line += (f" | proposal {best['proposal']:6.2f} s, proposal/now {best['proposal'] / best['now']:.3f},"
                     f" sets with the same centres {same_sets}/{len(inits)}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
