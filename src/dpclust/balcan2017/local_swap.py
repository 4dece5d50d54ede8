"""Algorithm 3 of Balcan et al. (ICML 2017): private local swap on a candidate set.

Z⁽⁰⁾: k centres drawn i.i.d. uniformly from C. For t = 1..T: choose a pair (x ∈ Z, y ∈ C \\ Z) with
probability ∝ exp(−ε(L(Z − x + y) − L(Z)) / (8Λ²(T + 1))) and swap. Finally output Z⁽ᵗ⁾, t ∈ 1..T,
chosen with probability ∝ exp(−ε L(Z⁽ᵗ⁾) / (8(T + 1)Λ²)).

Privacy (Thm 6): T + 1 exponential mechanisms of budget ε/(T + 1) each. With points and candidates
in B(0, Λ), adding or removing one point changes L(Z) and every increment L(Z') − L(Z) by at most
(2Λ)² = 4Λ²; the standard exponential mechanism exp(ε_r·u/(2Δu)) with Δu = 4Λ² and
ε_r = ε/(T + 1) gives exactly the paper's weights. For the k-median loss (§6.2) the same holds with
Δu = 2Λ (`power = 1`).

The factor-2 slack (tests/balcan2017/test_audit.py) is the PAPER's, not ours. Within a round every
utility −(L(Z − x + y) − L(Z)) contains the same L(Z), which cancels in the normalisation; adding a
point p then lowers every remaining utility by ℓ_{Z'}(p) = min_{z ∈ Z'} ‖p − z‖² ∈ [0, 4Λ²], a
one-sided shift, for which the same weights are (ε_r/2)-DP (likewise for the final choice, whose
utility −L(Z⁽ᵗ⁾) only drops by ℓ_{Z⁽ᵗ⁾}(p)). The paper's Theorem 6 prints an increment sensitivity
of 8Λ² with weights exp(−ε·ΔL/(8Λ²(T + 1))), i.e. the two-sided bound 4Λ² in exp(ε_r·u/(2Δu)), and
charges ε/(T + 1) per mechanism. We implement the paper's weights exp(−ε·ΔL/(8Λ²(T + 1))) verbatim
and charge what the paper charges: sharpening the weights to the tight ε_r/2 analysis would halve
the noise relative to the published algorithm, which is not the paper's Algorithm 3. The
conservative scale stays; the audit test documents the slack (it audits against ε_r/2).

Swap gains are computed incrementally for all k·|C| pairs at once. With a_i the index of the
nearest current centre of point i, d1_i / d2_i the (powered) distance to its nearest / second
nearest centre and D_iy the distance to candidate y,

    L(Z − z_j + y) = Σ_i min(d1_i, D_iy) + Σ_{i: a_i = j} [min(d2_i, D_iy) − min(d1_i, D_iy)],

so one pass over the points per round (in row chunks: a GEMM for D, elementwise minima, and one
(k × rows)·(rows × |C|) product for the grouped sums) gives the whole (k, |C|) gain table. After a
swap only one column of the (n, k) distance matrix changes. The point-candidate distances D are
computed once and cached (float32 up to `SWAP_CACHE_ENTRIES`, float64 up to `SWAP_CACHE64_ENTRIES`),
else again in every round. One compiled pass per chunk (`_swap_sums`) takes the minima and
differences and adds them to the chunk's sums row after row, the order of the one-hot product over
the chunk, so the bytes are the same as that product's.

Interpretation: `swap_rounds_rule` — the theory uses T = 100·k·ln(n/δ) (STATED Alg. 3), which is
~10⁵ rounds at k = 64; the paper's experiments do not state T; the authors' code runs min(k, 20)
rounds (EXT) → rule `capped` with `swap_rounds_cap` = 20 (default).
"""

from __future__ import annotations

import math

import numpy as np

from dpclust.compiled import kernel
from dpclust.mechanisms import exponential_mechanism
from dpclust.metrics import CHUNK_ENTRIES, squared_distances

#: The (n, |C|) point-candidate distances do not change between rounds: they are cached in float32
#: when n·|C| is at most this many entries (≤ 600 MB), else computed per round in row chunks.
SWAP_CACHE_ENTRIES = 150_000_000
#: Above SWAP_CACHE_ENTRIES and up to this many entries (≤ 2 GB) the row chunks are computed once and
#: kept in float64: the very values every round would compute again (same chunks, same arithmetic),
#: so the bytes are those of computing them each round (e.g. Skin at ε = 2: |C| ≈ 900, 10–20 rounds).
SWAP_CACHE64_ENTRIES = 250_000_000
def swap_rounds(rule: str, cap: int, k: int, n: int, delta: float) -> int:
    """T of Alg. 3: `capped` → min(k, cap) (EXT authors' code), `theory` → ⌈100 k ln(n/δ)⌉."""
    if rule == "capped":
        return max(1, min(int(k), int(cap)))
    if rule == "theory":
        return int(math.ceil(100 * k * math.log(n / delta)))
    raise ValueError(f"unknown swap_rounds_rule {rule!r} (use 'capped' or 'theory')")


def _powered(D2: np.ndarray, power: int) -> np.ndarray:
    if power == 2:
        return D2
    if power == 1:
        return np.sqrt(D2, out=D2)
    raise ValueError("power must be 1 (k-median) or 2 (k-means)")


def _nearest_two(Dk: np.ndarray):
    """Index of the nearest column, its value and the second-smallest value, per row (numpy's
    argmin, its value and `np.partition(Dk, 1, axis=1)[:, 1]`, in one compiled pass: a selection,
    no arithmetic, so the same values; +inf as the second with one column)."""
    n = Dk.shape[0]
    a, d1, d2 = np.empty(n, dtype=np.intp), np.empty(n), np.empty(n)
    _nearest_two_kernel()(np.ascontiguousarray(Dk, dtype=np.float64), a, d1, d2)
    return a, d1, d2


def _nearest_two_rows(D, a, d1, d2):
    """Per row of D: the first index of its minimum, the minimum, and the second-smallest value
    (equal to the minimum when it occurs twice), one pass left to right. D holds no NaN (distances
    of validated finite data)."""
    n, k = D.shape
    for i in range(n):
        best, second, at = np.inf, np.inf, 0
        for j in range(k):
            v = D[i, j]
            if v < best:
                second = best
                best = v
                at = j
            elif v < second:
                second = v
        a[i] = at
        d1[i] = best
        d2[i] = second


#: compiled on first use (`dpclust.compiled`): np.argmin, a gather and np.partition (which copies
#: the (n, k) matrix) took most of a k-median run's swap rounds on Skin beside the swap sums
_nearest_two_kernel = kernel(_nearest_two_rows)


class SwapState:
    """Current centres (indices into C), the (n, k) distance matrix and the swap-gain table."""

    def __init__(self, Y: np.ndarray, C: np.ndarray, idx: np.ndarray, power: int):
        self.Y, self.C, self.power = Y, C, power
        self.Y_sq = np.einsum("ij,ij->i", Y, Y)
        self.idx = np.array(idx, dtype=np.int64)
        self.Dk = _powered(squared_distances(Y, C[self.idx], self.Y_sq), power)
        self._cache = None
        self._refresh()

    def _candidate_distances(self, sl: slice) -> np.ndarray:
        """(rows, |C|) powered distances of the rows in `sl` (a row chunk of `new_losses`) to every
        candidate: a view of the cache (float32, or float64 — not to be written) or fresh float64."""
        n, m = self.Y.shape[0], self.C.shape[0]
        if self._cache is None and n * m <= SWAP_CACHE64_ENTRIES:
            dtype = np.float32 if n * m <= SWAP_CACHE_ENTRIES else np.float64
            self._cache = np.empty((n, m), dtype=dtype)
            step = max(1, min(n, CHUNK_ENTRIES // max(m, 1)))   # new_losses' chunks
            for s in range(0, n, step):
                rows = slice(s, s + step)
                self._cache[rows] = _powered(squared_distances(self.Y[rows], self.C, self.Y_sq[rows]), self.power)
        if self._cache is not None:
            return self._cache[sl]
        return _powered(squared_distances(self.Y[sl], self.C, self.Y_sq[sl]), self.power)

    def _refresh(self):
        self.a, self.d1, self.d2 = _nearest_two(self.Dk)
        self.loss = float(self.d1.sum())

    def swap(self, j: int, y: int) -> None:
        self.idx[j] = y
        if self._cache is not None and self._cache.dtype == np.float32:
            self.Dk[:, j] = self._cache[:, y]
        else:  # (not from a float64 cache: its column can differ in the last bit from this product)
            self.Dk[:, j] = _powered(squared_distances(self.Y, self.C[y:y + 1], self.Y_sq)[:, 0], self.power)
        self._refresh()

    def new_losses(self) -> np.ndarray:
        """(k, |C|) table of L(Z − z_j + c_y) for every current slot j and candidate y."""
        n, k, m = self.Y.shape[0], self.idx.size, self.C.shape[0]
        base = np.zeros(m)
        grouped = np.zeros((k, m))
        step = max(1, min(n, CHUNK_ENTRIES // max(m, 1)))
        a = np.ascontiguousarray(self.a, dtype=np.int64)
        for s in range(0, n, step):
            sl = slice(s, s + step)
            base_c, grouped_c = np.zeros(m), np.zeros((k, m))
            _swap_sums_kernel()(self._candidate_distances(sl), self.d1[sl], self.d2[sl], a[sl], base_c, grouped_c)
            base += base_c
            grouped += grouped_c
        return base[None, :] + grouped


def _swap_sums(D, d1, d2, a, base, grouped):
    """Add the rows of one chunk of point-candidate distances `D` to its sums, one row after another:
    base[y] += min(d1_i, D_iy) and grouped[a_i, y] += min(d2_i, D_iy) − min(d1_i, D_iy), in float64
    (a float32 cache widens exactly). Each sum adds the chunk's rows in row order, the order of the
    one-hot product over the chunk that this pass replaced (SciPy's CSR kernel, row after row)."""
    rows, m = D.shape
    for i in range(rows):
        x1 = d1[i]
        x2 = d2[i]
        g = grouped[a[i]]
        for y in range(m):
            v = np.float64(D[i, y])
            m1 = v if v < x1 else x1
            base[y] += m1
            g[y] += (v if v < x2 else x2) - m1


#: compiled on first use (`dpclust.compiled`): one pass over the distances where numpy and SciPy took
#: six (widen, two minima, a difference, two CSR products), in the same order, so the same bytes
_swap_sums_kernel = kernel(_swap_sums)


def local_swap(Y: np.ndarray, C: np.ndarray, k: int, epsilon: float, radius: float, rounds: int,
               rng: np.random.Generator, accountant, power: int = 2, init_index=None) -> dict:
    """Algorithm 3 on points `Y` and candidates `C`, both inside B(0, radius). Spends ε.

    `init_index` (k,) fixes Z⁽⁰⁾ (data-independent; default: k i.i.d. uniform draws from C, Alg. 3).
    Returns `index` (k,) into C of the chosen centres, `centers`, the loss trace, and the round chosen.
    """
    m = C.shape[0]
    sensitivity = (2.0 * radius) ** power
    eps_round = epsilon / (rounds + 1)
    init = rng.integers(0, m, size=k) if init_index is None else np.asarray(init_index, dtype=np.int64)
    state = SwapState(Y, C, init, power)
    history, losses = [], []
    for t in range(rounds):
        new = state.new_losses()
        scores = -(new - state.loss)
        scores[:, state.idx] = -np.inf  # y must lie in C \ Z
        if not np.isfinite(scores).any():
            # C \ Z is empty (|C| ≤ k distinct candidates): the only move is "no swap".
            accountant.spend(eps_round, 0.0, label=f"Alg.3 swap round {t + 1} (no pair available)")
        else:
            pick = exponential_mechanism(scores.ravel(), sensitivity, eps_round, rng, accountant,
                                         label=f"Alg.3 swap round {t + 1}")
            j, y = divmod(pick, m)
            state.swap(j, y)
        history.append(state.idx.copy())
        losses.append(state.loss)
    choice = exponential_mechanism(-np.asarray(losses), sensitivity, eps_round, rng, accountant,
                                   label="Alg.3 final choice of Z(t)")
    idx = history[choice]
    return {"index": idx, "centers": C[idx], "loss_trace": losses, "chosen_round": int(choice) + 1,
            "rounds": rounds, "eps_round": eps_round, "sensitivity": sensitivity}
