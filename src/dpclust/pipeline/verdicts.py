"""The claims engine: one rubric (docs/VERDICTS.md) deciding a claim over its cells.

A claim is a statement about a quantity in each of its cells (a dataset, k, ε, ...): "quantity
<side> threshold" (directional), or "quantity within a margin of a reference" (equivalence). A cell
gives its interval at any confidence level (`Cell.interval(level)`), so the engine can test it
one-sided at α and at Holm's corrected levels. With α = `ALPHA` (one-sided):

* a cell **holds** when its one-sided (1 − α) bound lies on the claim's side of the threshold;
* a cell **fails** when the claim is rejected there by Holm's step-down procedure over the claim's m
  cells (p-values of "the claim holds in this cell" from the cells' own intervals), so that a claim
  true in every cell is reported as failing with probability at most α, whatever m. A directional
  claim of an effect ("<", ">": lower, better) means at least its null margin (`null_margin` of the
  threshold, relative): the hypothesis rejected is "the effect reaches the margin", so a cell whose
  bound rules that out fails, whether it shows the opposite effect (by more than the margin) or none
  ("effect absent").

The quantifier decides the claim from its cells (`QUANTIFIERS`, `required`): "every" holds when every
cell holds (intersection-union test: at most α of false holds) and does not hold when a cell fails.
"most" needs more than half of the n cells, "almost all" at least 80 %: r of n (`required`). Such a
claim holds when r cells hold, each at α/(n − r + 1), and does not hold when n − r + 1 cells fail,
each at α/r (Bonferroni partial conjunctions, Benjamini & Heller 2008, Biometrics 64: valid under any
dependence between the cells; for r = n they are the intersection-union test and Holm's first step);
an open cell counts for neither side, else it is not decidable. An equivalence cell holds by two
one-sided tests (its (1 − 2α) interval inside the margin band), fails when its Holm-corrected
interval lies outside the band.

The cells every item compares with (`relative_cell`, `ratio_cell`, `linear_cell`, `extreme_cell`) and the
degenerate guard (`degenerate_cell`) live here too, so that no paper's items carry a copy of their own;
so does, by name, the one "every dataset" policy (`every_dataset`: with datasets missing, not evaluable
(n of N)), defined in `itemkit` with the other helpers that only rewrite a `Check`. The error levels
(`ALPHA`, the looks' split) are in `levels`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.claims import Interval, ratio_ci, t_quantile, t_sf
from dpclust.pipeline.itemkit import every_dataset  # noqa: F401 (the one "every dataset" policy: itemkit)
from dpclust.pipeline.levels import ALPHA

#: the quantifiers of the rubric: (the share of the claim's cells that must hold, strict?)
QUANTIFIERS = {"every": (1.0, False), "most": (0.5, True), "almost all": (0.8, False)}
#: default minimum effects, relative to the threshold (docs/VERDICTS.md, "Magnitudes")
NULL_MARGIN = 0.01
EQUIVALENCE_MARGIN = 0.10

HOLDS, FAILS, OPEN = "holds", "fails", "open"

# The level of the decisions of one check step: ALPHA, or a look's share of it when the item's claims are
# decided in replication rounds (dpclust.pipeline.replication); set by the step runner, read by `judge`.
_LEVEL: contextvars.ContextVar[float] = contextvars.ContextVar("dpclust_verdict_alpha", default=ALPHA)


def current_alpha() -> float:
    """The one-sided level `judge` uses when none is given: ALPHA, or the look's level (`using_alpha`)."""
    return _LEVEL.get()


@contextlib.contextmanager
def using_alpha(alpha: float) -> Iterator[None]:
    """Decide every claim inside the block at one-sided level `alpha` (a replication look's share of ALPHA)."""
    if not 0.0 < float(alpha) <= ALPHA:
        raise ValueError(f"a look's level must be in (0, {ALPHA:g}], got {alpha!r}")
    token = _LEVEL.set(float(alpha))
    try:
        yield
    finally:
        _LEVEL.reset(token)


@dataclass(frozen=True)
class Cell:
    """One cell of a claim: `interval(level)` is the quantity's two-sided interval at `level`.
    A cell whose interval is Student-t (estimate ± t_df · se; df = inf: normal) says so with
    `t_cell`, which gives its p-values in closed form instead of by bisection."""

    label: str
    interval: Callable[[float], Interval]
    t: tuple[float, float, float] | None = None    # (estimate, se, df)
    #: where the cell's runs are (`declared`: dataset, point, algorithms), as canonical JSON; None for a
    #: cell no run block names. A replication look settles keyed cells one by one (`settled`).
    key: str | None = None
    #: the rubric's degenerate guard took it (`degenerate_cell`): it never holds, whatever the runs
    degenerate: bool = False

    @property
    def estimate(self) -> float:
        return self.interval(0.9).estimate


def _bound(cell: Cell, alpha: float, upper: bool) -> float:
    """The one-sided (1 − alpha) bound: the matching end of the two-sided (1 − 2 alpha) interval."""
    iv = cell.interval(1.0 - 2.0 * alpha)
    return iv.high if upper else iv.low


def t_cell(label: str, estimate: float, se: float, df: float = math.inf) -> Cell:
    """A cell with the Student-t interval estimate ± t_df(level) · se (df = inf: normal)."""

    def interval(level: float) -> Interval:
        q = t_quantile(0.5 + level / 2, df)
        half = float(q) * se
        return Interval(estimate, estimate - half, estimate + half)

    return Cell(label, interval, (float(estimate), float(se), float(df)))


def _t_p_value(cell: Cell, test: Directional) -> float:
    """One-sided p-value of "the claim's smallest effect holds" (`Directional.meaningful`) in a t cell:
    how far its estimate lies on the wrong side of it."""
    estimate, se, df = cell.t  # type: ignore[misc]
    if se <= 0:
        return 0.0 if test.rejects_at(cell, 0.5) else 1.0
    z = (estimate - test.meaningful) / se
    wrong = -z if test.greater else z
    return t_sf(wrong, df)


def _p_fail(cell: Cell, test: Directional | Equivalent) -> float:
    """The cell's p-value of "the claim holds here" (its smallest effect, for a directional claim)."""
    if isinstance(test, Directional) and cell.t is not None:
        return _t_p_value(cell, test)
    return _p_value(functools.partial(_rejects, test, cell))


def _rejects(test: Directional | Equivalent, cell: Cell, alpha: float) -> bool:
    return test.rejects_at(cell, alpha)


def _p_value(reject: Callable[[float], bool]) -> float:
    """The smallest alpha in (0, 0.5] at which `reject(alpha)` is true (rejections grow with alpha),
    by bisection; 1.0 when it never rejects."""
    if not reject(0.5):
        return 1.0
    lo, hi = 0.0, 0.5
    for _ in range(30):  # to 0.5·2^-30: far finer than any Holm threshold
        mid = 0.5 * (lo + hi)
        if reject(mid):
            hi = mid
        else:
            lo = mid
    return hi


def holm(p_values: Sequence[float], alpha: float | None = None) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level alpha
    (default: `current_alpha()`)."""
    alpha = current_alpha() if alpha is None else alpha
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    m = len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (m - rank):
            break
        rejected[i] = True
    return rejected


@dataclass(frozen=True)
class Directional:
    """"quantity <side> threshold" in a cell; `null_margin` (relative to |threshold|, or absolute
    when the threshold is 0) is the smallest effect the claim means."""

    side: str
    threshold: float
    null_margin: float = NULL_MARGIN

    def __post_init__(self):
        if self.side not in (">", ">=", "<", "<="):
            raise ValueError(f"side must be one of >, >=, <, <=; got {self.side!r}")

    @property
    def greater(self) -> bool:
        return self.side in (">", ">=")

    def _margin(self) -> float:
        return self.null_margin * (abs(self.threshold) if self.threshold else 1.0)

    @property
    def meaningful(self) -> float:
        """The smallest effect the claim means: the threshold moved by the null margin to the claim's
        side. Only a claim of an effect ("<", ">": lower, better) has a margin; a bound ("<=", ">=": at
        most, at least) holds at its threshold."""
        if self.side in ("<=", ">="):
            return self.threshold
        return self.threshold + self._margin() if self.greater else self.threshold - self._margin()

    def holds_at(self, cell: Cell, alpha: float) -> bool:
        bound = _bound(cell, alpha, upper=not self.greater)
        return {">": bound > self.threshold, ">=": bound >= self.threshold,
                "<": bound < self.threshold, "<=": bound <= self.threshold}[self.side]

    def rejects_at(self, cell: Cell, alpha: float) -> bool:
        """The claim's smallest effect (`meaningful`) is rejected in the cell at level alpha: the
        one-sided bound on its other side."""
        bound, t = _bound(cell, alpha, upper=self.greater), self.meaningful
        return {">": bound <= t, ">=": bound < t, "<": bound >= t, "<=": bound > t}[self.side]

    def opposite(self, cell: Cell, alpha: float) -> bool:
        """The cell shows the opposite effect at level alpha, at least the margin beyond the threshold
        (else a failing cell shows no effect: "effect absent")."""
        if self.side in ("<=", ">="):
            return True
        bound = _bound(cell, alpha, upper=self.greater)
        return bound < self.threshold - self._margin() if self.greater else bound > self.threshold + self._margin()

    def text(self) -> str:
        return f"{self.side} {self.threshold:g}"


@dataclass(frozen=True)
class Equivalent:
    """"quantity within [low, high]" in a cell (e.g. a ratio within [1/1.1, 1.1]): two one-sided
    tests."""

    low: float
    high: float

    def holds_at(self, cell: Cell, alpha: float) -> bool:
        iv = cell.interval(1.0 - 2.0 * alpha)
        return self.low < iv.low and iv.high < self.high

    def rejects_at(self, cell: Cell, alpha: float) -> bool:
        iv = cell.interval(1.0 - 2.0 * alpha)
        return iv.high < self.low or iv.low > self.high

    def text(self) -> str:
        return f"in [{self.low:g}, {self.high:g}]"

    @classmethod
    def ratio(cls, margin: float = EQUIVALENCE_MARGIN) -> Equivalent:
        """A ratio "essentially 1": within [1/(1 + margin), 1 + margin]."""
        return cls(1.0 / (1.0 + margin), 1.0 + margin)


@dataclass
class CellVerdict:
    label: str
    state: str                     # holds / fails / open
    interval: Interval
    p_fail: float
    absent: bool = False
    key: str | None = None
    look: int | None = None        # the replication look that settled it (None: this decision)
    degenerate: bool = False       # the degenerate guard took it (`Cell.degenerate`)

    def as_record(self) -> dict:
        """What a replication decision keeps of a settled cell (`settled`), and reads of an open one."""
        iv = self.interval
        rec = {"state": self.state, "label": self.label, "estimate": iv.estimate, "low": iv.low, "high": iv.high,
               "p_fail": self.p_fail, "absent": self.absent, "look": self.look}
        return dict(rec, degenerate=True) if self.degenerate else rec

    @classmethod
    def from_record(cls, key: str | None, rec: Mapping) -> CellVerdict:
        return cls(str(rec["label"]), str(rec["state"]),
                   Interval(float(rec["estimate"]), float(rec["low"]), float(rec["high"])),
                   float(rec["p_fail"]), bool(rec.get("absent", False)), key, rec.get("look"),
                   bool(rec.get("degenerate", False)))


# The cells of a claim that earlier replication looks settled (key → `CellVerdict.as_record`), for the
# claims of one check step (claim → cells) and for the claim being decided (`deciding`).
_PRIOR: contextvars.ContextVar[Mapping[str, Mapping[str, Mapping]]] = contextvars.ContextVar(
    "dpclust_settled_cells", default={})
_SETTLED: contextvars.ContextVar[Mapping[str, Mapping]] = contextvars.ContextVar("dpclust_claim_cells", default={})


@contextlib.contextmanager
def settled(prior: Mapping[str, Mapping[str, Mapping]] | None) -> Iterator[None]:
    """Decide the claims inside the block with the cells earlier replication looks settled (claim →
    key → cell, `CellVerdict.as_record`): such a cell keeps the state its own look gave it, whatever
    the runs added since show, and only the other cells are decided (at the current level). Each
    settled cell was decided once, at a sample size fixed before its look, at that look's share of α:
    the union bound over the looks (docs/VERDICTS.md, "Replication") holds cell by cell."""
    token = _PRIOR.set(dict(prior or {}))
    try:
        yield
    finally:
        _PRIOR.reset(token)


@contextlib.contextmanager
def deciding(claim: str) -> Iterator[None]:
    """`judge` inside the block keeps the settled cells of `claim` (`settled`)."""
    token = _SETTLED.set(_PRIOR.get().get(claim, {}))
    try:
        yield
    finally:
        _SETTLED.reset(token)


@dataclass
class Verdict:
    cells: list[CellVerdict] = field(default_factory=list)
    result: bool | None = None      # True holds, False does not hold, None not decidable
    rule: str = ""
    absent: bool = False

    @property
    def counts(self) -> dict[str, int]:
        out = {HOLDS: 0, FAILS: 0, OPEN: 0}
        for c in self.cells:
            out[c.state] += 1
        return out


def judge(cells: Sequence[Cell], test: Directional | Equivalent, quantifier: str = "every",
          alpha: float | None = None) -> Verdict:
    """Decide a claim over its cells by the rubric (module docstring), at one-sided level `alpha`
    (default: `current_alpha()`, i.e. ALPHA outside a replication look)."""
    alpha = current_alpha() if alpha is None else alpha
    if quantifier not in QUANTIFIERS:
        raise ValueError(f"quantifier must be one of {sorted(QUANTIFIERS)}, got {quantifier!r}")
    cells = list(cells)
    if not cells:
        return Verdict(rule="no cell")
    share, strict = QUANTIFIERS[quantifier]
    return _judge_share(cells, test, required(share, len(cells), strict), alpha, quantifier)


def required(share: float, n: int, strict: bool = False) -> int:
    """How many of n cells must hold: more than (`strict`) or at least `share` of them (every: n)."""
    if share >= 1.0:
        return n
    exact = round(share * n, 9)            # (0.8 × 5 is 4, not 4.000000000000001)
    return min(n, math.floor(exact) + 1 if strict else max(1, math.ceil(exact)))


def _judge_share(cells: list[Cell], test: Directional | Equivalent, r: int, alpha: float, quantifier: str) -> Verdict:
    """Decide "at least r of the n cells hold" (module docstring): r = n is the intersection-union test
    with Holm's procedure for the failing cells; r < n, the Bonferroni partial conjunctions."""
    n = len(cells)
    alpha_hold, alpha_fail = (alpha, alpha) if r == n else (alpha / (n - r + 1), alpha / r)
    # an equivalence cell that holds at its level cannot be rejected at any level <= alpha (its wider
    # interval contains the narrower one), so it enters the failing side with p = 1; a directional cell
    # always enters with its own p-value: one that holds can still rule out the claim's smallest effect
    # (its interval above the threshold but short of the margin: "effect absent")
    # the cells earlier replication looks settled keep their verdicts and are not tested again: in
    # Holm's family with p = 1, so that the open cells' thresholds stay those of all n (`settled`)
    prior = _SETTLED.get()
    settled_here = [None if c.key is None else prior.get(c.key) for c in cells]
    held_at = [s is None and test.holds_at(c, alpha_hold) for c, s in zip(cells, settled_here)]
    directional = isinstance(test, Directional)
    p_fail = [1.0 if s is not None or (h and not directional) else _p_fail(c, test)
              for c, h, s in zip(cells, held_at, settled_here)]
    rejected = holm(p_fail, alpha) if r == n else [p <= alpha_fail for p in p_fail]
    out = []
    for cell, p, rej, h, s in zip(cells, p_fail, rejected, held_at, settled_here):
        if s is not None:
            out.append(CellVerdict.from_record(cell.key, s))
            continue
        iv = cell.interval(1.0 - 2.0 * alpha_hold)   # the interval that decides its holding
        if rej:     # the claim's smallest effect ruled out: the opposite shown, or no effect ("absent")
            absent = isinstance(test, Directional) and not test.opposite(cell, alpha_fail)
            out.append(CellVerdict(cell.label, FAILS, iv, p, absent=absent, key=cell.key, degenerate=cell.degenerate))
        elif h:
            out.append(CellVerdict(cell.label, HOLDS, iv, p, key=cell.key))
        else:
            out.append(CellVerdict(cell.label, OPEN, iv, p, key=cell.key, degenerate=cell.degenerate))
    held = sum(c.state == HOLDS for c in out)
    failed = sum(c.state == FAILS for c in out)
    cells_text = f"{n} cell{'s' if n != 1 else ''}"
    if r == n:
        rule = f"{quantifier} of {cells_text}: one-sided α = {alpha:g} per cell to hold, Holm over the {n} to fail"
    else:
        rule = (f"{quantifier} of {cells_text}: {r} must hold, each at one-sided α/{n - r + 1} = {alpha_hold:.3g}; "
                f"{n - r + 1} failing, each at α/{r} = {alpha_fail:.3g}, make it fail (Bonferroni partial "
                f"conjunctions; held {held}, failed {failed})")
    result = True if held >= r else (False if failed >= n - r + 1 else None)
    absent = result is False and all(c.absent for c in out if c.state == FAILS)
    return Verdict(out, result, rule, absent)


def check(claim: str, cells: Sequence[Cell], test: Directional | Equivalent, quantifier: str = "every",
          why: str = "", detail: str = "", kind: str = "paper", alpha: float | None = None) -> Check:
    """A `Check` decided by `judge`, with its cells, rule and the cells' states in the detail; the
    cells of `claim` that earlier replication looks settled keep their verdicts (`deciding`)."""
    with deciding(claim):
        v = judge(cells, test, quantifier, alpha)
    if not cells:
        return Check(claim, None, detail or "no cell available", kind=kind, cells=0, rule=v.rule)
    parts = [f"{c.label}: {c.interval} ({c.state}{', no effect' if c.absent else ''}"
             f"{'' if c.look is None else f', settled at look {c.look}'})" for c in v.cells]
    text = "; ".join(parts[:12]) + (" …" if len(parts) > 12 else "") + (f"; {detail}" if detail else "")
    worst = max(v.cells, key=lambda c: (c.state == FAILS, c.state == OPEN, -c.p_fail))
    reason = why
    if v.result is False and v.absent:
        absent_text = ("effect absent: every failing cell rules out the claim's smallest effect (its null "
                       "margin) without showing the opposite")
        reason = f"{why}; {absent_text}" if why else absent_text
    return Check(claim, v.result, text, quantity=worst.interval.estimate,
                 ci=(worst.interval.low, worst.interval.high), threshold=f"{test.text()} ({quantifier})",
                 why=reason if v.result is False else "", undecided=v.result is None, kind=kind,
                 cells=len(v.cells), rule=v.rule,
                 cell_states={c.key: c.as_record() for c in v.cells if c.key is not None} or None)


def point_cell(label: str, value: float) -> Cell:
    """A cell measured exactly (no sampling error): its interval is the point at every level."""
    v = float(value)
    return Cell(label, lambda level: Interval(v, v, v))


# ---------------------------------------------------------------------------------------------
# the cells and rules every item's checks build on (one home: the items import them from here)
# ---------------------------------------------------------------------------------------------
def _welch(terms, shift: float = 0.0) -> tuple[float, float, float]:
    """(estimate, se, df) of Σ c_i·mean_i + shift over (c_i, (mean_i, sd_i, n_i)) (Welch–Satterthwaite);
    se = inf when a term has n < 2 or no sd, se = 0 when every term is exact."""
    est = shift + sum(c * float(m) for c, (m, _, _) in terms)
    if any(n < 2 or not (sd == sd) for _, (_, sd, n) in terms):
        return est, math.inf, math.inf
    parts = [(c * c * float(sd) ** 2 / n, n) for c, (_, sd, n) in terms]
    var = sum(v for v, _ in parts)
    if var == 0:
        return est, 0.0, math.inf
    return est, math.sqrt(var), var ** 2 / sum(v * v / (n - 1) for v, n in parts if v > 0)


def linear_ci(terms, shift: float = 0.0, level: float = 0.95) -> Interval:
    """Welch–Satterthwaite interval of Σ c_i·mean_i + shift for independent samples given as
    (c_i, (mean_i, sd_i, n_i)); a term with n < 2 makes the interval unbounded."""
    est, se, df = _welch(terms, shift)
    if math.isinf(se):
        return Interval(est, -math.inf, math.inf)
    if se == 0:
        return Interval(est, est, est)
    half = t_quantile(0.5 + level / 2, df) * se
    return Interval(est, est - half, est + half)


def linear_cell(label: str, terms, shift: float = 0.0, scale: float = 1.0) -> Cell:
    """The cell of Σ c_i·mean_i + shift (`linear_ci`'s Welch–Satterthwaite interval, a Student-t
    cell), times a positive constant `scale`: relative cells divide by a reference mean, so that the
    rubric's null margin (±1 %, absolute when the threshold is 0) is 1 % of that reference. Scaling
    by a constant moves no decision, only the margin's unit."""
    est, se, df = _welch(terms, shift)
    scale = float(scale) if scale == scale and scale > 0 and math.isfinite(scale) else 1.0
    if math.isinf(se):
        value = est * scale
        return Cell(label, lambda level: Interval(value, -math.inf, math.inf))
    if se == 0:
        return point_cell(label, est * scale)
    return t_cell(label, est * scale, se * scale, df)


def per(reference: float) -> float:
    """1 / reference, the scale of a cell relative to a (positive) reference mean; 1 without one."""
    r = float(reference)
    return 1.0 / r if r == r and r > 0 and math.isfinite(r) else 1.0


def relative_cell(label: str, a, b) -> Cell:
    """(mean_a − mean_b) / mean_b from two (mean, sd, n) triples: the Welch interval of the difference
    divided by the comparator's mean, so that 0.01 is 1 % of it."""
    return linear_cell(label, [(1.0, a), (-1.0, b)], scale=per(b[0]))


def ratio_cell(label: str, a, b) -> Cell:
    """mean_a / mean_b from two (mean, sd, n) triples: the delta-method interval (`claims.ratio_ci`)."""
    return Cell(label, lambda level: ratio_ci(a, b, level))


def extreme_cell(label: str, cells, largest: bool) -> Cell:
    """A cell made of several comparisons, decided as one: the largest (or smallest) of their
    quantities. "Every comparison < 0" is "max < 0" and "every comparison > 0" is "min > 0".
    Interval of the max at `level`: its upper end is the largest upper end at `level` (an
    intersection-union bound: no correction), its lower end the largest lower end at the Bonferroni
    level 1 − (1 − level)/m; the min mirrors it. Coverage is at least `level` for any m."""
    cells = list(cells)
    if len(cells) == 1:
        return Cell(label, cells[0].interval, cells[0].t)
    m = len(cells)
    pick = max if largest else min

    def interval(level: float) -> Interval:
        plain = [c.interval(level) for c in cells]
        wide = [c.interval(1.0 - (1.0 - level) / m) for c in cells]
        est = pick(iv.estimate for iv in plain)
        if largest:
            return Interval(est, max(iv.low for iv in wide), max(iv.high for iv in plain))
        return Interval(est, min(iv.low for iv in plain), min(iv.high for iv in wide))

    return Cell(label, interval)


def degenerate(low: float | None, k) -> bool:
    """docs/VERDICTS.md: a solution with fewer than k/2 non-empty clusters is degenerate (`low`: the fewest
    non-empty clusters of any run of the cell, None when the method records none)."""
    return low is not None and low < int(k) / 2


def degenerate_cell(cell: Cell, low: float, k) -> Cell:
    """The rubric's guard: a close / comparable / within-c× cell on a degenerate solution never holds (the
    cost of a collapsed solution says nothing of its quality) but still fails where its other end is past
    the threshold: the side of its interval the claim would hold on becomes infinite (the upper end for a
    ratio at or above 1, else the lower end)."""
    est = cell.estimate

    def interval(level: float) -> Interval:
        iv = cell.interval(level)
        return Interval(est, iv.low, math.inf) if est >= 1.0 else Interval(est, -math.inf, iv.high)

    return Cell(f"{cell.label} — degenerate, {low:g}/{int(k)} non-empty clusters", interval, key=cell.key,
                degenerate=True)


def degenerate_note(notes: Sequence[str], recorded: bool) -> str:
    """The detail's sentence on the degenerate guard: the cells it took out (`notes`), or that the table
    has no non-empty-clusters statistic to apply it with."""
    if not recorded:
        return "; degenerate guard not applied: the table records no non-empty clusters for this method"
    if not notes:
        return ""
    return ("; degenerate (fewer than k/2 non-empty clusters in some run, docs/VERDICTS.md: never holds — not "
            "evaluable as a comparison — but fails where even its interval's far end is past the threshold): "
            + ", ".join(notes))


def failing(verdict: Verdict) -> list[str]:
    """Labels of the cells the engine failed (Holm, or effect absent)."""
    return [c.label for c in verdict.cells if c.state == FAILS]


def failing_text(verdict: Verdict) -> str:
    """The failing cells of a verdict with their (90 %) intervals, for a `why`'s {failing}."""
    return "; ".join(f"{c.label}: {c.interval}" for c in verdict.cells if c.state == FAILS) or "none"


def fill_why(why: str, failing: str = "none") -> str:
    """A claim's `why` (from the item's `claims.why`: the judgement, e.g. "genuine: ...") with
    {failing} → the failing cells and their intervals."""
    if not why:
        return ""
    try:
        return why.format(failing=failing)
    except (KeyError, IndexError, ValueError):
        return why


def claim_check(claim: str, cells, test, quantifier: str = "every", why: str = "", detail: str = "",
                kind: str = "paper") -> Check:
    """`check` with the claim's `why` filled with its failing cells."""
    cells = list(cells)
    if why and cells:
        with deciding(claim):
            why = fill_why(why, failing_text(judge(cells, test, quantifier)))
    return check(claim, cells, test, quantifier, why=why, detail=detail, kind=kind)


def no_cell(claim: str, detail: str, kind: str = "paper") -> Check:
    """A claim with no cell to decide it on: not evaluable, saying why."""
    return check(claim, [], Directional(">", 0.0), detail=detail, kind=kind)


def share_check(claim: str, cells, test, need: float, detail: str = "", kind: str = "paper") -> Check:
    """An "alternative reading" that asks for a share `need` of the cells (a fraction of ours, between
    the rubric's quantifiers), decided like the rubric's "most": at least ⌈need·n⌉ cells must hold
    (`required`, Bonferroni partial conjunctions). Never the paper's verdict."""
    cells = list(cells)
    if not cells:
        return no_cell(claim, detail or "no cell available", kind)
    r = required(need, len(cells))
    v = _judge_share(cells, test, r, current_alpha(), f"alternative reading: at least {need:g}")
    held = v.counts[HOLDS]
    parts = [f"{c.label}: {c.interval} ({c.state})" for c in v.cells]
    text = "; ".join(parts[:12]) + (" …" if len(parts) > 12 else "") + (f"; {detail}" if detail else "")
    share = held / len(cells)
    return Check(claim, v.result, text, quantity=share, ci=(share, share), threshold=f">= {need:g} of the cells",
                 why="alternative reading: too many of the cells fail" if v.result is False else "",
                 undecided=v.result is None, kind=kind, cells=len(cells), rule=v.rule)


def exact_spend(claim: str, cells: Sequence[tuple[str, float]], rel_tol: float, detail: str = "") -> Check:
    """Our bookkeeping "every private run spent exactly its budget" (never a paper's claim): one exact
    cell per (label, the largest relative deviation of the budget spent from the setting), each at most
    `rel_tol`; the why names the cells that deviate. Each item computes the deviations from its table."""
    if not cells:
        return Check(claim, None, detail or "no private runs available", kind="bookkeeping", cells=0, rule="no cell")
    bad = [label for label, dev in cells if not dev <= rel_tol]
    return check(claim, [point_cell(label, dev) for label, dev in cells],
                 Directional("<=", float(rel_tol), null_margin=0.0), "every", kind="bookkeeping",
                 why=f"the budget spent differs from the setting in {len(bad)} cells: " + ", ".join(bad[:6]),
                 detail=detail)
