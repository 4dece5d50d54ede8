"""Privacy accountant: basic sequential and parallel composition that refuses to overspend.

Sequential composition (Dwork & Roth 2014, Thm 3.16): the costs (ε_i, δ_i) of mechanisms run on the
same data add up. Parallel composition (McSherry 2009, Thm 4): mechanisms run on *disjoint* parts of
the data cost the maximum of their costs, not the sum. Every algorithm in dpclust spends its budget
through one `Accountant`; a charge that would exceed the budget raises `BudgetExceeded` *before* any
noise is drawn, and the run record stores `epsilon_spent` / `delta_spent`.

Parallel blocks are accounted *while they are open*: the running maximum over the branches counts
as committed in the enclosing accountant, so a branch cannot spend more than the enclosing budget
allows at the moment of the charge (even if the parent spent in between), and a branch used after
its block has closed raises instead of leaking unaccounted budget.

Floating-point sums of budget fractions (e.g. ten charges of ε/10) are accepted with a relative
slack of `RELATIVE_TOLERANCE` of the budget; the slack never accumulates, since every charge is
checked against the total.

Floating-point δ (`note_floating_point`, `floating_point_delta`): the mechanisms of
`dpclust.mechanisms` note on the accountant what their floating-point samplers add to the δ of the
ideal mechanism they charged for (`dpclust.mechanisms.FLOATING_POINT_GUARANTEE`). It is reported
beside the budget, never charged against it: sequential notes add up, a parallel block adds the
largest of its branches, a sub-budget's notes count in its parent.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

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

    def __init__(self, epsilon: float, delta: float = 0.0, *, _parent: Accountant | None = None):
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        if not (math.isfinite(delta) and 0 <= delta < 1):
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        self._init(float(epsilon), float(delta))

    def _init(self, epsilon: float, delta: float, group: ParallelComposition | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.spent_epsilon = 0.0
        self.spent_delta = 0.0
        self.ledger: list[Charge] = []
        self._group = group  # the parallel block this accountant is a branch of (if any)
        self._open: list[ParallelComposition] = []  # parallel blocks open on this accountant
        self._fp_delta = 0.0  # floating-point δ noted here and by closed parallel blocks
        self._fp_children: list[Accountant] = []  # sub-budget children (their notes count here)

    @classmethod
    def _make(cls, epsilon: float, delta: float, group: ParallelComposition | None = None) -> Accountant:
        """Internal constructor that also allows a zero budget (for children and branches)."""
        acc = cls.__new__(cls)
        acc._init(max(float(epsilon), 0.0), max(float(delta), 0.0), group)
        return acc

    # -- queries -----------------------------------------------------------------------------
    def _committed(self) -> tuple[float, float]:
        """Spent plus the running cost of the parallel blocks still open on this accountant."""
        eps, delta = self.spent_epsilon, self.spent_delta
        for group in self._open:
            ge, gd = group.cost()
            eps += ge
            delta += gd
        return eps, delta

    def _tolerances(self) -> tuple[float, float]:
        return RELATIVE_TOLERANCE * self.epsilon, RELATIVE_TOLERANCE * self.delta

    def _fits(self, d_eps: float, d_delta: float) -> bool:
        """Whether the committed cost may grow by (d_eps, d_delta), here and in enclosing blocks."""
        ce, cd = self._committed()
        tol_e, tol_d = self._tolerances()
        if ce + d_eps > self.epsilon + tol_e or cd + d_delta > self.delta + tol_d:
            return False
        if self._group is not None:
            return self._group._fits_after(self, ce + d_eps, cd + d_delta)
        return True

    @property
    def remaining_epsilon(self) -> float:
        """ε that one further charge may still take (accounts for open parallel blocks)."""
        ce, _ = self._committed()
        rem = self.epsilon - ce
        if self._group is not None:
            rem = min(rem, self._group._headroom(self)[0])
        return max(rem, 0.0)

    @property
    def remaining_delta(self) -> float:
        """δ that one further charge may still take (accounts for open parallel blocks)."""
        _, cd = self._committed()
        rem = self.delta - cd
        if self._group is not None:
            rem = min(rem, self._group._headroom(self)[1])
        return max(rem, 0.0)

    def can_spend(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether `spend(epsilon, delta)` would succeed now."""
        if self._group is not None and self._group.closed:
            return False
        return self._fits(float(epsilon), float(delta))

    # -- charges -----------------------------------------------------------------------------
    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> None:
        """Charge (ε, δ) by sequential composition; raise `BudgetExceeded` if it does not fit.

        Call it *before* drawing the noise it pays for (the mechanisms in `dpclust.mechanisms`
        do so when given `accountant=`), so that a refused charge releases nothing.
        """
        _check_cost(epsilon, delta)
        if self._group is not None and self._group.closed:
            raise RuntimeError(
                f"charge {label or '<unnamed>'!s}: this branch's parallel block has already closed; "
                "spend inside the `with acc.parallel(...)` block"
            )
        if not self._fits(float(epsilon), float(delta)):
            ce, cd = self._committed()
            raise BudgetExceeded(
                f"charge {label or '<unnamed>'!s} of (eps={epsilon:.6g}, delta={delta:.3g}) exceeds the "
                f"budget: committed (eps={ce:.6g}, delta={cd:.3g}) of "
                f"(eps={self.epsilon:.6g}, delta={self.delta:.3g})"
                + (" or the budget of the enclosing accountant" if self._group is not None else "")
            )
        self._record(float(epsilon), float(delta), label)

    def _record(self, epsilon: float, delta: float, label: str) -> None:
        self.spent_epsilon += epsilon
        self.spent_delta += delta
        self.ledger.append(Charge(label, epsilon, delta))

    def note_floating_point(self, delta: float, label: str = "") -> None:
        """Record the floating-point δ of one draw (`dpclust.mechanisms.floating_point_delta`): what
        the floating-point sampler adds to the δ of the ideal mechanism charged for it. Not a charge:
        the budget, the spent amounts and the ledger are unchanged."""
        if not (math.isfinite(delta) and delta >= 0):
            raise ValueError(f"note {label or '<unnamed>'!s}: a floating-point delta must be finite and >= 0, "
                             f"got {delta!r}")
        self._fp_delta += float(delta)

    @property
    def floating_point_delta(self) -> float:
        """The floating-point δ noted so far: sequential notes add up, each closed parallel block adds
        its largest branch, sub-budget children add theirs (reported, never charged)."""
        return self._fp_delta + sum(child.floating_point_delta for child in self._fp_children)

    @contextmanager
    def parallel(self, label: str = "parallel") -> Iterator[ParallelComposition]:
        """Parallel composition over disjoint parts of the data (McSherry 2009, Thm 4).

        Inside the block, each disjoint part gets its own `branch()`; the block costs the maximum
        (ε, δ) over the branches (each coordinate separately). That maximum counts as committed
        while the block is open and is entered in the ledger when it closes (also when the block
        is left by an exception, since noise may already have been drawn). A branch may spend what
        the enclosing accountant can still afford; using a branch after the block raises.
        """
        group = ParallelComposition(self)
        self._open.append(group)
        try:
            yield group
        finally:
            eps, delta = group.cost()
            group.closed = True
            self._open.remove(group)
            # disjoint parts: one record changes one branch, so the block adds its largest branch
            self._fp_delta += max((b.floating_point_delta for b in group.branches), default=0.0)
            if eps > 0 or delta > 0:
                # Already verified branch by branch while open: record without re-checking.
                self._record(eps, delta, f"{label} (parallel over {len(group.branches)} parts)")

    def sub_budget(self, epsilon: float, delta: float = 0.0, label: str = "") -> Accountant:
        """Reserve (ε, δ) now (sequential) and hand out a child accountant limited to it.

        The child's own charges are not copied into this ledger; this ledger holds the
        reservation.
        """
        self.spend(epsilon, delta, label=label)
        child = Accountant._make(epsilon, delta)
        self._fp_children.append(child)
        return child

    def summary(self) -> dict:
        """JSON-ready budget, spent amounts, ledger (`[label, epsilon, delta]` rows) and the noted
        floating-point δ (not part of the spent budget)."""
        return {
            "epsilon_budget": self.epsilon,
            "delta_budget": self.delta,
            "epsilon_spent": self.spent_epsilon,
            "delta_spent": self.spent_delta,
            "ledger": [[c.label, c.epsilon, c.delta] for c in self.ledger],
            "floating_point_delta": self.floating_point_delta,
        }


class ParallelComposition:
    """Branches of a parallel-composition block (see `Accountant.parallel`)."""

    def __init__(self, parent: Accountant):
        self.parent = parent
        self.branches: list[Accountant] = []
        self.closed = False

    def branch(self) -> Accountant:
        """A fresh accountant for one disjoint part of the data.

        Its nominal budget is what the enclosing accountant can give this block now; the limit is
        re-checked against the enclosing accountant at every charge.
        """
        if self.closed:
            raise RuntimeError("cannot open a branch of a parallel block that has closed")
        eps, delta = self._headroom(None)
        child = Accountant._make(eps, delta, group=self)
        self.branches.append(child)
        return child

    def cost(self) -> tuple[float, float]:
        """The block's cost so far: the maximum committed (ε, δ) over the branches."""
        if not self.branches:
            return 0.0, 0.0
        committed = [b._committed() for b in self.branches]
        return max(c[0] for c in committed), max(c[1] for c in committed)

    def _headroom(self, branch: Accountant | None) -> tuple[float, float]:
        """The most `branch` (or a new branch) may commit in total, given the parent's budget."""
        ge, gd = self.cost()
        rem_e, rem_d = self.parent.remaining_epsilon, self.parent.remaining_delta
        if branch is None:
            return rem_e + ge, rem_d + gd
        be, bd = branch._committed()
        return rem_e + ge - be, rem_d + gd - bd

    def _fits_after(self, branch: Accountant, new_e: float, new_d: float) -> bool:
        """Whether the parent can pay for the block's cost growing when `branch` commits (new_e, new_d)."""
        others = [b._committed() for b in self.branches if b is not branch]
        ge, gd = self.cost()
        ne = max([new_e] + [c[0] for c in others])
        nd = max([new_d] + [c[1] for c in others])
        return self.parent._fits(max(ne - ge, 0.0), max(nd - gd, 0.0))
