"""Floating-point audit: does a released double carry the low-order bits of its input? (Mironov, "On
significance of the least significant bits for differential privacy", CCS 2012.)

A mechanism that releases ``fl(x + N)`` for a noise double N can only reach a data-dependent set of
doubles: an output that the sampler cannot produce from x, but can from a neighbour x', proves the
input was x'. The events below are fixed before any sample is drawn (they may depend on the
neighbouring pair and the public scale, never on the samples), so each is evaluated once and the
counts give a Clopper–Pearson lower bound on ε (`event_audit`, via `dpclust.audit.statistics`).

(a) Reachability. `laplace_reachable(y, x, b)` decides exactly whether numpy's Laplace sampler as the
    mechanisms used it before the grid, ``y = fl(x + N)`` with N = ``rng.laplace(0, b)``, i.e.
    N = fl(b·log(2U)) for U < ½ and N = −fl(b·log(fl(2 − U) − U)) for U ≥ ½, U = m·2^-53 with
    m ∈ [1, 2^53) (numpy's `random_laplace`; U = 0 is redrawn), can produce y from x. Method: on each
    branch, m ↦ fl(x + N(m)) is non-decreasing (log, the products and the sums round monotonically;
    fl(2 − U) − U decreases with m), so a binary search over the 2^52 lattice points of the branch
    finds the smallest m with fl(x + N(m)) ≥ y in 53 steps; y is reachable iff that value (or one of
    its `NEIGHBOURS` on either side, a guard against a non-monotone last ulp of log) equals y.
    `math.log` is the C library's log, the one numpy's sampler calls, so the decision matches
    numpy's output bit for bit. The self-check: every sample drawn from x is reachable from x (0
    false alarms on D; tests/test_audit_floating_point.py).
    `grid_reachable(y, x, scale, support)`: the same question for the grid mechanisms of
    `dpclust.mechanisms` (a multiple of γ = `grid_spacing(scale)` within the sampler's support of x).
(b) A generic low-order-bit distinguisher: `off_grid(y, gamma)`, "y is not a multiple of the power of
    two γ", with γ fixed in advance (e.g. 2^-53 for x ∈ {0, 1}: fl(1 + N) is always a multiple of
    2^-53, N alone often is not). Rounding control: outputs rounded to a data-independent grid
    (`round_to_grid`) never fire it.

How the pipeline's audit table should use it is reported with the change (not wired here).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from dpclust import mechanisms
from dpclust.audit.statistics import clopper_pearson_lower, clopper_pearson_upper, epsilon_from_bounds

__all__ = [
    "EventAuditResult",
    "NEIGHBOURS",
    "event_audit",
    "count_events",
    "grid_reachable",
    "laplace_reachable",
    "off_grid",
    "round_to_grid",
]

#: Lattice points checked on either side of the binary search's answer.
NEIGHBOURS = 3
_HALF = 1 << 52          # m < 2^52 ⟺ U < ½
_TOP = (1 << 53) - 1     # largest m (U = 1 − 2^-53)
_STEP = 2.0 ** -53


def _old_laplace_output(m: int, x: float, b: float) -> float:
    """fl(x + N) for lattice point U = m·2^-53, as numpy's `random_laplace` (loc 0) and `x + ...`."""
    u = m * _STEP
    if m >= _HALF:
        return x + (0.0 - b * math.log((2.0 - u) - u))
    return x + (0.0 + b * math.log(u + u))


def _search(y: float, x: float, b: float, lo: int, hi: int) -> bool:
    """Whether fl(x + N(m)) == y for some m in [lo, hi] (non-decreasing in m): binary search."""
    if _old_laplace_output(lo, x, b) > y or _old_laplace_output(hi, x, b) < y:
        return False
    a, z = lo, hi                      # smallest m with f(m) >= y lies in [a, z]
    while a < z:
        mid = (a + z) // 2
        if _old_laplace_output(mid, x, b) >= y:
            z = mid
        else:
            a = mid + 1
    for m in range(max(lo, a - NEIGHBOURS), min(hi, a + NEIGHBOURS) + 1):
        if _old_laplace_output(m, x, b) == y:
            return True
    return False


def laplace_reachable(y: float, x: float, b: float) -> bool:
    """Whether ``x + rng.laplace(0, b)`` (numpy's sampler, IEEE doubles) can equal `y` exactly."""
    y, x, b = float(y), float(x), float(b)
    if not (math.isfinite(y) and math.isfinite(x) and math.isfinite(b) and b > 0):
        raise ValueError("laplace_reachable needs finite y, x and b > 0")
    # N ≤ 0 on the U < ½ branch, N ≥ 0 on the other; fl(x + N) is monotone in N
    return (y <= x and _search(y, x, b, 1, _HALF - 1)) or (y >= x and _search(y, x, b, _HALF, _TOP))


def grid_reachable(y, x, scale: float, support: float = mechanisms.LAPLACE_SUPPORT):
    """Whether a grid mechanism of `dpclust.mechanisms` with noise scale `scale` can release `y` from
    `x` (elementwise): y is a multiple of γ = `grid_spacing(scale)` and |y − x| ≤ support·scale + γ
    (`support`: `mechanisms.LAPLACE_SUPPORT` or `mechanisms.GAUSSIAN_SUPPORT`). Conservative: a far
    tail cell that holds no noise double still counts as reachable."""
    gamma = mechanisms.grid_spacing(scale)
    y = np.asarray(y, dtype=float)
    return ~off_grid(y, gamma) & (np.abs(y - np.asarray(x, dtype=float)) <= support * scale + gamma)


def off_grid(y, gamma: float):
    """Elementwise: y is not a multiple of the power of two `gamma` (exact: y/γ is exact)."""
    g = float(gamma)
    if not (g > 0 and math.frexp(g)[0] == 0.5):
        raise ValueError(f"gamma must be a power of two, got {gamma!r}")
    q = np.asarray(y, dtype=float) / g
    return q != np.rint(q)


def round_to_grid(y, gamma: float):
    """The rounding control: y rounded to the nearest multiple of the power of two `gamma`."""
    g = float(gamma)
    return np.rint(np.asarray(y, dtype=float) / g) * g


@dataclass(frozen=True)
class EventAuditResult:
    """Counts of a fixed event on samples of M(D) and M(D'), and the lower bound on ε they give.

    epsilon_lower_bound: max(0, the larger of ln(p_lower/p_upper) over the two directions), each bound
        at level 1 − (1 − confidence)/4 (two directions × two one-sided bounds, Bonferroni): with
        probability ≥ `confidence` it does not exceed the mechanism's ε (at δ = `delta`).
    direction: "D/D'" (the event is likelier under D) or "D'/D".
    """

    epsilon_lower_bound: float
    events_D: int
    n_D: int
    events_Dp: int
    n_Dp: int
    direction: str
    confidence: float
    delta: float


def event_audit(events_D: int, n_D: int, events_Dp: int, n_Dp: int, confidence: float = 0.95,
                delta: float = 0.0) -> EventAuditResult:
    """Lower-bound ε from the counts of one event fixed in advance (see the module docstring)."""
    if not (0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not (0 <= events_D <= n_D and 0 <= events_Dp <= n_Dp and n_D > 0 and n_Dp > 0):
        raise ValueError("event counts must satisfy 0 <= events <= n and n > 0")
    level = 1.0 - (1.0 - confidence) / 4.0
    forward = float(epsilon_from_bounds(clopper_pearson_lower(events_D, n_D, level),
                                        clopper_pearson_upper(events_Dp, n_Dp, level), delta))
    backward = float(epsilon_from_bounds(clopper_pearson_lower(events_Dp, n_Dp, level),
                                         clopper_pearson_upper(events_D, n_D, level), delta))
    best, direction = (forward, "D/D'") if forward >= backward else (backward, "D'/D")
    return EventAuditResult(max(best, 0.0), int(events_D), int(n_D), int(events_Dp), int(n_Dp), direction,
                            confidence, delta)


def count_events(outputs: Iterable, event: Callable[[np.ndarray], object]) -> tuple[int, int]:
    """(number of outputs for which `event` holds on any coordinate, number of outputs)."""
    k = n = 0
    for out in outputs:
        n += 1
        k += bool(np.any(event(np.asarray(out, dtype=float))))
    return k, n
