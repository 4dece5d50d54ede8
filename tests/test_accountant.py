"""Accountant: sequential and parallel composition, refusal to overspend, ledger."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpclust import mechanisms as M
from dpclust.accountant import RELATIVE_TOLERANCE, Accountant, BudgetExceeded


def test_sequential_composition_sums():
    acc = Accountant(1.0, 1e-5)
    acc.spend(0.25, label="a")
    acc.spend(0.5, 4e-6, label="b")
    assert acc.spent_epsilon == pytest.approx(0.75)
    assert acc.spent_delta == pytest.approx(4e-6)
    assert acc.remaining_epsilon == pytest.approx(0.25)
    assert acc.remaining_delta == pytest.approx(6e-6)
    assert [c.label for c in acc.ledger] == ["a", "b"]


def test_refuses_overspend_and_keeps_state():
    acc = Accountant(1.0, 1e-6)
    acc.spend(0.7)
    with pytest.raises(BudgetExceeded):
        acc.spend(0.31)
    with pytest.raises(BudgetExceeded):
        acc.spend(0.1, 2e-6)  # ε fits, δ does not
    assert acc.spent_epsilon == 0.7 and acc.spent_delta == 0.0 and len(acc.ledger) == 1
    assert not acc.can_spend(0.31) and acc.can_spend(0.3)
    acc.spend(0.3)
    assert acc.remaining_epsilon == 0.0


def test_pure_dp_accountant_refuses_any_delta():
    acc = Accountant(1.0)
    with pytest.raises(BudgetExceeded):
        acc.spend(0.1, 1e-300)
    acc.spend(0.1, 0.0)


@pytest.mark.parametrize("eps", [1e-4, 0.1, 0.3, 1.0, 7.0, 1234.5])
@pytest.mark.parametrize("parts", [3, 7, 10, 100])
def test_float_tolerance_fractions_fit_exactly(eps, parts):
    acc = Accountant(eps, 1e-5)
    for _ in range(parts):
        acc.spend(eps / parts, 1e-5 / parts)
    assert acc.remaining_epsilon <= RELATIVE_TOLERANCE * eps
    with pytest.raises(BudgetExceeded):  # ...but not one bit more than the slack
        acc.spend(eps * 1e-6)


def test_mechanism_refused_before_draw_keeps_rng_untouched():
    acc = Accountant(1.0)
    rng = np.random.default_rng(0)
    for _ in range(10):
        M.laplace_mechanism(0.0, 1.0, 0.1, rng, accountant=acc)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceeded):
        M.laplace_mechanism(0.0, 1.0, 0.1, rng, accountant=acc)
    assert rng.bit_generator.state == state
    assert len(acc.ledger) == 10


@pytest.mark.parametrize("eps,delta", [(0.0, 0.0), (-1.0, 0.0), (float("nan"), 0.0), (float("inf"), 0.0),
                                       (1.0, 1.0), (1.0, -0.1), (1.0, float("nan"))])
def test_bad_budget(eps, delta):
    with pytest.raises(ValueError):
        Accountant(eps, delta)


@pytest.mark.parametrize("eps,delta", [(-0.1, 0.0), (float("nan"), 0.0), (float("inf"), 0.0), (0.1, -1e-9),
                                       (0.1, 1.0)])
def test_bad_charge(eps, delta):
    acc = Accountant(1.0, 0.5)
    with pytest.raises(ValueError):
        acc.spend(eps, delta)
    assert acc.ledger == []


# ---------------------------------------------------------------------------------------------
# Parallel composition
# ---------------------------------------------------------------------------------------------
def test_parallel_costs_the_max_over_branches():
    acc = Accountant(1.0, 1e-5)
    acc.spend(0.2, label="before")
    with acc.parallel("cells") as par:
        b1, b2, b3 = par.branch(), par.branch(), par.branch()
        b1.spend(0.5, 1e-6)
        b2.spend(0.3, 5e-6)
        b2.spend(0.2)
        b3.spend(0.8)  # the whole remaining budget: fine in parallel
        assert par.cost() == pytest.approx((0.8, 5e-6))
        assert acc.remaining_epsilon == pytest.approx(0.0, abs=1e-12)  # committed while open
    assert acc.spent_epsilon == pytest.approx(1.0)
    assert acc.spent_delta == pytest.approx(5e-6)
    assert acc.ledger[-1].label == "cells (parallel over 3 parts)"
    with pytest.raises(BudgetExceeded):
        acc.spend(0.01)


def test_parallel_branch_cannot_exceed_parent():
    acc = Accountant(1.0)
    acc.spend(0.6)
    with acc.parallel() as par:
        b = par.branch()
        assert b.remaining_epsilon == pytest.approx(0.4)
        with pytest.raises(BudgetExceeded):
            b.spend(0.41)
        b.spend(0.4)
    assert acc.spent_epsilon == pytest.approx(1.0)


def test_parallel_parent_spending_inside_block_limits_branches():
    acc = Accountant(1.0)
    with acc.parallel() as par:
        b1, b2 = par.branch(), par.branch()
        b1.spend(0.5)
        with pytest.raises(BudgetExceeded):  # the open block already commits 0.5
            acc.spend(0.6)
        acc.spend(0.3)
        assert b2.remaining_epsilon == pytest.approx(0.2 + 0.5)  # b2 may reach the block's max 0.5 + 0.2
        with pytest.raises(BudgetExceeded):
            b1.spend(0.21)  # would raise the block's cost above what is left
        b2.spend(0.7)
        with pytest.raises(BudgetExceeded):
            b1.spend(0.21)
        b1.spend(0.2)
    assert acc.spent_epsilon == pytest.approx(1.0)


def test_branch_used_after_block_raises():
    acc = Accountant(1.0)
    with acc.parallel() as par:
        b = par.branch()
        b.spend(0.1)
    with pytest.raises(RuntimeError):
        b.spend(0.1)
    with pytest.raises(RuntimeError):
        par.branch()
    assert acc.spent_epsilon == pytest.approx(0.1)


def test_parallel_block_left_by_exception_is_still_charged():
    acc = Accountant(1.0)
    with pytest.raises(KeyError):
        with acc.parallel() as par:
            par.branch().spend(0.4)
            raise KeyError("boom")
    assert acc.spent_epsilon == pytest.approx(0.4)


def test_empty_parallel_block_costs_nothing():
    acc = Accountant(1.0)
    with acc.parallel() as par:
        par.branch()
    assert acc.spent_epsilon == 0.0 and acc.ledger == []


def test_nested_parallel_and_sub_budget():
    acc = Accountant(2.0, 1e-5)
    child = acc.sub_budget(1.0, 4e-6, label="stage 1")
    assert acc.spent_epsilon == 1.0 and acc.spent_delta == 4e-6
    assert child.epsilon == 1.0 and child.delta == 4e-6
    child.spend(0.6)
    with pytest.raises(BudgetExceeded):
        child.spend(0.5)
    with acc.parallel("outer") as outer:
        b = outer.branch()
        with b.parallel("inner") as inner:
            inner.branch().spend(0.7)
            inner.branch().spend(0.2)
            with pytest.raises(BudgetExceeded):  # outer parent has only 1.0 left
                inner.branch().spend(1.01)
        b.spend(0.3)
        outer.branch().spend(0.5)
    assert acc.spent_epsilon == pytest.approx(2.0)
    with pytest.raises(BudgetExceeded):
        acc.sub_budget(0.1)


def test_sub_budget_with_zero_epsilon_keeps_delta():
    acc = Accountant(1.0, 1e-5)
    child = acc.sub_budget(0.0, 1e-6)
    child.spend(0.0, 1e-6)
    with pytest.raises(BudgetExceeded):
        child.spend(1e-3)
    with pytest.raises(BudgetExceeded):
        acc.sub_budget(1.5)


def test_summary_is_json_ready():
    acc = Accountant(1.0, 1e-5)
    acc.spend(0.5, 1e-6, "noisy counts")
    with acc.parallel("cells") as par:
        par.branch().spend(0.25)
    s = acc.summary()
    assert json.loads(json.dumps(s)) == s
    assert s["epsilon_budget"] == 1.0 and s["delta_budget"] == 1e-5
    assert s["epsilon_spent"] == pytest.approx(0.75) and s["delta_spent"] == pytest.approx(1e-6)
    assert s["ledger"] == [["noisy counts", 0.5, 1e-6], ["cells (parallel over 1 parts)", 0.25, 0.0]]


# ---------------------------------------------------------------------------------------------
# Invariants (hypothesis)
# ---------------------------------------------------------------------------------------------
charges = st.lists(st.tuples(st.floats(0, 1.5), st.sampled_from([0.0, 1e-7, 1e-6, 5e-6])), max_size=25)


@settings(max_examples=150, deadline=None)
@given(budget=st.floats(0.01, 10), charges=charges)
def test_invariant_never_overspends(budget, charges):
    acc = Accountant(budget, 1e-5)
    accepted = []
    for eps, delta in charges:
        eps = eps * budget
        before = (acc.spent_epsilon, acc.spent_delta, len(acc.ledger))
        fits = acc.can_spend(eps, delta)
        try:
            acc.spend(eps, delta)
        except BudgetExceeded:
            assert not fits
            assert (acc.spent_epsilon, acc.spent_delta, len(acc.ledger)) == before
        else:
            assert fits
            accepted.append((eps, delta))
        assert acc.spent_epsilon <= budget * (1 + RELATIVE_TOLERANCE)
        assert acc.spent_delta <= 1e-5 * (1 + RELATIVE_TOLERANCE)
        assert acc.remaining_epsilon == pytest.approx(max(budget - acc.spent_epsilon, 0.0), abs=1e-12)
    assert acc.spent_epsilon == pytest.approx(sum(e for e, _ in accepted), abs=1e-12)
    assert [(c.epsilon, c.delta) for c in acc.ledger] == accepted


@settings(max_examples=100, deadline=None)
@given(budget=st.floats(0.01, 10),
       branches=st.lists(st.lists(st.floats(0, 0.6), max_size=4), min_size=1, max_size=6))
def test_invariant_parallel_is_max_of_branch_sums(budget, branches):
    acc = Accountant(budget)
    with acc.parallel() as par:
        totals = []
        for fracs in branches:
            b = par.branch()
            spent = 0.0
            for f in fracs:
                if b.can_spend(f * budget):
                    b.spend(f * budget)
                    spent += f * budget
                else:
                    with pytest.raises(BudgetExceeded):
                        b.spend(f * budget)
            totals.append(spent)
            assert spent <= budget * (1 + RELATIVE_TOLERANCE)
    assert acc.spent_epsilon == pytest.approx(max(totals), abs=1e-12)
    assert acc.spent_epsilon <= budget * (1 + RELATIVE_TOLERANCE)


@settings(max_examples=100, deadline=None)
@given(budget=st.floats(1e-6, 1e6), parts=st.integers(1, 200))
def test_invariant_equal_fractions_fit(budget, parts):
    acc = Accountant(budget)
    for _ in range(parts):
        acc.spend(budget / parts)
    assert not acc.can_spend(budget * 1e-7)
