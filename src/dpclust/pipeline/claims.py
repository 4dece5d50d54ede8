"""Confidence intervals for the quantities a paper's claims are decided on.

Intervals come from the tidy tables' per-cell summaries (mean, sd, n): Student-t for a mean,
Welch for a difference of means, the delta method for a ratio of means, Clopper-Pearson for a
proportion, and a percentile bootstrap where raw values are at hand. Deciding a claim over its
cells (quantifier, margin, error control) is `dpclust.pipeline.verdicts`, by the rubric of
docs/VERDICTS.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

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
