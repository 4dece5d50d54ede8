"""Algorithm 1 of Balcan et al. (ICML 2017): private recursive partition ("private grid").

Start from one cube Q that contains the (projected) data; in every round each active cube is split
evenly in every dimension into 2^p sub-cubes, and each sub-cube Q' becomes active with probability

    f(m) = ½·exp(−ε'(γ − m))          if m ≤ γ,
           1 − ½·exp(ε'(γ − m))        otherwise,            m = |Q' ∩ X|,

i.e. exactly the probability that the Laplace-noised count m + Lap(1/ε') exceeds γ (Alg. 1,
ε' = ε/(2 log n)). The centres of all cubes that were ever active are the output C. The loop runs
while depth a ≤ log n and some cube is active.

Privacy (Thm 2): one point lies in exactly one cube per level, so each level is a parallel
composition of Laplace-threshold tests of cost ε'; at most ⌊ln n⌋ + 1 levels run, so the total is
(⌊ln n⌋ + 1)·ε/(2 ln n) ≤ ε. The accountant is charged ε' per level that runs.

Implementation (vectorised, no loop over points or cubes): a cube at depth a is a row of
`lower` corners (all cubes of a level share one side length); every point carries the index of its
active cube (−1 once it falls into an inactive one). Per level, a point's child is coded as
parent·2^p + Σ_b bit_b·2^b, counted with `np.unique`. Empty children must also be activated with
probability f(0) (otherwise the output distribution would reveal emptiness); their number is drawn
exactly as Binomial(#empty, f(0)) and the activated ones are chosen uniformly among the empty slots.

Interpretations (all named settings, declared in `PARTITION_SETTINGS` below and shared with
Algorithm 4's declaration in `algorithm.py`):
* `gamma_factor` c: γ = (c/ε')·ln(n/δ). Alg. 1 states c = 20 (STATED), which at the experiments'
  sizes (n ≤ 10^5, per-partition budget ε/k) exceeds n, so no cube below the root is ever
  activated; the experiments' value is MISSING. The authors' MATLAB uses γ = 1/ε' (EXT) but only ever
  tests non-empty cubes, which is not DP: with γ = 1/ε' an empty cube is activated with probability
  f(0) = ½e^{-1} and the tree explodes. REC c = 1: the smallest factor for which an empty cube is
  activated with probability f(0) = ½·δ/n, so the expected number of spurious cubes stays
  negligible, while cubes with ≳ ln(n/δ)/ε' points split. γ moves only the threshold, never the
  noise, so every c is ε-DP.
* `level_rule`: `paper` uses ε' = ε/(2 ln n) (STATED); `exact` uses ε' = ε/(⌊ln n⌋ + 1), which
  spends the whole partition budget when every level runs.
* log is the natural logarithm (EXT authors' code; the paper does not fix the base).
* n (the data size) is treated as public, as the paper does when it sets ε', γ and the depth.
"""

from __future__ import annotations

import math

import numpy as np

from dpclust.blocks.public_size import PUBLIC_N, public_size
from dpclust.compiled import kernel
from dpclust.mechanisms import laplace_scale
from dpclust.settings import PURE, Guarantee, Interval, Options, Setting, Settings, declared

#: Settings of Algorithm 1 (and of Algorithm 2's cube), the one home of their defaults: Algorithm 4
#: (`algorithm.SETTINGS`) and the Figure 1 illustration (`partition_illustration`) both use these.
PARTITION_SETTINGS = Settings(
    public_n=PUBLIC_N,
    initial_cube_half_side=Setting(
        2.0, "MISSING→REC Q_v = [−hΛ, hΛ]^p + v with h = 2, the smallest cube that contains B(0, Λ) for "
        "every shift v ∈ [−Λ, Λ]^p (Alg. 2 prints h = 1, but Alg. 1 needs X ⊆ Q); utility only, never privacy",
        Interval(float, 0.0, open_lo=True), "h: half side of the initial cube in units of Λ"),
    gamma_factor=Setting(
        1.0, "MISSING→REC c = 1 in γ = (c/ε')·ln(n/δ): empty cubes are activated w.p. δ/(2n). STATED Alg. 1 "
        "c = 20 (then no cube below the root is ever activated at the experiments' n); the EXT authors' code "
        "γ = 1/ε' only works because it never tests empty cubes (not DP)",
        Interval(float, 0.0, open_lo=True), "c of the activation threshold γ; moves the threshold, never the noise"),
    level_rule=Setting(
        "paper", "STATED Alg. 1 ε' = ε/(2 log n) per level ('exact': ε/(⌊ln n⌋ + 1), spends the whole "
        "partition budget when every level runs)", Options("paper", "exact"), "ε' per level of the partition"),
    analysis_delta=Setting(
        0.1, "EXT demo.m δ = 0.1, MISSING in the paper (the δ of Algs. 1-3: the failure probability in γ and the "
        "depth, "
        "not a privacy δ)", Interval(float, 0.0, 1.0, open_lo=True),
        "δ of the analysis, in (0, 1) (1 itself is refused by `threshold`)"),
)

#: Child cubes are coded as parent·2^p + offset in int64 (and slots are drawn with `rng.integers`):
#: active cubes × 2^p must stay below 2^MAX_CODE_BITS.
MAX_CODE_BITS = 62


def activation_probability(m, gamma: float, scale: float) -> np.ndarray:
    """f(m) = Pr[m + Lap(scale) > γ] (Alg. 1 with scale = 1/ε'), computed without overflow."""
    m = np.asarray(m, dtype=float)
    z = (gamma - m) / scale
    return np.where(z >= 0, 0.5 * np.exp(-np.maximum(z, 0.0)), 1.0 - 0.5 * np.exp(np.minimum(z, 0.0)))


def level_epsilon(epsilon: float, n: int, level_rule: str) -> float:
    """ε' per level: ε/(2 ln n) (`paper`, STATED Alg. 1) or ε/(⌊ln n⌋ + 1) (`exact`)."""
    L = math.log(max(n, 3))
    if level_rule == "paper":
        return epsilon / (2.0 * L)
    if level_rule == "exact":
        return epsilon / (math.floor(L) + 1)
    raise ValueError(f"unknown level_rule {level_rule!r} (use 'paper' or 'exact')")


def threshold(eps_level: float, n: int, delta: float, gamma_factor: float) -> float:
    """γ = (c/ε')·ln(n/δ); c = 20 is Alg. 1 as STATED, the default c = 1 is REC (module docstring)."""
    if not (math.isfinite(gamma_factor) and gamma_factor > 0):
        raise ValueError(f"gamma_factor must be a finite number > 0, got {gamma_factor!r}")
    if not 0 < delta < 1:
        raise ValueError(f"the analysis delta of Alg. 1 must lie in (0, 1), got {delta!r}")
    return gamma_factor / eps_level * math.log(n / delta)


def max_levels(n: int) -> int:
    """Rounds of the while loop: a runs 1, 2, … while the depth before the round is ≤ ln n."""
    return math.floor(math.log(max(n, 3))) + 1


def _sample_empty_slots(n_slots: int, occupied: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` distinct slot ids in [0, n_slots) that are not in the sorted array `occupied`."""
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < count:
        draw = rng.integers(0, n_slots, size=2 * (count - chosen.size) + 4, dtype=np.int64)
        if occupied.size:
            pos = np.searchsorted(occupied, draw)
            free = draw[(pos >= occupied.size) | (occupied[np.minimum(pos, occupied.size - 1)] != draw)]
        else:
            free = draw
        _, first = np.unique(np.concatenate([chosen, free]), return_index=True)
        merged = np.concatenate([chosen, free])[np.sort(first)]  # keep draw order, drop repeats
        chosen = merged[:count]
    return chosen


def child_keys(Y: np.ndarray, live: np.ndarray, parent: np.ndarray, active_lower: np.ndarray,
               half: float) -> np.ndarray:
    """Key parent·2^p + Σ_b [y_b − lower_b ≥ half]·2^b of the child cube holding each live point
    (rows `live` of `Y`, in cubes `parent` with lower corners `active_lower`), in one compiled pass:
    the same differences and comparisons as numpy's gather, subtraction and bit packing, without
    their (live, p) copies (tests/balcan2017/test_partition.py)."""
    key = np.empty(live.size, dtype=np.int64)
    _child_keys_kernel()(np.ascontiguousarray(Y, dtype=np.float64), np.ascontiguousarray(live, dtype=np.int64),
                         np.ascontiguousarray(parent, dtype=np.int64),
                         np.ascontiguousarray(active_lower, dtype=np.float64), float(half), key)
    return key


def _child_keys(Y, live, parent, lower, half, key):
    p = Y.shape[1]
    width = np.int64(1) << p
    for t in range(live.shape[0]):
        i = live[t]
        q = parent[t]
        code = np.int64(0)
        for b in range(p):
            if Y[i, b] - lower[q, b] >= half:
                code |= np.int64(1) << b
        key[t] = q * width + code


def _initial_cells(Y, lower, side, point_cell):
    """point_cell[i] = 0 if row i lies in the cube [lower, lower + side)^p, else -1 (numpy's
    `all((Y >= lower) & (Y < lower + side), axis=1)`, the same comparisons, in one pass)."""
    n, p = Y.shape
    for i in range(n):
        cell = 0
        for b in range(p):
            y = Y[i, b]
            if not (y >= lower[b] and y < lower[b] + side):
                cell = -1
                break
        point_cell[i] = cell


def _move_to_children(new_keys, key, live, point_cell):
    """Each live point's new cell: the index of its child key among the sorted active `new_keys`
    (numpy's searchsorted, side left), or -1 when its child is not active."""
    m = new_keys.shape[0]
    for t in range(key.shape[0]):
        x = key[t]
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi) // 2
            if new_keys[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        point_cell[live[t]] = lo if lo < m and new_keys[lo] == x else -1


#: compiled on first use (`dpclust.compiled`): about half of a k-median run on Skin went to these
#: three steps in numpy passes (copying the live points, subtracting their cubes' corners, packing the
#: bits; the cube test; the search and the fancy-indexed updates)
_child_keys_kernel = kernel(_child_keys)
_initial_cells_kernel = kernel(_initial_cells)
_move_to_children_kernel = kernel(_move_to_children)


def private_partition(Y: np.ndarray, epsilon: float, delta: float, lower, side: float,
                      rng: np.random.Generator, accountant, *, gamma_factor: float = 1.0,
                      level_rule: str = "paper", n_param: int | None = None) -> dict:
    """Run Algorithm 1 on the rows of `Y` (n, p) inside the cube [lower, lower + side]^p.

    Returns a dict with `centers` (m, p), `depth` (m,) (the level of each centre, 0 = root),
    `side` (m,) (its cube side), and the per-level numbers `active_per_level`, `eps_level`, `gamma`.
    Points outside the initial cube are never counted (they cannot change any activation).
    """
    Y = np.ascontiguousarray(Y, dtype=float)   # (rows read by the compiled child keys)
    n, p = Y.shape
    n_param = int(n if n_param is None else n_param)
    eps_level = level_epsilon(epsilon, n_param, level_rule)
    gamma = threshold(eps_level, n_param, delta, gamma_factor)
    lower = np.asarray(lower, dtype=float).reshape(1, p)
    n_children = 1 << p
    if p > MAX_CODE_BITS:
        raise ValueError(f"Algorithm 1 in p = {p} dimensions: 2^p children per cube exceed the 64-bit cube codes "
                         f"(p <= {MAX_CODE_BITS}); use projection_rule 'half_log_n' (the 'eight_log_n' rule of the "
                         "theory gives p ≈ 8 ln n)")
    active_lower = lower.copy()
    cur_side = float(side)
    point_cell = np.empty(n, dtype=np.int64)       # the active cube of each point, -1 once outside all
    _initial_cells_kernel()(Y, lower[0], cur_side, point_cell)
    centres, depths, sides, active_per_level = [], [], [], []
    L = math.log(max(n_param, 3))
    a = 0
    while a <= L and active_lower.shape[0] > 0:
        if active_lower.shape[0] * n_children >= 1 << MAX_CODE_BITS:  # a function of released cubes only
            raise ValueError(f"Algorithm 1: {active_lower.shape[0]} active cubes × 2^{p} children overflow the "
                             "64-bit cube codes; use a smaller projection dimension")
        a += 1
        centres.append(active_lower + cur_side / 2.0)
        depths.append(np.full(active_lower.shape[0], a - 1))
        sides.append(np.full(active_lower.shape[0], cur_side))
        active_per_level.append(int(active_lower.shape[0]))
        half = cur_side / 2.0
        live = np.flatnonzero(point_cell >= 0)
        key = child_keys(Y, live, point_cell[live], active_lower, half)
        uniq, counts = np.unique(key, return_counts=True)
        # One Laplace-threshold test per child cube, all cubes of the level disjoint (parallel).
        scale = laplace_scale(1.0, eps_level)
        accountant.spend(eps_level, 0.0, label=f"Alg.1 level {a} activation (parallel over cubes)")
        act = rng.random(uniq.size) < activation_probability(counts, gamma, scale)
        n_slots = active_lower.shape[0] * n_children
        n_empty = n_slots - uniq.size
        p0 = float(activation_probability(0.0, gamma, scale))
        k_empty = int(rng.binomial(n_empty, p0)) if n_empty > 0 and p0 > 0 else 0
        empty_keys = _sample_empty_slots(n_slots, uniq, k_empty, rng) if k_empty else np.empty(0, np.int64)
        new_keys = np.sort(np.concatenate([uniq[act], empty_keys]))
        par = new_keys // n_children
        code = new_keys % n_children
        child_bits = (code[:, None] >> np.arange(p, dtype=np.int64)) & 1
        new_lower = active_lower[par] + child_bits * half
        _move_to_children_kernel()(new_keys, key, live, point_cell)
        active_lower = new_lower
        cur_side = half
    return {
        "centers": np.concatenate(centres, axis=0),
        "depth": np.concatenate(depths),
        "side": np.concatenate(sides),
        "active_per_level": active_per_level,
        "eps_level": eps_level,
        "gamma": gamma,
        "levels_run": a,
    }


@declared(PARTITION_SETTINGS, guarantee=Guarantee(
    PURE.kind, "Laplace-threshold activations, parallel within a level, sequential over ≤ ⌊ln n⌋ + 1 levels (Thm 2)",
    "add/remove one record (n public: it sets ε', γ and the depth)"))
def partition_illustration(X, k, epsilon, delta, rng, settings):
    """One run of Algorithm 1 on low-dimensional data (no projection), for Figure 1.

    The data are centred at the middle of the public box, the initial cube is
    [−hΛ, hΛ]^d + v with v ~ U([−Λ, Λ]^d) (as in Alg. 2, h = `initial_cube_half_side`), and the whole
    ε goes to this single partition. `info` stores the geometry of every active cube (lower corner,
    side, depth) and the candidate centres, in data coordinates, for the figure. The returned k
    centres are the k deepest candidates (post-processing; they only make the run a valid clustering
    record, Figure 1 does not use them).
    """
    from dpclust.accountant import Accountant
    from dpclust.api import ClusteringResult, validate_inputs
    from dpclust.blocks.domain import public_box

    X = validate_inputs(X, k, epsilon, delta)
    lo, hi = public_box(settings, X)
    n, d = X.shape
    h = (hi - lo) / 2.0
    centre = np.full(d, (lo + hi) / 2.0)
    radius = math.sqrt(d) * h
    hs = float(settings["initial_cube_half_side"])
    acc = Accountant(epsilon, 0.0)
    v = rng.uniform(-radius, radius, size=d)
    part = private_partition(X - centre, epsilon, float(settings["analysis_delta"]), v - hs * radius,
                             2.0 * hs * radius, rng, acc, gamma_factor=float(settings["gamma_factor"]),
                             level_rule=settings["level_rule"], n_param=public_size(settings, X))
    C = part["centers"] + centre
    order = np.argsort(-part["depth"], kind="stable")[:k]
    Z = C[order]
    if Z.shape[0] < k:
        Z = np.vstack([Z, np.repeat(centre[None, :], k - Z.shape[0], axis=0)])
    Z = np.clip(Z, lo, hi)
    rest = acc.remaining_epsilon
    if rest > 1e-12 * epsilon:  # levels that did not run: reserved budget, nothing released
        acc.spend(rest, 0.0, label="Alg.1 levels not run (reserved, nothing released)")
    return ClusteringResult.from_accountant(
        Z, acc, iterations=int(part["levels_run"]),
        cube_lower=(part["centers"] - part["side"][:, None] / 2.0 + centre), cube_side=part["side"],
        cube_depth=part["depth"], candidates=C, active_per_level=part["active_per_level"],
        gamma=part["gamma"], eps_level=part["eps_level"], shift=v)
