"""The privacy budget across estimator fits: `FitAccountant` (in the manner of diffprivlib's BudgetAccountant).

`dpclust.accountant.Accountant` guards the budget *within* one run of an algorithm. Nothing there
stops a user from fitting the same data again and again: a grid search over ε with 5-fold
cross-validation fits 25 models and together they release the sum of their ε (sequential
composition, Dwork & Roth 2014, Thm 3.16), while each fitted model reports only its own. A
`FitAccountant` keeps that sum across fits:

* every fit of a private estimator of `dpclust.estimators` is charged to one, the estimator's
  ``accountant=`` parameter or, when it is None (the default), the process-wide default
  `FitAccountant.default()`; each fit adds the (ε, δ) its run actually spent (the estimator's
  ``epsilon_spent_``, ``delta_spent_``). A non-private estimator (e.g. Lloyd) spends nothing and is
  never charged;
* an accountant with a finite total, ``FitAccountant(epsilon=3.0, delta=1e-6)``, refuses a fit that
  could take the spent total above it: `FitBudgetExceeded` is raised *before* the fit runs (nothing
  is spent), judged on the fit's ε and δ as its maximum;
* an accountant with an infinite ε total (the default one, ``FitAccountant()``) never refuses; it
  emits a `PrivacyBudgetWarning` naming the total spent once the fits charged to it spend more than
  the largest ε of a single fit (a second fit that spends anything), and again each time that total
  has doubled since the last warning (so a long session warns a few times, not at every fit).

Assumptions and limits (say so when you report a total):

* Sequential composition over *all* fits charged to one accountant: they are assumed to use the same
  data (the conservative case; cross-validation folds overlap, so it is also the right one there).
  Fits on disjoint data would compose in parallel (the maximum, not the sum): give each dataset its
  own accountant, or call `FitAccountant.reset` when you move on to new data
  (``FitAccountant.default().reset()`` for the default one).
* A fit that raises releases no centres and is not charged (the reservation is released).
* Fits run in other *processes* (joblib's process backends, e.g. ``GridSearchCV(n_jobs=2)``) are
  charged to those processes' accountants and do not reach this one: account with ``n_jobs=1`` or a
  thread backend. Pickling an estimator that holds an accountant copies the accountant.
* scikit-learn's `sklearn.base.clone` (GridSearchCV, cross_validate, Pipeline) keeps an accountant
  passed as a parameter *by identity* (`FitAccountant.__sklearn_clone__` returns the accountant
  itself; sklearn deep-copies other non-estimator parameters), so every clone charges the same
  ledger; `copy.deepcopy` gives an independent copy.

The two warnings are `UserWarning` subclasses: filter them as usual, e.g.
``warnings.filterwarnings("ignore", category=PrivacyLeakWarning)``. `PrivacyLeakWarning` is emitted
by the estimators when the data reach the public bounds exactly in every coordinate (bounds that
look computed from the data, e.g. by a MinMaxScaler fitted on X; see `dpclust.estimators`).

This module imports neither scikit-learn nor numpy.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from dpclust.accountant import RELATIVE_TOLERANCE, BudgetExceeded, Charge

__all__ = ["FitAccountant", "FitBudgetExceeded", "PendingFit", "PrivacyBudgetWarning", "PrivacyLeakWarning"]


class PrivacyBudgetWarning(UserWarning):
    """The fits charged to one (unlimited) `FitAccountant` together spend more than any single fit's ε."""


class PrivacyLeakWarning(UserWarning):
    """Something outside the private mechanism may leak the data, e.g. bounds computed from the data."""


class FitBudgetExceeded(BudgetExceeded):
    """A fit would take the spent total of its `FitAccountant` above the accountant's budget."""


@dataclass
class PendingFit:
    """A fit in progress under `FitAccountant.charge`: ``epsilon``/``delta`` are what it may spend at most
    (reserved); set ``spent`` to what it actually spent (default: the reserved maximum)."""

    label: str
    epsilon: float
    delta: float
    spent: tuple[float, float] | None = field(default=None)


def _check_cost(epsilon: float, delta: float) -> tuple[float, float]:
    epsilon, delta = float(epsilon), float(delta)
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"a fit's epsilon must be a finite number >= 0, got {epsilon!r}")
    if not (math.isfinite(delta) and 0 <= delta <= 1):
        raise ValueError(f"a fit's delta must be in [0, 1], got {delta!r}")
    return epsilon, delta


class FitAccountant:
    """The (ε, δ) spent by estimator fits, summed by sequential composition (see the module docstring).

    Parameters
    ----------
    epsilon : float, default=inf
        Total ε the fits may spend. ``inf`` never refuses a fit and warns instead
        (`PrivacyBudgetWarning`) once the fits together spend more than one fit's ε.
    delta : float or None, default=None
        Total δ. None means 1.0 (no δ limit) when `epsilon` is infinite and 0.0 (pure ε-DP fits only)
        when it is finite: give it explicitly, e.g. ``FitAccountant(epsilon=3.0, delta=1e-6)``, to
        allow (ε, δ)-DP fits (Balcan, SuLQ, Nguyen) under a finite budget. A δ of 1 is not checked.

    >>> acc = FitAccountant(epsilon=3.0, delta=1e-6)
    >>> acc.spend(1.0, 0.0, label="DPLloyd.fit")
    >>> acc.spent_epsilon, acc.remaining_epsilon
    (1.0, 2.0)
    """

    _default: FitAccountant | None = None

    def __init__(self, epsilon: float = math.inf, delta: float | None = None):
        epsilon = float(epsilon)
        if math.isnan(epsilon) or epsilon <= 0:
            raise ValueError(f"FitAccountant: epsilon must be a number > 0 (math.inf for no limit), got {epsilon!r}")
        if delta is None:
            delta = 1.0 if math.isinf(epsilon) else 0.0
        delta = float(delta)
        if not (0 <= delta <= 1):
            raise ValueError(f"FitAccountant: delta must be in [0, 1] (1 for no limit), got {delta!r}")
        self.epsilon = epsilon
        self.delta = delta
        self._lock = threading.RLock()
        self._pending: list[PendingFit] = []
        self.reset()

    # -- the process-wide default ------------------------------------------------------------------
    @classmethod
    def default(cls) -> FitAccountant:
        """The process-wide default accountant (infinite budget, warns): estimators with accountant=None."""
        if FitAccountant._default is None:
            FitAccountant._default = FitAccountant()
        return FitAccountant._default

    @classmethod
    def set_default(cls, accountant: FitAccountant) -> FitAccountant:
        """Make `accountant` the process-wide default; return the previous default."""
        if not isinstance(accountant, FitAccountant):
            raise TypeError(f"set_default needs a FitAccountant, got {accountant!r}")
        previous = cls.default()
        FitAccountant._default = accountant
        return previous

    # -- state ---------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget every fit charged so far (e.g. when you move on to new data); the budget stays."""
        with self._lock:
            self.ledger: list[Charge] = []
            self.spent_epsilon = 0.0
            self.spent_delta = 0.0
            self._largest_fit_epsilon = 0.0
            self._warned_at = 0.0

    @property
    def limited(self) -> bool:
        """Whether this accountant refuses fits (a finite ε total); else it only warns."""
        return math.isfinite(self.epsilon)

    @property
    def n_fits(self) -> int:
        """Number of fits charged (since the last `reset`)."""
        return len(self.ledger)

    def total(self) -> tuple[float, float]:
        """(ε, δ) spent so far by the fits charged to this accountant."""
        return self.spent_epsilon, self.spent_delta

    def _committed(self) -> tuple[float, float]:
        """Spent plus the maxima reserved by fits still running."""
        return (self.spent_epsilon + sum(p.epsilon for p in self._pending),
                self.spent_delta + sum(p.delta for p in self._pending))

    @property
    def remaining_epsilon(self) -> float:
        """ε one further fit may still ask for (inf for an unlimited accountant)."""
        return max(self.epsilon - self._committed()[0], 0.0)

    @property
    def remaining_delta(self) -> float:
        """δ one further fit may still ask for (1.0 when δ is not limited)."""
        return 1.0 if self.delta >= 1 else max(self.delta - self._committed()[1], 0.0)

    # -- charges ---------------------------------------------------------------------------------
    def _refusal(self, epsilon: float, delta: float, label: str) -> str | None:
        ce, cd = self._committed()
        over_e = self.limited and ce + epsilon > self.epsilon * (1 + RELATIVE_TOLERANCE)
        over_d = self.delta < 1 and cd + delta > self.delta * (1 + RELATIVE_TOLERANCE)
        if not (over_e or over_d):
            return None
        running = (f" (of which (ε = {ce - self.spent_epsilon:.6g}, δ = {cd - self.spent_delta:.3g}) reserved by "
                   f"{len(self._pending)} fit(s) still running)") if self._pending else ""
        return (f"{label or 'fit'} refused: it may spend (ε = {epsilon:.6g}, δ = {delta:.3g}), but this accountant's "
                f"total budget is (ε = {self.epsilon:.6g}, δ = {self.delta:.3g}) and (ε = {ce:.6g}, δ = {cd:.3g}) "
                f"is already spent by {self.n_fits} earlier fit(s){running}; nothing was spent by this one. "
                f"Ask for less (epsilon=..., delta=...), or, for new data, use a new FitAccountant or reset() this one")

    def check(self, epsilon: float, delta: float = 0.0, label: str = "fit") -> None:
        """Raise `FitBudgetExceeded` if a fit spending up to (ε, δ) would not fit in the budget."""
        epsilon, delta = _check_cost(epsilon, delta)
        with self._lock:
            message = self._refusal(epsilon, delta, label)
        if message:
            raise FitBudgetExceeded(message)

    @contextmanager
    def charge(self, epsilon: float, delta: float = 0.0, label: str = "fit") -> Iterator[PendingFit]:
        """Reserve (ε, δ) for one fit, refusing it (`FitBudgetExceeded`) *before* it runs if it would
        overspend; on leaving the block, record what it actually spent (``pending.spent``, default the
        reserved maximum). If the block raises, the reservation is released and nothing is recorded."""
        epsilon, delta = _check_cost(epsilon, delta)
        with self._lock:
            message = self._refusal(epsilon, delta, label)
            if message:
                raise FitBudgetExceeded(message)
            pending = PendingFit(label, epsilon, delta)
            self._pending.append(pending)
        try:
            yield pending
        except BaseException:
            with self._lock:
                self._pending.remove(pending)
            raise
        spent_e, spent_d = _check_cost(*(pending.spent if pending.spent is not None else (epsilon, delta)))
        with self._lock:
            self._pending.remove(pending)
            warning = self._record(spent_e, spent_d, label)
        if warning:
            warnings.warn(warning, PrivacyBudgetWarning, stacklevel=4)

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> None:
        """Charge a fit (or any release from the same data) of (ε, δ) directly: refuse or record it."""
        epsilon, delta = _check_cost(epsilon, delta)
        with self._lock:
            message = self._refusal(epsilon, delta, label)
            if message:
                raise FitBudgetExceeded(message)
            warning = self._record(epsilon, delta, label)
        if warning:
            warnings.warn(warning, PrivacyBudgetWarning, stacklevel=2)

    def _record(self, epsilon: float, delta: float, label: str) -> str | None:
        """Enter one fit in the ledger; return the warning to emit, if any (unlimited accountants only)."""
        self.ledger.append(Charge(label, epsilon, delta))
        self.spent_epsilon += epsilon
        self.spent_delta += delta
        self._largest_fit_epsilon = max(self._largest_fit_epsilon, epsilon)
        total = self.spent_epsilon
        if self.limited or total <= self._largest_fit_epsilon * (1 + RELATIVE_TOLERANCE):
            return None
        if total < 2 * self._warned_at:
            return None
        self._warned_at = total
        return (f"privacy budget across fits: the {self.n_fits} fits charged to this accountant have spent "
                f"ε = {total:.6g}, δ = {self.spent_delta:.3g} in total (sequential composition, assuming they "
                f"all used the same data), more than the largest ε of a single fit ({self._largest_fit_epsilon:.6g}), "
                f"which is all one fitted model reports (e.g. a grid search over epsilon or cross-validation "
                f"releases every fit). Cap the total with accountant=FitAccountant(epsilon=..., delta=...), or "
                f"reset() the accountant when you move on to new data (FitAccountant.default().reset() for the "
                f"default one). This warning repeats each time the total doubles")

    def summary(self) -> dict:
        """JSON-ready budget, spent amounts and ledger (`[label, epsilon, delta]` rows)."""
        with self._lock:
            return {"epsilon_budget": self.epsilon, "delta_budget": self.delta,
                    "epsilon_spent": self.spent_epsilon, "delta_spent": self.spent_delta,
                    "ledger": [[c.label, c.epsilon, c.delta] for c in self.ledger]}

    # -- copies --------------------------------------------------------------------------------
    def __sklearn_clone__(self) -> FitAccountant:
        """`sklearn.base.clone` keeps the accountant itself, so that clones charge the same ledger."""
        return self

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]
        state["_pending"] = []  # a copy has no fits running
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        args = [] if not self.limited else [f"epsilon={self.epsilon!r}"]
        if self.delta != (0.0 if self.limited else 1.0):
            args.append(f"delta={self.delta!r}")
        return f"FitAccountant({', '.join(args)})"
