"""Privacy accountant: basic sequential and parallel composition that refuses to overspend.

Sequential composition (Dwork & Roth 2014, Thm 3.16): the costs (ε_i, δ_i) of mechanisms run on the
same data add up. Parallel composition (McSherry 2009, Thm 4): mechanisms run on *disjoint* parts of
the data cost the maximum of their costs, not the sum. Every algorithm in dpclust spends its budget
through one `Accountant`; a charge that would exceed the budget raises `BudgetExceeded` *before* any
noise is drawn, and the run record stores `spent_epsilon` / `spent_delta`.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

#: Relative slack for floating-point sums of budget fractions (e.g. ten times ε/10).
RELATIVE_TOLERANCE = 1e-9


class BudgetExceeded(RuntimeError):
    """A charge would take the spent budget above the total."""


@dataclass(frozen=True)
class Charge:
    """One entry of the ledger."""

    label: str
    epsilon: float
    delta: float


def _check_cost(epsilon: float, delta: float) -> None:
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"a charge needs a finite epsilon >= 0, got {epsilon!r}")
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ValueError(f"a charge needs delta in [0, 1), got {delta!r}")


class Accountant:
    """Tracks (ε, δ) spent against a total budget with basic composition.

    >>> acc = Accountant(1.0)
    >>> acc.spend(0.5, label="counts")
    >>> acc.remaining_epsilon
    0.5
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, _parent: "Accountant | None" = None):
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        if not (math.isfinite(delta) and 0 <= delta < 1):
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.spent_epsilon = 0.0
        self.spent_delta = 0.0
        self.ledger: list[Charge] = []
        self._parent = _parent

    # -- queries -----------------------------------------------------------------------------
    @property
    def remaining_epsilon(self) -> float:
        return max(self.epsilon - self.spent_epsilon, 0.0)

    @property
    def remaining_delta(self) -> float:
        return max(self.delta - self.spent_delta, 0.0)

    def can_spend(self, epsilon: float, delta: float = 0.0) -> bool:
        tol_e = RELATIVE_TOLERANCE * max(self.epsilon, 1.0)
        tol_d = RELATIVE_TOLERANCE * max(self.delta, 1e-300)
        return (
            self.spent_epsilon + epsilon <= self.epsilon + tol_e
            and self.spent_delta + delta <= self.delta + tol_d
        )

    # -- charges -----------------------------------------------------------------------------
    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> None:
        """Charge (ε, δ) by sequential composition; raise `BudgetExceeded` if it does not fit."""
        _check_cost(epsilon, delta)
        if not self.can_spend(epsilon, delta):
            raise BudgetExceeded(
                f"charge {label or '<unnamed>'!s} of (eps={epsilon:.6g}, delta={delta:.3g}) exceeds the "
                f"budget: spent (eps={self.spent_epsilon:.6g}, delta={self.spent_delta:.3g}) of "
                f"(eps={self.epsilon:.6g}, delta={self.delta:.3g})"
            )
        self.spent_epsilon += epsilon
        self.spent_delta += delta
        self.ledger.append(Charge(label, float(epsilon), float(delta)))

    @contextmanager
    def parallel(self, label: str = "parallel") -> Iterator["ParallelComposition"]:
        """Parallel composition over disjoint parts of the data.

        Inside the block, each disjoint part gets its own `branch()`; on exit the block is charged
        the maximum (ε, δ) over the branches. Each branch may spend at most what is left here.
        """
        group = ParallelComposition(self)
        yield group
        eps, delta = group.cost()
        if eps > 0 or delta > 0:
            self.spend(eps, delta, label=f"{label} (parallel over {len(group.branches)} parts)")

    def sub_budget(self, epsilon: float, delta: float = 0.0, label: str = "") -> "Accountant":
        """Reserve (ε, δ) now and hand out a child accountant limited to it (sequential)."""
        self.spend(epsilon, delta, label=label)
        return Accountant(epsilon, delta) if epsilon > 0 else _ZeroAccountant()

    def summary(self) -> dict:
        return {
            "epsilon_budget": self.epsilon,
            "delta_budget": self.delta,
            "epsilon_spent": self.spent_epsilon,
            "delta_spent": self.spent_delta,
            "ledger": [[c.label, c.epsilon, c.delta] for c in self.ledger],
        }


class _ZeroAccountant(Accountant):
    """An accountant with nothing to spend (every positive charge raises)."""

    def __init__(self):  # noqa: D401 - tiny helper
        self.epsilon = 0.0
        self.delta = 0.0
        self.spent_epsilon = 0.0
        self.spent_delta = 0.0
        self.ledger = []
        self._parent = None


class ParallelComposition:
    """Branches of a parallel-composition block (see `Accountant.parallel`)."""

    def __init__(self, parent: Accountant):
        self.parent = parent
        self.branches: list[Accountant] = []

    def branch(self) -> Accountant:
        eps = self.parent.remaining_epsilon
        delta = self.parent.remaining_delta
        child = Accountant(eps, delta) if eps > 0 else _ZeroAccountant()
        self.branches.append(child)
        return child

    def cost(self) -> tuple[float, float]:
        if not self.branches:
            return 0.0, 0.0
        return (
            max(b.spent_epsilon for b in self.branches),
            max(b.spent_delta for b in self.branches),
        )
