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

(c) The design of the pipeline's audit (`release_audit`, run by `dpclust.pipeline.audit_job` for the rows
    "<algorithm>, floating point" of config/papers/audit.yaml): a whole algorithm run many times on
    two tiny neighbouring datasets, and a `ReleaseEvent` fixed in advance on its released centres: "a
    coordinate strictly inside the public box (not on a clip face) that no Laplace release of the
    algorithm can produce from D's value", i.e. neither numpy's raw sampler (`laplace_reachable`, the
    mechanisms before the grid) nor the grid mechanisms (`grid_reachable`) at any of the algorithm's
    noise scales. The scales are those a calibration run on D draws through
    `dpclust.mechanisms.laplace_noise` (`recorded_laplace_scales`): public functions of ε and the
    settings, known before any sample. Each audit reports three things besides the bound:
      * self-check on D: the event never fires on D's outputs (with the current mechanisms and with
        the legacy ones), which shows it does not fire on legitimate releases. For an algorithm that
        releases a noisy sum as is only when a noisy count is ≤ 1 (SuLQ's steps with Laplace sums, as in
        Balcan et al.'s refinement), the event also asks the
        coordinate to be reachable from D′'s value (`from_Dp`, every coordinate of the centre): a
        quotient of two noisy doubles then fires it only by a rare coincidence (≈ 0.05 % measured),
        which the pipeline's self-check tolerates up to 1 % (dpclust.pipeline.audit_job);
      * rounding control: the legacy outputs rounded to a data-independent grid (`round_to_grid`,
        the coarsest grid of the scales) never fire it;
      * power (the positive control): the same algorithm with every release of `dpclust.mechanisms`
        made as before the grid (`legacy_releases`: fl(value + noise), the same noise doubles) is
        caught far above its claimed ε. `legacy_laplace_release`, the raw-float Laplace sampler on
        its own (`legacy_laplace`), is the table's control row. Neither is used by any algorithm.

(d) Gaussian releases (``mechanism="gaussian"`` of `ReleaseEvent` and `release_audit`). numpy's normal
    sampler is a ziggurat (z = ±fl(m·w_i), m < 2^52, 256 layers, plus a tail): an exact reachability test
    as in (a) would be feasible but weak, since beyond |z| ≈ 0.02 nearly every double is an output, and
    it could not tell a quotient from a single release. Design (b) instead gives a sound event fixed by
    D's value alone, independent of the sampler. Lemma: for a double x ≠ 0 with 2^e ≤ |x| < 2^(e+1) and ANY double N,
    fl(x + N) is a multiple of Q(x) = 2^(e−53) (`low_bit_grid`). (If |N| ≥ 2^(e−1), x and N are both
    multiples of Q, so is the exact sum, and so is its rounding; if |N| < 2^(e−1), |x + N| > 2^(e−1),
    where every double is a multiple of Q.) So the event "a coordinate strictly inside the box that is
    not a multiple of Q(x) for any of D's values x" never fires on D's raw-float releases fl(x + N),
    whatever the sampler, nor on the grid releases (multiples of γ = `grid_spacing(σ)` ≫ Q, checked
    against the σ a calibration run on D draws, `recorded_gaussian_sigmas`), nor on the box's faces
    (excluded) or a uniform fallback on a coarser lattice. On D′, whose value x′ sits in a lower binade
    (best x′ = 0: fl(0 + N) = N), a release below |x|/2 keeps the low-order bits of N: the event fires
    whenever such a release falls off the grid (≈ P(|N| < |x|/2) times the share of doubles off Q there).
    `floor` (|y| ≥ floor) keeps out, by magnitude, outputs that are not a single release (SuLQ's noisy
    sum divided by a noisy count > 1 of Laplace scale ≈ 10^9: |y| ≈ 10^-9); the self-check then tolerates
    a chance quotient as for `from_Dp`. Self-check, rounding control and power are as in (c); the rounding
    grid is that of the largest σ. Covered: SuLQ with Gaussian sums (its noisy count ≤ 1 branch, with a
    floor) and Nguyen et al.'s NoisyAVG (k = 1, 256 copies of a record: mean + N(0, σ²), σ set by a noisy
    count, which the event does not need). `legacy_gaussian_release` (the raw-float Gaussian sampler on
    its own, `legacy_gaussian`) is the Gaussian control row.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from dpclust import mechanisms
from dpclust.audit.statistics import clopper_pearson_lower, clopper_pearson_upper, epsilon_from_bounds

__all__ = [
    "EventAuditResult",
    "MECHANISMS",
    "NEIGHBOURS",
    "ReleaseAudit",
    "ReleaseEvent",
    "count_events",
    "event_audit",
    "grid_reachable",
    "laplace_reachable",
    "legacy_gaussian",
    "legacy_gaussian_release",
    "legacy_laplace",
    "legacy_laplace_release",
    "legacy_releases",
    "low_bit_grid",
    "off_grid",
    "recorded_gaussian_sigmas",
    "recorded_laplace_scales",
    "release_audit",
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


def low_bit_grid(x: float) -> float:
    """Q(x) = 2^(⌊log2 |x|⌋ − 53) for a double x ≠ 0: fl(x + N) is a multiple of Q(x) for every double N
    (module docstring, (d)); exact, from the binary exponent."""
    x = float(x)
    if not (math.isfinite(x) and x != 0.0):
        raise ValueError(f"low_bit_grid needs a finite x != 0 (fl(0 + N) = N carries every bit), got {x!r}")
    return math.ldexp(1.0, math.frexp(x)[1] - 1 - 53)     # |x| = m·2^E, m ∈ [½, 1): ⌊log2 |x|⌋ = E − 1


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


# ---------------------------------------------------------------------------------------------
# (c) The design of the pipeline's audit: legacy controls, the event, the runner
# ---------------------------------------------------------------------------------------------
def legacy_laplace(value, scale: float, rng: np.random.Generator) -> np.ndarray:
    """THE LEGACY RAW-FLOAT LAPLACE SAMPLER, an audit control only (no algorithm may call it):
    fl(value + N), N = ``rng.laplace(0, scale)`` (drawn by `mechanisms.laplace_noise`, the same doubles),
    i.e. the Laplace mechanism as dpclust released it before the grid. Its low-order bits give the
    value away (Mironov 2012)."""
    value = np.asarray(value, dtype=float)
    return value + mechanisms.laplace_noise(value.shape, float(scale), rng)


def legacy_laplace_release(X, k, epsilon, delta, rng, settings):
    """The positive control of the floating-point design, shaped like a clustering algorithm: k copies of
    the records' sum plus `legacy_laplace` noise calibrated to the sum's L1 sensitivity under add/remove
    (d·max(|lo|, |hi|) for the public box ``settings["bounds"]``), clipped to the box. ε-DP on the reals,
    not in floating point: the audit must catch it."""
    from dpclust.accountant import Accountant
    from dpclust.api import ClusteringResult

    X = np.asarray(X, dtype=float)
    lo, hi = (float(v) for v in settings["bounds"])
    acc = Accountant(float(epsilon))
    acc.spend(float(epsilon), label="legacy raw-float Laplace sum (positive control)")
    scale = mechanisms.laplace_scale(X.shape[1] * max(abs(lo), abs(hi)), float(epsilon))
    centre = np.clip(legacy_laplace(X.sum(axis=0), scale, rng), lo, hi)
    return ClusteringResult.from_accountant(np.repeat(centre[None, :], int(k), axis=0), acc)


def legacy_gaussian(value, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """THE LEGACY RAW-FLOAT GAUSSIAN SAMPLER, an audit control only (no algorithm may call it):
    fl(value + N), N = ``rng.normal(0, sigma)`` (the draws of `mechanisms.gaussian_mechanism`, the same
    doubles), i.e. the Gaussian mechanism as dpclust released it before the grid."""
    value = np.asarray(value, dtype=float)
    return value + rng.normal(0.0, float(sigma), size=value.shape)


def legacy_gaussian_release(X, k, epsilon, delta, rng, settings):
    """The Gaussian positive control, shaped like a clustering algorithm: k copies of the records' sum plus
    `legacy_gaussian` noise calibrated (`mechanisms.gaussian_sigma`, analytic) to the sum's L2 sensitivity
    under add/remove (√d·max(|lo|, |hi|) for the public box ``settings["bounds"]``), clipped to the box.
    (ε, δ)-DP on the reals, not in floating point: the audit must catch it."""
    from dpclust.accountant import Accountant
    from dpclust.api import ClusteringResult

    X = np.asarray(X, dtype=float)
    lo, hi = (float(v) for v in settings["bounds"])
    acc = Accountant(float(epsilon), float(delta))
    acc.spend(float(epsilon), float(delta), label="legacy raw-float Gaussian sum (positive control)")
    sigma = mechanisms.gaussian_sigma(math.sqrt(X.shape[1]) * max(abs(lo), abs(hi)), float(epsilon), float(delta))
    centre = np.clip(legacy_gaussian(X.sum(axis=0), sigma, rng), lo, hi)
    return ClusteringResult.from_accountant(np.repeat(centre[None, :], int(k), axis=0), acc)


@contextmanager
def _patched(name: str, replacement: Callable) -> Iterator[None]:
    """`dpclust.mechanisms.<name>` (and every module-level binding of it) replaced for the block."""
    from dpclust.audit.statistics import _rebind_everywhere

    orig = getattr(mechanisms, name)
    setattr(mechanisms, name, replacement)
    _rebind_everywhere({id(orig): replacement})
    try:
        yield
    finally:
        setattr(mechanisms, name, orig)
        _rebind_everywhere({id(replacement): orig})


@contextmanager
def legacy_releases() -> Iterator[Counter]:
    """Every release of `dpclust.mechanisms` made as before the grid, for the duration of the block:
    `release_on_grid(value, noise, γ)` returns fl(value + noise) (the same noise doubles, not rounded to
    γ), which is what the Laplace, Gaussian, norm-Laplace and interval mechanisms released before.
    Yields a counter of the releases (``calls["release"]``). Audit control only; process-global, not
    thread-safe."""
    calls: Counter = Counter()

    def raw_release(value, noise, gamma, who: str = "release_on_grid"):
        calls["release"] += 1
        return np.asarray(np.add(np.asarray(value, dtype=float), np.asarray(noise, dtype=float)))

    with _patched("release_on_grid", raw_release):
        yield calls


@contextmanager
def recorded_laplace_scales() -> Iterator[list[float]]:
    """The scale b of every Laplace draw made through `dpclust.mechanisms.laplace_noise` in the block
    (every Laplace release of the mechanisms draws there), in order."""
    scales: list[float] = []
    orig = mechanisms.laplace_noise

    def laplace_noise(shape, scale, rng):
        scales.append(float(scale))
        return orig(shape, scale, rng)

    with _patched("laplace_noise", laplace_noise):
        yield scales


@contextmanager
def recorded_gaussian_sigmas() -> Iterator[list[float]]:
    """The σ of every Gaussian calibration made through `dpclust.mechanisms.gaussian_sigma` in the block
    (`gaussian_mechanism` and NoisyAVG's `gaussian_on_grid` calls take their σ there), in order."""
    sigmas: list[float] = []
    orig = mechanisms.gaussian_sigma

    def gaussian_sigma(sensitivity, epsilon, delta, calibration="analytic"):
        sigma = orig(sensitivity, epsilon, delta, calibration)
        sigmas.append(float(sigma))
        return sigma

    with _patched("gaussian_sigma", gaussian_sigma):
        yield sigmas


#: The releases a `ReleaseEvent` is for: "laplace" (exact reachability, (c)) or "gaussian" (the low-order-bit
#: grid of D's values, (d)).
MECHANISMS = ("laplace", "gaussian")


def _on_grid(y: float, gamma: float) -> bool:
    return (y / gamma).is_integer()       # exact: γ is a power of two


@dataclass(frozen=True)
class ReleaseEvent:
    """The floating-point design's event, fixed before any sample (module docstring, (c) and (d)).

    A released coordinate y is *reachable* from a value x if
      * ``mechanism="laplace"``: some noise scale b of `scales` makes it an output of numpy's raw Laplace
        sampler from x (`laplace_reachable`) or of the grid mechanisms from x (`grid_reachable` for the
        Laplace support);
      * ``mechanism="gaussian"``: y is a multiple of `low_bit_grid(x)`, the grid every fl(x + N) lies on
        (any noise double N: the raw-float Gaussian release, and the grid releases, whose γ =
        `grid_spacing(σ)` for σ in `scales` is checked to be a multiple of it). D's values must be ≠ 0.
    A centre (one row of the released centres) fires if one of its coordinates is strictly inside
    `interior` (None: everywhere; the clip faces of the public box are data-independent values and never
    fire), at least `floor` in magnitude, reachable from one of `from_Dp` (when given, Laplace only: the
    values of D′, which excludes outputs that are not a single release, e.g. a sum divided by a noisy count
    above 1) and reachable from none of `from_D`. With `every_coordinate`, every coordinate of the centre
    must be such a candidate, and one of them unreachable from `from_D`. The output fires if one of its
    centres does.
    """

    scales: tuple[float, ...]
    from_D: tuple[float, ...]
    from_Dp: tuple[float, ...] = ()
    interior: tuple[float, float] | None = None
    every_coordinate: bool = False
    mechanism: str = "laplace"
    floor: float = 0.0
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if not self.scales or not all(math.isfinite(b) and b > 0 for b in self.scales):
            raise ValueError(f"a release event needs noise scales > 0, got {self.scales!r}")
        if not self.from_D or not all(math.isfinite(x) for x in (*self.from_D, *self.from_Dp)):
            raise ValueError("a release event needs finite values of D (from_D) and of D′ (from_Dp)")
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"a release event's mechanism must be one of {list(MECHANISMS)}, got {self.mechanism!r}")
        if not (math.isfinite(self.floor) and self.floor >= 0):
            raise ValueError(f"a release event's floor must be a finite number >= 0, got {self.floor!r}")
        if self.mechanism == "gaussian":
            if any(x == 0 for x in self.from_D):
                raise ValueError("the Gaussian event needs D's values != 0 (fl(0 + N) = N: every double is "
                                 "reachable from 0); give D′ the value 0 instead")
            if self.from_Dp:
                raise ValueError("the Gaussian event takes no from_Dp: every double near D′'s value is a possible "
                                 "Gaussian release (keep quotients out with `floor`)")
            coarse = min(mechanisms.grid_spacing(b) for b in self.scales)
            if not _on_grid(coarse, self.grid):
                raise ValueError(f"the grid mechanisms' γ = {coarse!r} is finer than the event's grid {self.grid!r}: "
                                 "the event would fire on the current releases")

    @property
    def grid(self) -> float:
        """The Gaussian event's grid: the finest `low_bit_grid(x)` over D's values (0.0 for Laplace)."""
        return min(low_bit_grid(x) for x in self.from_D) if self.mechanism == "gaussian" else 0.0

    def reachable(self, y: float, values: Iterable[float]) -> bool:
        """Whether y can be released from one of `values` (see the class docstring)."""
        values = tuple(values)
        if self.mechanism == "gaussian":
            return any(_on_grid(y, low_bit_grid(x)) for x in values)
        key = (y, values)
        if key in self._cache:
            return self._cache[key]
        out = any(_on_grid(y, mechanisms.grid_spacing(b)) and abs(y - x) <= mechanisms.LAPLACE_SUPPORT * b
                  + mechanisms.grid_spacing(b) for b in self.scales for x in values) or \
            any(laplace_reachable(y, x, b) for b in self.scales for x in values)
        if len(self._cache) < 100_000:
            self._cache[key] = out
        return out

    def _candidate(self, y: float) -> bool:
        inside = (self.interior is None or self.interior[0] < y < self.interior[1]) and abs(y) >= self.floor
        return inside and (not self.from_Dp or self.reachable(y, self.from_Dp))

    def fires_on(self, centre) -> list[float]:
        """The coordinates of one centre that make it fire ([] if it does not)."""
        row = [float(v) for v in np.asarray(centre, dtype=float).ravel()]
        if self.every_coordinate:
            if not all(self._candidate(y) for y in row):
                return []
            return [y for y in row if not self.reachable(y, self.from_D)]
        return [y for y in row if self._candidate(y) and not self.reachable(y, self.from_D)]

    def __call__(self, centres) -> bool:
        c = np.asarray(centres, dtype=float)
        return any(self.fires_on(row) for row in c.reshape(-1, c.shape[-1] if c.ndim else 1))

    def describe(self) -> str:
        vals = ", ".join(f"{x:g}" for x in self.from_D)
        where = f" strictly inside {tuple(self.interior)}" if self.interior else ""
        if self.floor:
            where += f" with |y| >= {self.floor:.6g}"
        if self.mechanism == "gaussian":
            text = (f"a coordinate{where} that is not a multiple of 2^{math.log2(self.grid):g}, the grid every "
                    f"fl(x + N) lies on for D's value(s) x = {vals} (any noise double N: the raw-float Gaussian "
                    f"release; the grid releases too, γ ≥ that grid at the calibration run's σ ∈ "
                    f"{{{', '.join(f'{b:.4g}' for b in self.scales)}}})")
        else:
            text = (f"a coordinate{where} that no Laplace release (raw float or grid, b ∈ "
                    f"{{{', '.join(f'{b:.4g}' for b in self.scales)}}}) can produce from D's value(s) {vals}")
        if self.from_Dp:
            text += " but one can from D′'s " + ", ".join(f"{x:g}" for x in self.from_Dp)
        return text + (" (every coordinate of the centre inside)" if self.every_coordinate else "")

    def as_dict(self) -> dict:
        out: dict[str, object] = {
            "scales": list(self.scales), "from_D": list(self.from_D), "from_Dp": list(self.from_Dp),
            "interior": None if self.interior is None else list(self.interior),
            "every_coordinate": self.every_coordinate, "description": self.describe()}
        if self.mechanism != "laplace" or self.floor:
            out.update(mechanism=self.mechanism, floor=self.floor, grid=self.grid)
        return out


@dataclass(frozen=True)
class ReleaseAudit:
    """Outcome of `release_audit`: the event, its counts and bounds with the current mechanisms
    (`current`) and with every release as before the grid (`legacy`, the positive control), the
    rounding control's counts on D and D′, and what the runs spent."""

    event: ReleaseEvent
    current: EventAuditResult
    legacy: EventAuditResult
    rounding_grid: float
    rounding_events: tuple[int, int]
    epsilon_claimed: float
    delta_claimed: float
    epsilon_spent_min: float
    cpu_seconds: dict[str, float]
    legacy_releases: int
    examples: dict[str, list[float]]

    @property
    def self_check(self) -> bool:
        """The event never fired on D (current and legacy mechanisms)."""
        return self.current.events_D == 0 and self.legacy.events_D == 0

    @property
    def rounding_control(self) -> bool:
        """The legacy outputs rounded to a data-independent grid never fired."""
        return self.rounding_events == (0, 0)


def _draw_outputs(function: Callable, data: np.ndarray, k: int, epsilon: float, delta: float, settings: dict,
                  n: int, rng: np.random.Generator, spent: list) -> np.ndarray:
    out = np.empty((n, k, data.shape[1]))
    for i in range(n):
        res = function(data, k, epsilon, delta, rng, dict(settings, init_seed=int(rng.integers(2**63))))
        centres = np.asarray(res.centers, dtype=float)
        if centres.shape != out.shape[1:] or not np.isfinite(centres).all():
            raise ValueError(f"the algorithm returned centres of shape {centres.shape} (expected {out.shape[1:]}) "
                             "or non-finite values")
        spent.append((float(res.epsilon_spent), float(res.delta_spent)))
        out[i] = centres
    return out


def release_audit(function: Callable, D, Dp, k: int, epsilon: float, delta: float, settings: dict, *,
                  from_D: Iterable[float], from_Dp: Iterable[float] = (), every_coordinate: bool = False,
                  interior: tuple[float, float] | None = None, samples: int, seed: int, confidence: float = 0.95,
                  legacy: bool = True, mechanism: str = "laplace", floor: float = 0.0) -> ReleaseAudit:
    """The floating-point design on one algorithm (module docstring, (c) and, for ``mechanism="gaussian"``,
    (d)).

    `function(X, k, epsilon, delta, rng, settings)` is run `samples` times on each of the neighbouring
    datasets D and D′ (each run takes a fresh ``init_seed`` from its stream, as the estimators do), with
    the current mechanisms and again (`legacy`) with every release made as before the grid, from the
    same streams (so the legacy runs draw the same noise doubles). The event's noise scales come from
    one calibration run on D (its own stream, before any sample): the Laplace scales
    (`recorded_laplace_scales`), or for the Gaussian event the σ of its Gaussian calibrations
    (`recorded_gaussian_sigmas`). Bounds: `event_audit` at the largest δ a run reported spending. With
    ``legacy=False`` (a function that is itself a legacy sampler, the control row) the legacy audit is the
    current one.
    """
    D, Dp = np.asarray(D, dtype=float), np.asarray(Dp, dtype=float)
    k, samples = int(k), int(samples)
    if samples < 2:
        raise ValueError(f"release_audit needs samples >= 2, got {samples!r}")
    ss_cal, ss_D, ss_Dp = np.random.SeedSequence(int(seed)).spawn(3)
    cal_rng = np.random.default_rng(ss_cal)
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {list(MECHANISMS)}, got {mechanism!r}")
    with recorded_laplace_scales() as laplace_scales, recorded_gaussian_sigmas() as sigmas:
        function(D, k, epsilon, delta, cal_rng, dict(settings, init_seed=int(cal_rng.integers(2**63))))
    scales = laplace_scales if mechanism == "laplace" else sigmas
    if not scales:
        raise ValueError(f"the calibration run on D drew no {mechanism.capitalize()} noise through dpclust.mechanisms "
                         f"({'laplace_noise' if mechanism == 'laplace' else 'gaussian_sigma'}): the floating-point "
                         "design does not apply to this function")
    event = ReleaseEvent(tuple(sorted(set(scales))), tuple(float(x) for x in from_D),
                         tuple(float(x) for x in from_Dp),
                         None if interior is None else (float(interior[0]), float(interior[1])), bool(every_coordinate),
                         mechanism, float(floor))
    outputs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    cpu: dict[str, float] = {}
    spent: list[tuple[float, float]] = []
    releases = 0
    for mode in ("current", "legacy") if legacy else ("current",):
        t0 = time.process_time()
        runs: list[tuple[float, float]] = []
        if mode == "current":
            out_D = _draw_outputs(function, D, k, epsilon, delta, settings, samples, np.random.default_rng(ss_D), runs)
            out_Dp = _draw_outputs(function, Dp, k, epsilon, delta, settings, samples, np.random.default_rng(ss_Dp),
                                   runs)
            spent = runs
        else:
            with legacy_releases() as calls:
                out_D = _draw_outputs(function, D, k, epsilon, delta, settings, samples, np.random.default_rng(ss_D),
                                      runs)
                out_Dp = _draw_outputs(function, Dp, k, epsilon, delta, settings, samples,
                                       np.random.default_rng(ss_Dp), runs)
            releases = int(calls["release"])
        outputs[mode] = (out_D, out_Dp)
        cpu[mode] = time.process_time() - t0
    eps_claimed = max(e for e, _ in spent)
    delta_claimed = max(d for _, d in spent)
    t0 = time.process_time()
    results, examples = {}, {}
    for mode, (out_D, out_Dp) in outputs.items():
        fired_D = [event(o) for o in out_D]
        fired_Dp = [event(o) for o in out_Dp]
        results[mode] = event_audit(sum(fired_D), samples, sum(fired_Dp), samples, confidence, delta_claimed)
        for side, out, fired in (("D", out_D, fired_D), ("Dp", out_Dp, fired_Dp)):
            hits = [y for o, f in zip(out, fired) if f for row in o for y in event.fires_on(row)]
            examples[f"{mode}_{side}"] = hits[:3]
    if not legacy:                        # the function is itself a legacy sampler (the control row)
        results["legacy"] = results["current"]
        outputs["legacy"] = outputs["current"]
        examples.update(legacy_D=examples["current_D"], legacy_Dp=examples["current_Dp"])
    gamma = float(mechanisms.grid_spacing(max(event.scales)))
    rounded = tuple(sum(event(round_to_grid(o, gamma)) for o in out) for out in outputs["legacy"])
    cpu["events"] = time.process_time() - t0
    return ReleaseAudit(event, results["current"], results["legacy"], gamma, (int(rounded[0]), int(rounded[1])),
                        float(eps_claimed), float(delta_claimed), float(min(e for e, _ in spent)), cpu, releases,
                        examples)
