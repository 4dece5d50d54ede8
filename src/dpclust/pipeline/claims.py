"""Deciding a paper's claims statistically.

A claim is decided on a measured quantity with a confidence interval (95 % unless stated):

* **holds** — the whole interval lies on the claim's side of its threshold;
* **does not hold** — the whole interval lies on the other side;
* **not decidable at this sample size** — the interval straddles the threshold;
* **not evaluable** — the data could not be had (or the preset does not run that cell).

Intervals come from the tidy tables' per-cell summaries (mean, sd, n): Student-t for a mean,
Welch for a difference of means, the delta method for a ratio of means, Clopper-Pearson for a
proportion, and a percentile bootstrap where raw values are at hand. A claim over many cells
("at every k") holds if every cell holds, does not hold if any cell does not, and is otherwise not
decidable. A claim that does not hold carries its `why`: *defect fixed: ...*, *genuine: <one line
of evidence>* or *depends on a lost parameter: ...*.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from dpclust.pipeline.aggregate import Check

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{_g(self.estimate)} [{_g(self.low)}, {_g(self.high)}]"


def _g(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.4g}"


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with `df` degrees of freedom (inf: the normal's). The scipy.special
    functions scipy.stats' t and norm evaluate (stdtrit, ndtri), the same values without the per-call
    argument handling that made the claims engine's null simulations slow; anything outside their
    plain domain goes through scipy.stats as before."""
    from scipy import special, stats

    if not 0.0 < p < 1.0 or math.isnan(df) or df <= 0:
        return float(stats.t.ppf(p, df))
    return float(special.ndtri(p) if math.isinf(df) else special.stdtrit(df, p))


def t_sf(x: float, df: float) -> float:
    """P(T > x) for Student's t with `df` degrees of freedom (inf: the normal), as `t_quantile`."""
    from scipy import special, stats

    if math.isnan(x) or math.isnan(df) or df <= 0:
        return float(stats.t.sf(x, df))
    return float(special.ndtr(-x) if math.isinf(df) else special.stdtr(df, -x))


def _t(n_eff: float, level: float) -> float:
    return t_quantile(0.5 + level / 2, max(n_eff, 1.0))


def mean_ci(mean: float, sd: float, n: int, level: float = LEVEL) -> Interval:
    """Student-t interval of a mean from (mean, sd, n); n = 1 gives (-inf, inf)."""
    if n is None or n < 2 or sd is None or not np.isfinite(sd):
        return Interval(float(mean), -math.inf, math.inf)
    half = _t(n - 1, level) * float(sd) / math.sqrt(n)
    return Interval(float(mean), float(mean) - half, float(mean) + half)


def diff_ci(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval:
    """Welch interval of mean_a − mean_b from (mean, sd, n) triples."""
    (ma, sa, na), (mb, sb, nb) = a, b
    est = float(ma) - float(mb)
    if na < 2 or nb < 2:
        return Interval(est, -math.inf, math.inf)
    va, vb = float(sa) ** 2 / na, float(sb) ** 2 / nb
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(est, est, est)
    df = (va + vb) ** 2 / ((va ** 2) / (na - 1) + (vb ** 2) / (nb - 1)) if va + vb > 0 else na + nb - 2
    half = _t(df, level) * se
    return Interval(est, est - half, est + half)


def ratio_ci(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval:
    """Interval of mean_a / mean_b (independent samples; delta method on the log ratio)."""
    (ma, sa, na), (mb, sb, nb) = a, b
    est = float(ma) / float(mb)
    if na < 2 or nb < 2 or ma <= 0 or mb <= 0:
        return Interval(est, -math.inf, math.inf) if (na < 2 or nb < 2) else Interval(est, est, est)
    var_log = (float(sa) / float(ma)) ** 2 / na + (float(sb) / float(mb)) ** 2 / nb
    df = min(na, nb) - 1
    half = _t(df, level) * math.sqrt(var_log)
    return Interval(est, est * math.exp(-half), est * math.exp(half))


def proportion_ci(successes: int, n: int, level: float = LEVEL) -> Interval:
    """Clopper-Pearson interval of a proportion."""
    from scipy import stats

    if n == 0:
        return Interval(float("nan"), 0.0, 1.0)
    alpha = 1 - level
    lo = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes, n - successes + 1))
    hi = 1.0 if successes == n else float(stats.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return Interval(successes / n, lo, hi)




def side_of(interval: Interval, threshold: float, side: str) -> bool | None:
    """True if the interval lies entirely on `side` ('>', '>=', '<', '<=') of the threshold, False if
    entirely on the other side, None if it straddles it."""
    lo, hi = interval.low, interval.high
    if side in (">", ">="):
        if (lo > threshold) or (side == ">=" and lo >= threshold):
            return True
        if hi < threshold or (side == ">" and hi <= threshold):
            return False
        return None
    if side in ("<", "<="):
        if (hi < threshold) or (side == "<=" and hi <= threshold):
            return True
        if lo > threshold or (side == "<" and lo >= threshold):
            return False
        return None
    raise ValueError(f"side must be one of >, >=, <, <=; got {side!r}")


def decide(claim: str, interval: Interval, threshold: float, side: str, detail: str = "",
           why: str = "") -> Check:
    """A claim "quantity <side> threshold", decided on the quantity's interval."""
    holds = side_of(interval, threshold, side)
    return Check(claim, holds, detail, quantity=interval.estimate, ci=(interval.low, interval.high),
                 threshold=f"{side} {threshold:g}", why=why if holds is False else "", undecided=holds is None)


def every(claim: str, cells: Iterable[tuple[str, bool | None]], detail: str = "", why: str = "") -> Check:
    """A claim over cells: holds if every cell holds, does not hold if any does not, else not
    decidable. `cells` are (label, decision) pairs; the detail names the failing/undecided ones."""
    cells = list(cells)
    if not cells:
        return Check(claim, None, detail or "no cell available")
    failing = [label for label, d in cells if d is False]
    open_ = [label for label, d in cells if d is None]
    holds = False if failing else (None if open_ else True)
    parts = [f"{sum(d is True for _, d in cells)}/{len(cells)} cells hold"]
    if failing:
        parts.append("not: " + ", ".join(failing[:6]) + (" …" if len(failing) > 6 else ""))
    if open_:
        parts.append("undecided: " + ", ".join(open_[:6]) + (" …" if len(open_) > 6 else ""))
    text = "; ".join(parts) + (f"; {detail}" if detail else "")
    return Check(claim, holds, text, quantity=sum(d is True for _, d in cells) / len(cells),
                 threshold="every cell", why=why if holds is False else "", undecided=holds is None)
