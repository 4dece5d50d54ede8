"""Empirical privacy audit: a statistically valid *lower bound* on the ε of a mechanism.

If a mechanism M is (ε, δ)-DP then, for neighbouring datasets D, D' and every event E,
``Pr[M(D) ∈ E] ≤ e^ε · Pr[M(D') ∈ E] + δ`` (Dwork & Roth 2014, Def. 2.4), hence

    ε ≥ ln((Pr[M(D) ∈ E] − δ) / Pr[M(D') ∈ E])       (and the same with D, D' swapped).

The audit estimates both probabilities from samples and replaces them with one-sided
Clopper–Pearson bounds (lower bound in the numerator, upper bound in the denominator), as in
Jagielski, Ullman & Oprea 2020 ("Auditing differentially private machine learning") and
Nasr et al. 2021 ("Adversary instantiation"). The event is a threshold event ``{x ≥ t}`` or
``{x ≤ t}`` on a scalar statistic; it and the direction (D over D' or D' over D) are chosen on one
random half of the samples, and the bound is evaluated once on the other half, so no
multiple-testing correction is needed. Each of the two Clopper–Pearson bounds is taken at level
``1 − (1 − confidence)/2``, so with probability at least `confidence` the reported
``epsilon_lower_bound`` is at most the true ε of M at that δ. A bound above the ε an algorithm
claims is therefore evidence of a privacy bug (with error probability ≤ 1 − confidence).

A lower bound is not a proof of privacy: a passing audit only says this attack found nothing.
Its power comes from the neighbouring pair and the statistic; `halved_noise()` gives a positive
control (the same algorithm with every noise scale halved must be caught).

Typical use (other modules audit whole algorithms the same way)::

    from dpclust import mechanisms
    from dpclust.audit import statistics as audit

    def count(data, rng):
        return mechanisms.laplace_mechanism(float(np.sum(data)), 1.0, 1.0, rng)

    D, Dp = np.zeros(10), np.r_[np.zeros(9), 1.0]          # neighbours: one record changed
    res = audit.audit(count, D, Dp, n_samples=50_000, seed=0)
    assert res.epsilon_lower_bound <= 1.0
    with audit.halved_noise():
        assert audit.audit(count, D, Dp, n_samples=50_000, seed=0).epsilon_lower_bound > 1.0

`halved_noise()` monkeypatches the scale functions of `dpclust.mechanisms`; it reaches every
draw that looks those functions up at call time (all mechanisms in `dpclust.mechanisms` do, and
algorithms that call ``mechanisms.laplace_mechanism`` / ``mechanisms.laplace_scale`` etc.).
Module-level names bound with ``from dpclust.mechanisms import laplace_scale`` are rebound for
the duration of the block as well. Algorithms must never compute a noise scale by hand, nor cache
a scale (or a scale function in a container, default argument or class attribute) at import
time: such noise is invisible to the audit. The context manager yields a counter of the calls
to the patched functions, so an audit test can assert that the patch was actually exercised.
The patch is process-global and not thread-safe.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "AuditResult",
    "audit",
    "audit_samples",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_from_bounds",
    "halved_noise",
    "scaled_noise",
    "MAX_THRESHOLDS",
]

#: At most this many candidate thresholds are tried on the selection half (evenly spaced order
#: statistics of the pooled selection samples; all distinct values when there are fewer).
MAX_THRESHOLDS = 2000


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit.

    epsilon_lower_bound: max(0, ln((p_lower − δ)/p_upper)) on the evaluation half; with
        probability ≥ `confidence` it does not exceed the mechanism's true ε (at this δ).
    threshold: t of the chosen event ``{x ≥ t}`` (``event == ">="``) or ``{x ≤ t}``.
    p_D, p_Dp: empirical probabilities of the event under D and D' on the evaluation half.
    n: number of samples drawn per dataset (the evaluation half holds n − n // 2 of them).
    event: ">=" or "<=".
    direction: "D/D'" if the bound is ln((Pr_D[E] − δ)/Pr_D'[E]), "D'/D" if the roles are swapped.
    p_lower, p_upper: the Clopper–Pearson bounds used (numerator lower, denominator upper).
    epsilon_point: ln((p_num − δ)/p_den) from the point estimates (no confidence; may be inf/nan).
    confidence, delta: as requested.
    """

    epsilon_lower_bound: float
    threshold: float
    p_D: float
    p_Dp: float
    n: int
    event: str = ">="
    direction: str = "D/D'"
    p_lower: float = 0.0
    p_upper: float = 1.0
    epsilon_point: float = float("nan")
    confidence: float = 0.95
    delta: float = 0.0


# ---------------------------------------------------------------------------------------------
# Clopper–Pearson bounds
# ---------------------------------------------------------------------------------------------
def clopper_pearson_lower(k, n, level: float):
    """One-sided Clopper–Pearson lower bound on a binomial p at `level` (e.g. 0.975).

    Vectorised over `k` (successes) and `n` (trials); 0 where k = 0.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    from scipy import stats  # here, not at the top: the Snakefile imports this module (via the audit plan)

    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(1.0 - level, k, n - k + 1.0)
    return np.where(k <= 0, 0.0, lo)


def clopper_pearson_upper(k, n, level: float):
    """One-sided Clopper–Pearson upper bound on a binomial p at `level`; 1 where k = n."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    from scipy import stats

    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(level, k + 1.0, n - k)
    return np.where(k >= n, 1.0, hi)


def epsilon_from_bounds(p_lower, p_upper, delta: float = 0.0):
    """ln((p_lower − δ)/p_upper), −inf where p_lower ≤ δ (vectorised)."""
    p_lower = np.asarray(p_lower, dtype=float)
    p_upper = np.asarray(p_upper, dtype=float)
    num = p_lower - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(num) - np.log(p_upper)
    return np.where(num > 0, out, -np.inf)


def _validate_common(delta: float, confidence: float) -> None:
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    if not (0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _as_scalar_samples(x, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array of scalar statistics, got shape {a.shape}; "
            "reduce vector outputs with a projection (audit(..., project=...))"
        )
    if a.size < 2:
        raise ValueError(f"{name} needs at least 2 samples, got {a.size}")
    if np.isnan(a).any():
        raise ValueError(f"{name} contains NaN")
    return a


def _threshold_counts(sorted_x: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts of {x ≥ t} and {x ≤ t} for every candidate t."""
    n = sorted_x.size
    ge = n - np.searchsorted(sorted_x, t, side="left")
    le = np.searchsorted(sorted_x, t, side="right")
    return ge, le


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------
def audit_samples(out_D, out_Dp, delta: float = 0.0, confidence: float = 0.95,
                  rng: np.random.Generator | int | None = None) -> AuditResult:
    """Lower-bound ε from scalar samples of M(D) (`out_D`) and M(D') (`out_Dp`).

    `out_D`, `out_Dp`: 1-D arrays (i.i.d. samples; the sizes may differ). `delta`: the δ the
    mechanism claims (0 for pure DP). `confidence`: joint level of the two Clopper–Pearson bounds.
    `rng`: Generator or seed for the random split into a selection and an evaluation half
    (default: seed 0, so the result is deterministic given the samples).

    On the selection half, every candidate event {x ≥ t}, {x ≤ t} (t among the pooled sample
    values, at most `MAX_THRESHOLDS` of them) and both directions are scored by the same bound;
    the best one is evaluated once on the evaluation half. Returns an `AuditResult`.
    """
    _validate_common(delta, confidence)
    a = _as_scalar_samples(out_D, "out_D")
    b = _as_scalar_samples(out_Dp, "out_Dp")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(0 if rng is None else rng)
    level = 1.0 - (1.0 - confidence) / 2.0

    a = a[rng.permutation(a.size)]
    b = b[rng.permutation(b.size)]
    a_sel, a_ev = np.sort(a[: a.size // 2]), np.sort(a[a.size // 2:])
    b_sel, b_ev = np.sort(b[: b.size // 2]), np.sort(b[b.size // 2:])

    # Candidate thresholds from the selection half only.
    pooled = np.unique(np.concatenate([a_sel, b_sel]))
    if pooled.size > MAX_THRESHOLDS:
        pooled = pooled[np.linspace(0, pooled.size - 1, MAX_THRESHOLDS).round().astype(int)]
    ge_a, le_a = _threshold_counts(a_sel, pooled)
    ge_b, le_b = _threshold_counts(b_sel, pooled)
    na, nb = a_sel.size, b_sel.size
    scores = np.stack([
        epsilon_from_bounds(clopper_pearson_lower(ge_a, na, level), clopper_pearson_upper(ge_b, nb, level), delta),
        epsilon_from_bounds(clopper_pearson_lower(le_a, na, level), clopper_pearson_upper(le_b, nb, level), delta),
        epsilon_from_bounds(clopper_pearson_lower(ge_b, nb, level), clopper_pearson_upper(ge_a, na, level), delta),
        epsilon_from_bounds(clopper_pearson_lower(le_b, nb, level), clopper_pearson_upper(le_a, na, level), delta),
    ])  # rows: (>=, D/D'), (<=, D/D'), (>=, D'/D), (<=, D'/D)
    if np.isfinite(scores).any():
        row, col = np.unravel_index(int(np.argmax(scores)), scores.shape)
    else:  # no event separates the halves: evaluate the median split
        row, col = 0, pooled.size // 2
    t = float(pooled[col])
    event = ">=" if row in (0, 2) else "<="
    swapped = row >= 2

    # Evaluate the chosen event once on the evaluation half.
    ge_ea, le_ea = _threshold_counts(a_ev, np.array([t]))
    ge_eb, le_eb = _threshold_counts(b_ev, np.array([t]))
    ka = int((ge_ea if event == ">=" else le_ea)[0])
    kb = int((ge_eb if event == ">=" else le_eb)[0])
    ma, mb = a_ev.size, b_ev.size
    p_D, p_Dp = ka / ma, kb / mb
    if swapped:
        lower = float(clopper_pearson_lower(kb, mb, level))
        upper = float(clopper_pearson_upper(ka, ma, level))
        num, den = p_Dp, p_D
    else:
        lower = float(clopper_pearson_lower(ka, ma, level))
        upper = float(clopper_pearson_upper(kb, mb, level))
        num, den = p_D, p_Dp
    eps_lb = float(epsilon_from_bounds(lower, upper, delta))
    with np.errstate(divide="ignore", invalid="ignore"):
        eps_point = float(np.log(num - delta) - np.log(den)) if num > delta else float("-inf")
    return AuditResult(
        epsilon_lower_bound=max(eps_lb, 0.0),
        threshold=t,
        p_D=p_D,
        p_Dp=p_Dp,
        n=int(max(a.size, b.size)),
        event=event,
        direction="D'/D" if swapped else "D/D'",
        p_lower=lower,
        p_upper=upper,
        epsilon_point=eps_point,
        confidence=confidence,
        delta=delta,
    )


def _accepts_size(fn: Callable) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return "size" in params


def _draw(mechanism: Callable, data: Any, n: int, rng: np.random.Generator, vectorized: bool) -> np.ndarray:
    if vectorized:
        out = np.asarray(mechanism(data, rng, size=n))
        if out.shape[:1] != (n,):
            raise ValueError(f"a vectorised mechanism must return n_samples = {n} outputs along axis 0, "
                             f"got shape {out.shape}")
        return out
    return np.asarray([np.asarray(mechanism(data, rng)) for _ in range(n)])


def audit(mechanism: Callable[..., Any], D: Any, D_prime: Any, n_samples: int, seed: int | None = 0,
          delta: float = 0.0, project: Callable[[Any], float] | None = None, confidence: float = 0.95,
          vectorized: bool | None = None) -> AuditResult:
    """Run `mechanism` `n_samples` times on each of the neighbouring datasets and audit it.

    mechanism: ``mechanism(dataset, rng) -> float | array`` drawing all of its randomness from the
        `numpy.random.Generator` `rng` (e.g. a wrapper that runs a clustering algorithm and
        returns its centres). If it also accepts a keyword ``size`` (or `vectorized=True`),
        it is called once as ``mechanism(dataset, rng, size=n_samples)`` and must return the
        `n_samples` outputs stacked along axis 0.
    D, D_prime: neighbouring datasets (passed through unchanged; the caller makes them differ in
        one record under the neighbouring relation the mechanism's proof uses).
    n_samples: draws per dataset (half select the event, half evaluate it).
    seed: seeds independent streams for the draws on D, on D', and for the split.
    delta: the δ the mechanism claims. confidence: see `audit_samples`.
    project: maps one output to a scalar statistic (required for vector outputs), e.g.
        ``lambda c: np.sort(c[:, 0])[0]`` or a projection on the direction in which D and D'
        differ. The statistic must not depend on the samples themselves.
    """
    if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 4):
        raise ValueError(f"n_samples must be an integer >= 4, got {n_samples!r}")
    _validate_common(delta, confidence)
    if vectorized is None:
        vectorized = _accepts_size(mechanism)
    ss_D, ss_Dp, ss_split = np.random.SeedSequence(seed).spawn(3)
    out_D = _draw(mechanism, D, int(n_samples), np.random.default_rng(ss_D), vectorized)
    out_Dp = _draw(mechanism, D_prime, int(n_samples), np.random.default_rng(ss_Dp), vectorized)
    if project is not None:
        out_D = np.array([float(project(o)) for o in out_D])
        out_Dp = np.array([float(project(o)) for o in out_Dp])
    return audit_samples(out_D, out_Dp, delta=delta, confidence=confidence,
                         rng=np.random.default_rng(ss_split))


# ---------------------------------------------------------------------------------------------
# Positive control: every noise scale multiplied by a factor
# ---------------------------------------------------------------------------------------------
@contextmanager
def scaled_noise(factor: float) -> Iterator[Counter]:
    """Multiply every noise scale drawn through `dpclust.mechanisms` by `factor` (< 1: less noise).

    Patches (as attributes of `dpclust.mechanisms`, restored on exit even on error) `laplace_scale` (also used by
    the geometric mechanism, α = exp(−1/scale)), `gaussian_sigma_classic`,
    `gaussian_sigma_analytic`, `gaussian_sigma` (each path scaled exactly once) and
    `exponential_logit_scale` (divided by `factor`: the logit scale is an inverse noise scale).
    Module-level bindings made with ``from dpclust.mechanisms import laplace_scale`` in any loaded
    module are rebound too (by identity), and restored on exit. Not reached: references held in
    local variables, closures, default arguments, containers or class attributes, and scales
    computed before the block (cached). Yields a `collections.Counter` of calls to the patched
    functions.
    """
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
    from dpclust import mechanisms as m

    names = ("laplace_scale", "gaussian_sigma_classic", "gaussian_sigma_analytic", "gaussian_sigma",
             "exponential_logit_scale")
    orig = {name: getattr(m, name) for name in names}
    calls: Counter = Counter()

    @functools.wraps(orig["laplace_scale"])
    def laplace_scale(sensitivity, epsilon):
        calls["laplace_scale"] += 1
        return factor * orig["laplace_scale"](sensitivity, epsilon)

    @functools.wraps(orig["gaussian_sigma_classic"])
    def gaussian_sigma_classic(sensitivity, epsilon, delta):
        calls["gaussian_sigma_classic"] += 1
        return factor * orig["gaussian_sigma_classic"](sensitivity, epsilon, delta)

    @functools.wraps(orig["gaussian_sigma_analytic"])
    def gaussian_sigma_analytic(sensitivity, epsilon, delta):
        calls["gaussian_sigma_analytic"] += 1
        return factor * orig["gaussian_sigma_analytic"](sensitivity, epsilon, delta)

    @functools.wraps(orig["gaussian_sigma"])
    def gaussian_sigma(sensitivity, epsilon, delta, calibration="analytic"):
        # Dispatch to the *original* helpers so the factor is applied once, not twice.
        calls["gaussian_sigma"] += 1
        if calibration == "analytic":
            return factor * orig["gaussian_sigma_analytic"](sensitivity, epsilon, delta)
        if calibration == "classic":
            return factor * orig["gaussian_sigma_classic"](sensitivity, epsilon, delta)
        return orig["gaussian_sigma"](sensitivity, epsilon, delta, calibration)  # raises

    @functools.wraps(orig["exponential_logit_scale"])
    def exponential_logit_scale(sensitivity, epsilon, monotonic=False):
        calls["exponential_logit_scale"] += 1
        return orig["exponential_logit_scale"](sensitivity, epsilon, monotonic) / factor

    patched = {
        "laplace_scale": laplace_scale,
        "gaussian_sigma_classic": gaussian_sigma_classic,
        "gaussian_sigma_analytic": gaussian_sigma_analytic,
        "gaussian_sigma": gaussian_sigma,
        "exponential_logit_scale": exponential_logit_scale,
    }
    swap = {id(orig[name]): patched[name] for name in names}
    unswap = {id(patched[name]): orig[name] for name in names}
    try:
        for name, fn in patched.items():
            setattr(m, name, fn)
        _rebind_everywhere(swap)  # also `from dpclust.mechanisms import laplace_scale` bindings
        yield calls
    finally:
        for name, fn in orig.items():
            setattr(m, name, fn)
        _rebind_everywhere(unswap)  # including modules first imported inside the block


def _rebind_everywhere(mapping: dict[int, Callable]) -> None:
    """Replace, in every loaded module's globals, each function whose id is a key of `mapping`."""
    for module in list(sys.modules.values()):
        try:
            namespace = vars(module)
        except TypeError:
            continue
        if not isinstance(namespace, dict):
            continue
        for key, value in list(namespace.items()):
            if callable(value) and id(value) in mapping:
                namespace[key] = mapping[id(value)]


def halved_noise() -> AbstractContextManager[Counter]:
    """`scaled_noise(0.5)`: every Laplace/Gaussian/geometric noise scale halved, every
    exponential-mechanism logit scale doubled. A correct audit of an ε-DP algorithm run under it
    should report a lower bound above ε (roughly 2ε for a tight mechanism and a good event)."""
    return scaled_noise(0.5)
