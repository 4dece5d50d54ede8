"""GkM: k-means in the sample-and-aggregate framework of GUPT (Su et al. 2016 §4.1.2, Eq. 3;
Nissim, Raskhodnikova & Smith 2007; Mohan et al. 2012), and GkM-3K (block size 3k, §4.1.2/§5.2).

1. Partition D at random into ℓ blocks (`blocks`: ``"n^0.4"`` — GUPT's ℓ = N^0.4, STATED — or
   ``"n/3k"`` — GkM-3K, blocks of 3k points, STATED; any ``"n^a"`` for Figure 3's block-size
   exponent e = 1 − a). ℓ is clamped to [1, ⌊N/k⌋] so every block holds ≥ k points (REC).
2. Cluster each block with k-means (the authors used scipy's ``kmeans``: `block_restarts` EXT 20
   = scipy's default ``iter``; starts are k distinct block points; `block_max_iter` MISSING→REC 10
   Lloyd iterations per start; the start with the lowest distortion wins). All blocks run at once
   as batched arrays (no Python loop over blocks or points).
3. Align the k centroids across blocks (MISSING: Eq. 3 averages "the j'th centroid" of each
   block; REC `align` = ``sort_first_coordinate``: each block's centroids are ordered by their
   first coordinate, ties by the next).
4. Output range (half the budget, STATED): the `range_quantiles` (REC [0, 1], i.e. "min_i" and
   "max_i") are estimated with the exponential mechanism over the public domain (Smith 2011's private
   quantile: Pr[interval] ∝ length · exp(ε'·(−|rank − q·m|)/(2Δ)), m values of rank sensitivity Δ).
   `output_range` (REC) says over which values: ``per_coordinate`` (the declared reading) estimates
   one range for each of the k·d output coordinates from its ℓ block values (Δ = 1), each draw with
   ε/2/(2kd); ``per_dimension`` is Eq. 3's literal index ("[min_i, max_i] is the estimated output
   range of i'th dimension"): one range per dimension from the k·ℓ block values of that dimension,
   where one tuple moves one block's k values (Δ = k), each draw with ε/2/(2d). The estimates lie
   inside the domain by construction — the paper's fix "bound min_i and max_i to be within the data
   domain".
5. Eq. (3): clamp every block value into [min_i, max_i], average over blocks and add
   Lap(2(max_i − min_i)·k·d/(ℓε)) — implemented as one Laplace mechanism on the normalised averages
   (value − min)/(max − min), whose L1 sensitivity is k·d/ℓ, with ε/2. Centres are clipped to the
   box (post-processing).

Privacy: one tuple lies in exactly one block, so it changes one block's k·d outputs; ranks move
by ≤ 1 (step 4) and each clamped, normalised average by ≤ 1/ℓ (step 5). ℓ depends on N, which is
treated as public (as in the paper). Neighbouring relation, precisely: with N public the proof holds
for datasets of the same size N that differ in one tuple (replace-one). The partition is a
data-independent random permutation of the N row positions dealt round-robin into ℓ blocks, so
replacing one tuple changes exactly one block — the only thing the proof needs (one block's outputs
may change arbitrarily). The paper's add/remove relation (§3.1) is not covered literally: for N and
N + 1 points ℓ may differ, and the round-robin block sizes of N + 1 positions cannot in general be
coupled to those of N with a single block changed. This is the paper's "N is public" assumption, stated here
rather than hidden.

`gkm_analysis` (Figure 3, §5.2, non-private analysis): ``output: sag`` = the aligned block average
without noise; ``output: noise`` = Eq. (3) noise (with the private range estimate) added to the
"best known centroids" (REC: the best of `n_init_sets` non-private Lloyd runs from sphere-packing
sets). Both use `analysis_epsilon` (REC 1.0), spend nothing from a run budget and clip the centres
to the box when `clip_centers` (as GkM). Settings: `SETTINGS` (GkM) and `ANALYSIS_SETTINGS` (the analysis).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import numpy as np

from dpclust import mechanisms as mech
from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult, DPClustError, data_bounds, validate_inputs
from dpclust.blocks.domain import public_box
from dpclust.compiled import kernel
from dpclust.settings import Boolean, Constraint, Interval, Options, SequenceOf, Setting, Settings, declared
from dpclust.su2016.common import OpenUnitInterval, batched_weighted_lloyd, init_set_seeds, sphere_packing_init

_BLOCKS = re.compile(r"^n\^(?P<a>[0-9.]+)$|^n/(?P<c>[0-9.]*)k$")


class BlockCount(Constraint):
    """The number of blocks as a formula of N and k: 'n^a' (ℓ = N^a) or 'n/ck' (blocks of c·k points)."""

    def error(self, value):
        if not isinstance(value, str) or not _BLOCKS.match(value.replace(" ", "")):
            return f"expected 'n^a' or 'n/ck' (e.g. 'n^0.4', 'n/3k'), got {value!r}"
        return None

    def __str__(self):
        return "'n^a' | 'n/ck'"


SETTINGS = Settings(
    blocks=Setting("n^0.4", "STATED §4.1.2 GUPT's ℓ = N^0.4 blocks ('n/3k' for GkM-3K: blocks of 3k points; "
                   "'n^a' for Figure 3's block size N^(1-a))", BlockCount()),
    block_restarts=Setting(20, "EXT scipy.cluster.vq.kmeans default iter=20 (the authors used scipy's kmeans)",
                           Interval(int, 1)),
    block_max_iter=Setting(10, "MISSING→REC Lloyd iterations per start inside a block", Interval(int, 1)),
    align=Setting("sort_first_coordinate", "MISSING→REC how Eq. 3's 'j'th centroid' of each block is matched: "
                  "each block's centroids sorted by their first coordinate (ties by the next)",
                  Options("sort_first_coordinate")),
    range_fraction=Setting(0.5, "STATED §4.1.2 'One half of the total privacy budget is used to estimate this "
                           "output range'", OpenUnitInterval()),
    range_quantiles=Setting([0.0, 1.0], "STATED §4.1.2 [min_i, max_i], estimated privately (exponential-mechanism "
                            "quantiles)", SequenceOf(Interval(float, 0, 1), length=2)),
    clip_centers=Setting(True, "REC clip the released centres to the public box (post-processing)", Boolean()),
    output_range=Setting("per_coordinate", "REC the values one private range [min_i, max_i] covers: each of the "
                         "k·d centroid coordinates ('per_coordinate', our reading) or, Eq. 3's literal index, each "
                         "of the d dimensions over all k centroids ('per_dimension')",
                         Options("per_coordinate", "per_dimension")),
)

#: Figure 3's analysis: GkM's settings (same blocks and block k-means) plus what the analysis adds.
ANALYSIS_SETTINGS = SETTINGS.extend(
    output=Setting("sag", "STATED §5.2 Figure 3's curves: 'sag' = block average without noise, 'noise' = Eq. 3 "
                   "noise on the best known centroids", Options("sag", "noise")),
    analysis_epsilon=Setting(1.0, "MISSING→REC ε of Figure 3 (noise output; nothing is spent from a run budget)",
                             Interval(float, 0, open_lo=True)),
    n_init_sets=Setting(30, "REC 'best known centroids' = the best of 30 non-private Lloyd runs from "
                        "sphere-packing sets (as §5.1's baseline)", Interval(int, 1)),
    lloyd_max_iter=Setting(100, "REC iteration cap of those Lloyd runs", Interval(int, 1)),
)


def num_blocks(spec: str, n: int, k: int) -> int:
    m = _BLOCKS.match(str(spec).replace(" ", ""))
    if not m:
        raise DPClustError(f"cannot read blocks {spec!r}: use 'n^a' or 'n/ck' (e.g. 'n/3k')")
    if m.group("a") is not None:
        ell = n ** float(m.group("a"))
    else:
        c = float(m.group("c") or 1.0)
        ell = n / (c * k)
    return int(min(max(1, round(ell)), max(1, n // k)))


_GROUP_BYTES = 1 << 20   # target size of one block-group distance slab (engineering)
_CHUNK_BYTES = 1 << 25   # target size of one chunk's centres (engineering: no giant temporaries)


def _min_and_label(D, m, lab):
    """m = min over axis 1 of D, lab = the lowest index attaining it (numpy's argmin, ties included),
    for D laid out (blocks, k, R, B): per (block, restart) a running minimum over the k rows, each a
    contiguous pass over the B points that the compiler vectorises."""
    nb, k, R, B = D.shape
    for b in range(nb):
        for r in range(R):
            for i in range(B):
                m[b, r, i] = D[b, 0, r, i]
                lab[b, r, i] = 0
            for j in range(1, k):
                for i in range(B):
                    v = D[b, j, r, i]
                    if v < m[b, r, i]:           # strict: the lowest index of a tie stays
                        m[b, r, i] = v
                        lab[b, r, i] = j


def _sums_in_order(lab, X, w, counts, sums):
    """Per (block, restart, cluster), into zeroed `counts` (a, R, k) and `sums` (a, R, k, d): the
    weights and coordinates of its points, added one point at a time in the block's order from 0
    (the bytes of one weighted bincount per restart and dimension)."""
    a, R, B = lab.shape
    d = X.shape[2]
    for b in range(a):
        for r in range(R):
            for i in range(B):
                j = lab[b, r, i]
                counts[b, r, j] += w[b, i]
                for f in range(d):
                    sums[b, r, j, f] += X[b, i, f]


#: the two passes above compiled by numba on first use (`dpclust.compiled`): one pass each where
#: numpy needed k + 1 (labels) and R·(d + 1) bincounts (sums) over the same arrays
_min_and_label_kernel = kernel(_min_and_label)
_sums_in_order_kernel = kernel(_sums_in_order)


def min_and_first_argmin(D: np.ndarray, m: np.ndarray, lab: np.ndarray) -> None:
    """m = min over axis 1 of D, lab = the lowest index attaining it (numpy's argmin), for D laid
    out (blocks, k, …) with m and lab C-contiguous shaped as D without its axis 1."""
    _min_and_label_kernel()(D, m, lab)


def cluster_sums(lab: np.ndarray, X64: np.ndarray, w: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per (block, restart, cluster): the count and the coordinate sums of its points, added in the
    block's point order from 0. `lab` (a, R, B) labels, `X64` (a, B, d) points (zero rows for
    padding), `w` (a, B) 0/1 weights."""
    a, R, B = lab.shape
    counts = np.zeros((a, R, k))
    sums = np.zeros((a, R, k, X64.shape[2]))
    _sums_in_order_kernel()(np.ascontiguousarray(lab), np.ascontiguousarray(X64), np.ascontiguousarray(w),
                            counts, sums)
    return counts, sums


def _lloyd_blocks(Xb, wb, C, k, max_iter, freeze_converged):
    """Lloyd on every (block, restart) of one chunk of blocks: `Xb` (g, B, d) float32 points,
    `wb` (g, B) weights, `C` (g, R, k, d) float32 starts.
    Returns each block's best centres (g, k, d)."""
    g, B, d = Xb.shape
    restarts = C.shape[1]
    # augmented points [x, ‖x‖², 1] (g, d + 2, B): with centres [−2c, 1, ‖c‖²] one GEMM gives
    # ((x·c)·(−2) + ‖x‖²) + ‖c‖², accumulated in that order by a BLAS that runs the inner dimension
    # in order (OpenBLAS here: bit-identical to adding the terms one pass at a time)
    xT = np.empty((g, d + 2, B), dtype=np.float32)
    xT[:, :d] = np.swapaxes(Xb, 1, 2)
    xT[:, d] = np.einsum("lbd,lbd->lb", Xb, Xb)
    xT[:, d + 1] = 1.0
    xT64 = xT.astype(np.float64)
    m2 = np.float32(-2.0)
    lab_dtype = np.min_scalar_type(k)                                            # small labels: less memory traffic
    c_dim = restarts * k
    group = max(1, _GROUP_BYTES // (c_dim * B * 8))       # blocks per cache-resident distance slab

    def nearest(C, blocks=None):
        """(min_j D, argmin_j D) over the k centres for the blocks `blocks` (all when None; C holds
        their centres), D = ‖x‖² − 2x·c + ‖c‖², laid out (blocks, k, R, B) so every pass below runs
        over long contiguous rows, and computed a few blocks at a time so each slab stays in cache.
        −2 is folded into the centres (exact power-of-two scaling), so every entry equals
        (x·c)·(−2) + ‖x‖² + ‖c‖² summed in that order by one GEMM per block, whichever blocks are
        asked for; the label is the lowest index attaining the minimum, as argmin's."""
        nb = C.shape[0]
        Ca = np.empty((nb, k, restarts, d + 2), dtype=C.dtype)                   # rows (j, r)
        np.multiply(np.swapaxes(C, 1, 2), m2, out=Ca[..., :d])                  # no (blocks, k, R, d) temporary
        Ca[..., d] = 1.0
        Ca[..., d + 1] = np.swapaxes(np.einsum("lrkd,lrkd->lrk", C, C), 1, 2)
        Ca = Ca.reshape(nb, c_dim, d + 2)
        xs = xT if C.dtype == xT.dtype else xT64
        m = lab = None
        for g0 in range(0, nb, group):
            sl = slice(g0, min(g0 + group, nb))
            xg = xs[sl] if blocks is None else xs[blocks[sl]]
            D = np.matmul(Ca[sl], xg).reshape(-1, k, restarts, B)
            if m is None:
                m = np.empty((nb, restarts, B), dtype=D.dtype)
                lab = np.zeros((nb, restarts, B), dtype=lab_dtype)
            min_and_first_argmin(D, m[sl], lab[sl])
        return m, lab

    # Lloyd on every (block, restart) at once. A block whose labels (all its restarts) did not
    # change in an iteration has reached its fixed point: its centres are the same bytes at every
    # later iteration, so it is left out of the rest (the per-block arithmetic of the others is
    # unchanged: one GEMM per block, and each cluster's sums accumulated over its points in order).
    X64 = Xb.astype(np.float64)
    w64 = wb.astype(np.float64)
    active = np.arange(g)
    prev = None
    for _ in range(max_iter):
        lab = nearest(C[active], None if active.size == g else active)[1]         # (a, R, B)
        if prev is not None and freeze_converged:
            moved = (lab != prev).reshape(active.size, -1).any(axis=1)
            if not moved.all():
                active, lab = active[moved], lab[moved]
                if active.size == 0:
                    break
        prev = lab
        full = active.size == g
        counts, sums = cluster_sums(lab, X64 if full else X64[active], w64 if full else w64[active], k)
        sums = sums.astype(np.float32)
        if C.dtype != np.float64:   # the first update: start points (float32) become float64 means
            C = C.astype(np.float64)
        # a cluster with points moves to their mean (float32 sums / counts); an empty one stays
        Cu = C if full else C[active]
        np.divide(sums, counts[..., None], out=Cu, where=(counts > 0)[..., None])
        if not full:
            C[active] = Cu
    distortion = (np.maximum(nearest(C)[0], 0.0) * wb[:, None, :]).sum(axis=2)   # (g, R)
    best = distortion.argmin(axis=1)
    return C[np.arange(g), best]


def block_kmeans(X, ell, k, restarts, max_iter, rng, *, freeze_converged: bool = True,
                 chunk_bytes: int = _CHUNK_BYTES):
    """Centroids (ℓ, k, d) of every block (random partition into ℓ near-equal blocks).
    Blocks are independent: after the random draws (partition, starts) they are clustered a chunk
    at a time (about `chunk_bytes` of centres or one-hot labels), so no array grows with ℓ·R·k·d.
    Optimisations, the same bytes either way: `freeze_converged` (blocks at their fixed point leave
    the iterations) and the chunks."""
    n, d = X.shape
    B = -(-n // ell)
    perm = rng.permutation(n)
    pad = ell * B - n
    # block b gets positions b, b+ℓ, b+2ℓ, … of the permutation: sizes differ by at most 1
    slots = np.concatenate([perm, np.full(pad, -1)]).reshape(B, ell).T          # (ℓ, B)
    valid = slots >= 0
    # starts: k distinct valid points of each block, per restart
    keys = rng.random((ell, restarts, B))
    keys[np.broadcast_to(~valid[:, None, :], keys.shape)] = np.inf
    start_idx = np.argpartition(keys, k - 1, axis=2)[:, :, :k]                  # (ℓ, R, k)
    out = np.empty((ell, k, d))
    chunk = max(1, int(chunk_bytes) // (restarts * k * max(d + 2, B) * 8))   # centres, one-hot labels
    for b0 in range(0, ell, chunk):
        sl = slice(b0, min(b0 + chunk, ell))
        # the per-block k-means is the non-private f of sample-and-aggregate: float32 is enough (the
        # privacy of the release rests on the clamping to the private range, not on f's precision)
        Xb = np.where(valid[sl, :, None], X[np.where(valid[sl], slots[sl], 0)], 0.0).astype(np.float32)
        C = Xb[np.arange(Xb.shape[0])[:, None, None], start_idx[sl]]                 # (g, R, k, d) starts
        out[sl] = _lloyd_blocks(Xb, valid[sl].astype(np.float32), C, k, max_iter, freeze_converged)
    return out


def align_blocks(cents: np.ndarray, how: str) -> np.ndarray:
    if how != "sort_first_coordinate":
        raise DPClustError(f"unknown align {how!r}: use sort_first_coordinate")
    ell, k, d = cents.shape
    keys = [cents[:, :, i] for i in range(d - 1, -1, -1)]                      # lexsort: last key primary
    order = np.lexsort(keys, axis=-1) if d > 1 else np.argsort(cents[:, :, 0], axis=1, kind="stable")
    return np.take_along_axis(cents, order[..., None], axis=1)


def private_quantile(values: np.ndarray, q: float, lo: float, hi: float, epsilon: float, rng,
                     acc: Accountant | None, label: str) -> float:
    """ε-DP q-quantile of values in [lo, hi] (exponential mechanism over intervals, Δrank = 1)."""
    z = np.sort(np.clip(values, lo, hi))
    edges = np.concatenate([[lo], z, [hi]])
    lengths = np.diff(edges)
    with np.errstate(divide="ignore"):
        log_lengths = np.log(lengths)
    return _draw_quantile(z, edges, lengths, log_lengths, q, epsilon, rng, acc, label)


def _draw_quantile(z, edges, lengths, log_lengths, q, epsilon, rng, acc, label, sensitivity=1.0) -> float:
    """The exponential-mechanism draw of `private_quantile` from its precomputed sorted values,
    interval edges, lengths and log-lengths (charge, then draw); `sensitivity`: of a rank, the most
    values one tuple can move."""
    ranks = np.arange(z.size + 1)
    utility = -np.abs(ranks - q * z.size)
    c = mech.exponential_logit_scale(sensitivity, epsilon)
    if acc is not None:
        acc.spend(epsilon, 0.0, label=label)
    logw = log_lengths + c * utility      # some interval has positive length: lengths sum to hi − lo > 0
    i = mech.sample_from_log_weights(logw, rng)
    # one uniform of the chosen interval, released on a grid of the public range [edges[0], edges[-1]] =
    # [lo, hi]: the double must not carry the data edges' low-order bits (mechanisms.FLOATING_POINT_GUARANTEE)
    return mech.uniform_in_interval_on_grid(edges[i], lengths[i], edges[-1] - edges[0], rng, accountant=acc,
                                            epsilon=epsilon, candidates=logw.size, who=label or "quantile")


def private_range(cents, lo, hi, epsilon, quantiles, rng, acc, output_range="per_coordinate"):
    """Step 4: the private (mins, maxs), each (k, d), of the aligned block centroids (ℓ, k, d)."""
    ell, k, d = cents.shape
    q_lo, q_hi = float(quantiles[0]), float(quantiles[1])
    if output_range == "per_dimension":
        return _range_per_dimension(cents, lo, hi, epsilon, q_lo, q_hi, rng, acc)
    if output_range != "per_coordinate":
        raise DPClustError(f"unknown output_range {output_range!r}: per_coordinate or per_dimension")
    per = epsilon / (2 * k * d)
    mins = np.empty((k, d))
    maxs = np.empty((k, d))
    # sorted values, interval edges and log-lengths of all k·d coordinates at once (columns
    # j·d + i); the draws below then run coordinate by coordinate in the original order
    z_all = np.sort(np.clip(cents.reshape(ell, k * d), lo, hi), axis=0).T.copy()        # (kd, ℓ)
    edges_all = np.concatenate([np.full((k * d, 1), lo), z_all, np.full((k * d, 1), hi)], axis=1)
    len_all = np.diff(edges_all, axis=1)
    with np.errstate(divide="ignore"):
        log_all = np.log(len_all)
    for j in range(k):          # loop over the k·d output coordinates only
        for i in range(d):
            col = j * d + i
            parts = (z_all[col], edges_all[col], len_all[col], log_all[col])
            a = _draw_quantile(*parts, q_lo, per, rng, acc, f"GkM range min[{j},{i}]")
            b = _draw_quantile(*parts, q_hi, per, rng, acc, f"GkM range max[{j},{i}]")
            mins[j, i], maxs[j, i] = min(a, b), max(a, b)
    return mins, maxs


def _range_per_dimension(cents, lo, hi, epsilon, q_lo, q_hi, rng, acc):
    """Eq. 3's literal reading: one range per dimension i over the k·ℓ values cents[:, :, i]. One
    tuple changes one block, i.e. k of those values, so a rank moves by at most k (Δ = k); the 2d
    draws share `epsilon` equally. The range is the same for the k centroids."""
    ell, k, d = cents.shape
    per = epsilon / (2 * d)
    mins = np.empty(d)
    maxs = np.empty(d)
    z_all = np.sort(np.clip(cents.reshape(ell * k, d), lo, hi), axis=0).T.copy()       # (d, kℓ)
    edges_all = np.concatenate([np.full((d, 1), lo), z_all, np.full((d, 1), hi)], axis=1)
    len_all = np.diff(edges_all, axis=1)
    with np.errstate(divide="ignore"):
        log_all = np.log(len_all)
    for i in range(d):
        parts = (z_all[i], edges_all[i], len_all[i], log_all[i])
        a = _draw_quantile(*parts, q_lo, per, rng, acc, f"GkM range min[{i}]", sensitivity=float(k))
        b = _draw_quantile(*parts, q_hi, per, rng, acc, f"GkM range max[{i}]", sensitivity=float(k))
        mins[i], maxs[i] = min(a, b), max(a, b)
    return np.broadcast_to(mins, (k, d)).copy(), np.broadcast_to(maxs, (k, d)).copy()


def noisy_average(cents, mins, maxs, epsilon, rng, acc, ell):
    k, d = mins.shape
    rng_w = maxs - mins
    safe = np.where(rng_w > 0, rng_w, 1.0)
    norm = (np.clip(cents, mins, maxs) - mins) / safe                           # in [0, 1]
    avg = norm.mean(axis=0)
    noisy = mech.laplace_mechanism(avg.ravel(), k * d / ell, epsilon, rng, accountant=acc,
                                   label="GkM Eq. (3) noisy average").reshape(k, d)
    return mins + noisy * rng_w


def _prepare(X, k, settings, rng):
    n, d = X.shape
    ell = num_blocks(settings["blocks"], n, k)
    cents = block_kmeans(X, ell, k, int(settings["block_restarts"]), int(settings["block_max_iter"]), rng)
    return ell, align_blocks(cents, settings["align"])


@declared(SETTINGS, guarantee=__import__(__package__ + ".guarantees", fromlist=["*"]).GKM)
def gkm(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """GkM / GkM-3K (§4.1.2): sample and aggregate with a private output range and Eq. (3)."""
    X = validate_inputs(X, k, epsilon, delta)
    public_box(settings, X)
    lo, hi = data_bounds(settings)
    epsilon = float(epsilon)
    frac = float(settings["range_fraction"])
    acc = Accountant(epsilon)
    ell, cents = _prepare(X, k, settings, rng)
    mins, maxs = private_range(cents, lo, hi, frac * epsilon, settings["range_quantiles"], rng, acc,
                               settings["output_range"])
    C = noisy_average(cents, mins, maxs, acc.remaining_epsilon, rng, acc, ell)
    if settings["clip_centers"]:
        C = np.clip(C, lo, hi)
    return ClusteringResult.from_accountant(C, acc, iterations=None, blocks=ell, block_size=X.shape[0] / ell)


@lru_cache(maxsize=64)
def _best_known(key: str, X_bytes_shape, k, lo, hi, seeds, max_iter):
    X = np.frombuffer(X_bytes_shape[0]).reshape(X_bytes_shape[1])
    inits = np.stack([sphere_packing_init(k, X.shape[1], (lo, hi), s) for s in seeds])
    C, cost, _ = batched_weighted_lloyd(X, np.ones(X.shape[0]), inits, max_iter, 0.0, (lo, hi))
    return C[int(np.argmin(cost))]


@declared(ANALYSIS_SETTINGS, guarantee=__import__(__package__ + ".guarantees", fromlist=["*"]).NON_PRIVATE_ANALYSIS)
def gkm_analysis(X, k, epsilon, delta, rng, settings) -> ClusteringResult:
    """Figure 3's error decomposition (non-private analysis; see module docstring)."""
    X = validate_inputs(X, k)
    lo, hi = data_bounds(settings)
    eps = float(settings["analysis_epsilon"])
    out = settings["output"]
    ell, cents = _prepare(X, k, settings, rng)
    if out == "sag":
        C = cents.mean(axis=0)
    elif out == "noise":
        mins, maxs = private_range(cents, lo, hi, float(settings["range_fraction"]) * eps,
                                   settings["range_quantiles"], rng, None, settings["output_range"])
        seeds = tuple(init_set_seeds(int(settings["init_seed"]), int(settings["n_init_sets"])))
        key = hashlib.sha1(X.tobytes()).hexdigest()
        best = _best_known(key, (X.tobytes(), X.shape), k, lo, hi, seeds, int(settings["lloyd_max_iter"]))
        C = noisy_average(np.broadcast_to(best, (ell,) + best.shape), mins, maxs,
                          (1 - float(settings["range_fraction"])) * eps, rng, None, ell)
    else:
        raise DPClustError(f"unknown output {out!r}: sag or noise")
    if settings["clip_centers"]:
        C = np.clip(C, lo, hi)
    return ClusteringResult(C, 0.0, 0.0, None, {"blocks": ell, "output": out, "block_size": X.shape[0] / ell})
