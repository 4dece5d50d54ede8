"""Benchmark: EUGkM's weighted Lloyd on the synopsis (`dpclust.su2016.eugkm.grid_lloyd`), now (the
compiled float64 labelling + sums pass, `_label_and_sum`) vs the code before it (kept below as
`_PreviousLayout` / `_previous_grid_lloyd`, so no git is needed: labels from scikit-learn's private
float32 Cython Lloyd kernel, sums by blocked bincounts), on synopses shaped like the full protocol's
dearest EUGkM / hybrid cells. A NUMERICS CHANGE: labels are exact float64 now, so at float32
near-ties they differ from the previous ones and the results are not the same bytes.

    .venv/bin/python benchmarks/bench_eugkm.py [--sets 6] [--repeats 3]
    .venv/bin/python benchmarks/bench_eugkm.py --paired [--seeds 20] [--data-dir data/processed]

Default: CPU seconds (time.process_time, best of --repeats, previous and now interleaved) of
grid_lloyd on the four cells below, the ratio, and how many sets end with the same centres (bit for
bit). Cells (grid of Eq. 4 with round_log, as in the runs): Lifesci-like d = 10, m = 4, k = 3
(hybrid at ε = 2: EUGkM with ε/2 = 1 on N = 26,733); Adult-num-like d = 6, m = 10, k = 5 (EUGkM at
ε = 2) and m = 8 (hybrid at ε = 2); su_synth-like d = 10, m = 3, k = 10 (EUGkM at ε = 1, N =
10,000). Each synopsis is Gaussian-blob counts plus Lap(1/ε) on every cell, as `eugkm.synopsis`
releases it.

--paired: whole runs, previous vs now with the same seed (the same synopsis and the same later
noise, so a difference comes from the labelling alone): hybrid on Lifesci (ε = 2, k = 3) and EUGkM
on Adult-num (ε = 2, k = 5), minmax_pm1 as in the paper's protocol, from the processed files in
--data-dir (the synthetic cells above if a file is missing). Prints the mean paired difference
now − previous of the final NICV on the data (and of the chosen set's NICV on the synopsis) ± its
standard error, the fraction of seeds with identical centres, and the mean CPU seconds a run.
"""
from __future__ import annotations

import argparse
import functools
import os
import time
from pathlib import Path

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

#: --paired: (label, dataset, algorithm module, k, ε, synthetic stand-in (d, n))
PAIRED = [("hybrid Lifesci eps=2 k=3", "lifesci", "hybrid", 3, 2.0, (10, 26_733)),
          ("EUGkM Adult-num eps=2 k=5", "adult_num", "eugkm", 5, 2.0, (6, 48_842))]

# ---------------------------------------------------------------------------------------------
# the previous implementation, verbatim (eugkm.py before the compiled kernel)
# ---------------------------------------------------------------------------------------------
#: Cells per block of `_PreviousLayout.sums` (whole rows u; speed only, the sums are the same bytes).
SUMS_BLOCK_CELLS = 131_072


class _PreviousLayout:
    """What the weighted Lloyd needs of a grid and its weights, precomputed once per synopsis.

    Cell t = u·M2 + v, u over the first d1 = ⌊d/2⌋ coordinates (M1 = m^d1 values), v over the rest
    (M2 values). P1 (M1, d1) and P2 (M2, d − d1) are the centre coordinates of the two halves, h1, h2
    their squared norms; `points` (M_tot, d) float32 are the cell centres for the labelling pass.
    """

    def __init__(self, grid, weights: np.ndarray, k: int):
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
        self.points = _previous_centres32(grid)
        self.w32 = np.ones(grid.total, dtype=np.float32)                   # unused by the labelling pass
        self.rows_per_block = max(1, min(self.M1, SUMS_BLOCK_CELLS // self.M2))
        block = self.rows_per_block * self.M2
        key_type = np.int32 if max(self.rows_per_block, self.M2) * k <= 2 ** 31 else np.intp
        self.ubase = np.repeat(np.arange(self.rows_per_block, dtype=key_type) * k, self.M2)
        self.vbase = np.tile(np.arange(self.M2, dtype=key_type) * k, self.rows_per_block)
        self.labels = np.empty(grid.total, dtype=np.int32)
        self.key = np.empty(block, dtype=key_type)

    def assign(self, C: np.ndarray) -> np.ndarray:
        """Nearest centre of every cell centre (ties: the lowest index), in float32."""
        _previous_lloyd_kernel()(self.points, self.w32, np.ascontiguousarray(C, dtype=np.float32), None, None,
                                 self.labels, None, 1, False)
        return self.labels

    def sums(self, labels: np.ndarray):
        """Per cluster: Σ ñ (k,), Σ ñ·x (k, d) and Σ ñ‖x‖² (k,) over the cells labelled j."""
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


def _previous_centres32(grid) -> np.ndarray:
    m, d = grid.m, grid.d
    axis32 = grid.axis.astype(np.float32)
    out = np.empty((m,) * d + (d,), dtype=np.float32)
    for f in range(d):
        out[..., f] = axis32.reshape((1,) * f + (m,) + (1,) * (d - 1 - f))
    return out.reshape(grid.total, d)


@functools.lru_cache(maxsize=1)
def _previous_lloyd_kernel():
    from sklearn.cluster._k_means_lloyd import lloyd_iter_chunked_dense

    return lloyd_iter_chunked_dense


def _previous_grid_lloyd(syn, inits: np.ndarray, max_iter: int, tol: float, bounds):
    """`eugkm.grid_lloyd` before the compiled kernel (the same contract)."""
    lo, hi = bounds
    inits = np.asarray(inits, dtype=float)
    S, k, d = inits.shape
    lay = _PreviousLayout(syn.grid, syn.weights, k)
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


VARIANTS = {"previous": _previous_grid_lloyd, "now": eugkm.grid_lloyd}


# ---------------------------------------------------------------------------------------------
# the timing table
# ---------------------------------------------------------------------------------------------
def _blobs(d: int, n: int, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.6, 0.6, size=(k, d))
    return np.clip(centres[rng.integers(0, k, n)] + rng.normal(0, 0.15, size=(n, d)), -1, 1)


def _synopsis(d: int, n: int, epsilon: float, k: int, seed: int = 0):
    X = _blobs(d, n, k, seed)
    st = dict(eugkm.eugkm.settings.defaults(), bounds=[-1.0, 1.0], init_seed=3)
    syn = eugkm.synopsis(X, epsilon, np.random.default_rng(seed + 1), st, Accountant(epsilon))
    seeds = eugkm.initial_set_seeds(st)
    inits = np.stack([eugkm.initial_centers(np.zeros((k, d)), k, st, seed=s) for s in seeds])
    return syn, inits, st


def _run(grid_lloyd, syn, inits, st):
    """(CPU seconds, result) of one grid_lloyd."""
    t = time.process_time()
    out = grid_lloyd(syn, inits, int(st["lloyd_max_iter"]), float(st["lloyd_tol"]), (-1.0, 1.0))
    return time.process_time() - t, out


def timing(sets: int, repeats: int) -> None:
    eugkm.grid_lloyd(*_synopsis(2, 100, 1.0, 2)[:2], 1, 0.0, (-1.0, 1.0))     # compile / load the kernel
    print(f"EUGkM grid Lloyd, {sets} sets x 30 steps, CPU s, best of {repeats}: previous vs now")
    for name, d, n, eps, k in CELLS:
        syn, inits, st = _synopsis(d, n, eps, k)
        inits = inits[:sets]
        best = dict.fromkeys(VARIANTS, np.inf)
        outs = {}
        for _ in range(repeats):
            for label, fn in VARIANTS.items():
                t, outs[label] = _run(fn, syn, inits, st)
                best[label] = min(best[label], t)
        same = int(sum(np.array_equal(a, b) for a, b in zip(outs["previous"][0], outs["now"][0])))
        steps = int(outs["now"][2].sum()) + len(inits)        # + the final labelling of each set
        print(f"  {name:27s} {syn.grid.m}^{d} = {syn.grid.total:>9,d} cells, k = {k:2d}: "
              f"{best['previous']:6.2f} s -> {best['now']:6.2f} s  now/previous "
              f"{best['now'] / best['previous']:.3f}  ({best['now'] / steps / syn.grid.total * 1e9:.2f} ns a cell "
              f"and step)  sets with the same centres {same}/{len(inits)}", flush=True)


# ---------------------------------------------------------------------------------------------
# --paired: whole runs on the real data, previous vs now with the same seed
# ---------------------------------------------------------------------------------------------
def _data(name: str, data_dir: Path, stand_in: tuple[int, int], k: int) -> tuple[np.ndarray, str]:
    path = data_dir / f"{name}.h5"
    if not path.exists():
        return _blobs(*stand_in, k), f"synthetic stand-in ({path} missing)"
    from dpclust.data import apply_transform, load_processed

    X, _ = apply_transform("minmax_pm1", load_processed(path).X)
    return X, str(path)


def paired(seeds: int, data_dir: Path) -> None:
    from dpclust.metrics import nicv
    from dpclust.su2016 import hybrid

    algorithms = {"hybrid": hybrid.hybrid, "eugkm": eugkm.eugkm}
    eugkm.grid_lloyd(*_synopsis(2, 100, 1.0, 2)[:2], 1, 0.0, (-1.0, 1.0))     # compile / load the kernel
    saved = eugkm.grid_lloyd
    for label, dataset, algo, k, eps, stand_in in PAIRED:
        X, source = _data(dataset, data_dir, stand_in, k)
        fn = algorithms[algo]
        st = dict(fn.settings.defaults(), bounds=[-1.0, 1.0])
        res: dict[str, list] = {v: [] for v in VARIANTS}
        for seed in range(seeds):
            settings = dict(st, init_seed=1000 + seed)
            for variant, grid_lloyd in VARIANTS.items():
                eugkm.grid_lloyd = grid_lloyd
                try:
                    t = time.process_time()
                    r = fn(X, k, eps, 0.0, np.random.default_rng(seed), dict(settings))
                    cpu = time.process_time() - t
                finally:
                    eugkm.grid_lloyd = saved
                res[variant].append((np.asarray(r.centers), nicv(X, r.centers), r.info["synopsis_nicv"], cpu,
                                     r.info.get("hybrid_applied"), r.info["cells_total"]))
        prev, now = res["previous"], res["now"]
        diff = np.array([b[1] - a[1] for a, b in zip(prev, now)])
        sdiff = np.array([b[2] - a[2] for a, b in zip(prev, now)])
        same = sum(np.array_equal(a[0], b[0]) for a, b in zip(prev, now))
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.nan
        sse = sdiff.std(ddof=1) / np.sqrt(len(sdiff)) if len(sdiff) > 1 else np.nan
        print(f"{label} ({source}; {prev[0][5]:,d} cells, hybrid applied: {prev[0][4]}), {seeds} seeds:\n"
              f"  NICV previous {np.mean([a[1] for a in prev]):.6f}, now {np.mean([b[1] for b in now]):.6f}; "
              f"paired now - previous {diff.mean():+.2e} ± {se:.2e} (SE); |diff| max {np.abs(diff).max():.2e}\n"
              f"  synopsis NICV of the chosen set: paired now - previous {sdiff.mean():+.2e} ± {sse:.2e} (SE)\n"
              f"  seeds with identical centres {same}/{seeds}; CPU s a run: previous "
              f"{np.mean([a[3] for a in prev]):.2f}, now {np.mean([b[3] for b in now]):.2f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=6, help="initial sets per cell (the runs use 30)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--paired", action="store_true", help="whole runs on the real data, previous vs now")
    ap.add_argument("--seeds", type=int, default=20, help="--paired: seeds per cell")
    ap.add_argument("--data-dir", type=Path, default=Path("data/processed"), help="--paired: processed .h5 files")
    args = ap.parse_args()
    if args.paired:
        paired(args.seeds, args.data_dir)
    else:
        timing(args.sets, args.repeats)


if __name__ == "__main__":
    main()
