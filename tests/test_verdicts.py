"""The claims engine (dpclust.pipeline.verdicts) on tables with known answers: every quantifier,
the null margin, the equivalence band, Holm's correction, and its error rates under the null."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust.pipeline.verdicts import (
    ALPHA,
    QUANTIFIERS,
    Cell,
    Directional,
    Equivalent,
    check,
    holm,
    judge,
    point_cell,
    required,
    t_cell,
)


def normal_cell(label: str, mean: float, se: float) -> Cell:
    """A cell whose estimate is normal with standard error `se`, known only by its intervals (the
    engine finds its p-values by bisection)."""
    return Cell(label, t_cell(label, mean, se).interval)


def test_closed_form_p_values_match_the_bisection():
    from dpclust.pipeline.verdicts import _p_value, _t_p_value

    for est, se, df, test in [(1.2, 0.1, math.inf, Directional("<", 1.0)), (0.9, 0.05, 9, Directional(">", 1.0)),
                              (1.01, 0.2, 4, Directional("<", 1.0))]:
        cell = t_cell("c", est, se, df)
        bisected = _p_value(lambda a: test.rejects_at(cell, a))
        assert math.isclose(_t_p_value(cell, test), bisected, rel_tol=1e-6, abs_tol=1e-9)


def test_holm_rejects_step_down():
    assert holm([0.01, 0.04, 0.03], 0.05) == [True, False, False]   # 0.01 <= .05/3; 0.03 > .05/2
    assert holm([0.01, 0.02, 0.03], 0.05) == [True, True, True]
    assert holm([0.2, 0.3], 0.05) == [False, False]
    assert holm([], 0.05) == []


def test_every_holds_only_when_every_cell_holds():
    far = [normal_cell(f"k={k}", 0.5, 0.1) for k in range(4)]            # ratio far below 1
    v = judge(far, Directional("<", 1.0))
    assert v.result is True and v.counts == {"holds": 4, "fails": 0, "open": 0}
    one_open = far[:3] + [normal_cell("k=9", 0.95, 0.1)]
    assert judge(one_open, Directional("<", 1.0)).result is None


def test_a_fail_must_survive_holm():
    # z = 2.0 one-sided p ≈ 0.023: a fail alone, not among 10 cells (Holm's first step: 0.005)
    lone = [normal_cell("a", 1.2, 0.1)]
    assert judge(lone, Directional("<", 1.0)).result is False
    crowd = [normal_cell(f"c{i}", 0.5, 0.1) for i in range(9)] + [normal_cell("a", 1.2, 0.1)]
    v = judge(crowd, Directional("<", 1.0))
    assert v.result is None and v.counts["fails"] == 0 and v.counts["holds"] == 9
    strong = crowd[:-1] + [normal_cell("a", 1.5, 0.1)]                    # z = 5: survives
    assert judge(strong, Directional("<", 1.0)).result is False


def test_most_and_almost_all_need_their_share_of_all_cells():
    cells = ([normal_cell(f"h{i}", 0.5, 0.05) for i in range(6)]
             + [normal_cell(f"f{i}", 2.0, 0.05) for i in range(3)]
             + [normal_cell("o", 1.0, 0.5)])
    assert judge(cells, Directional("<", 1.0), "most").result is True       # 6 of 10 hold: more than half
    assert judge(cells, Directional("<", 1.0), "almost all").result is False  # 3 fail: 8 of 10 cannot hold
    assert judge(cells, Directional("<", 1.0), "every").result is False
    half = [normal_cell("h", 0.5, 0.05), normal_cell("f", 2.0, 0.05)]
    assert judge(half, Directional("<", 1.0), "most").result is False       # 1/2 is not more than half
    none_decided = [normal_cell("o1", 1.0, 0.5), normal_cell("o2", 1.0, 0.5)]
    assert judge(none_decided, Directional("<", 1.0), "most").result is None
    # an open cell counts for neither side: one held cell of five is not "almost all" (it was, when
    # the share was taken of the decided cells only), and one failing cell of fifty does not sink "most"
    one_of_five = [normal_cell("h", 0.5, 0.05)] + [normal_cell(f"o{i}", 1.0, 0.5) for i in range(4)]
    assert judge(one_of_five, Directional("<", 1.0), "almost all").result is None
    one_fail = [normal_cell("f", 2.0, 0.05)] + [normal_cell(f"o{i}", 1.0, 0.5) for i in range(49)]
    assert judge(one_fail, Directional("<", 1.0), "most").result is None


def test_a_share_holds_and_fails_at_the_partial_conjunction_levels():
    """"almost all" of 5 cells: r = 4 must hold, each at α/2; 2 failing, each at α/4, make it fail."""
    assert required(0.8, 5) == 4 and required(0.5, 10, strict=True) == 6 and required(0.5, 9, strict=True) == 5
    assert required(1.0, 7) == 7 and required(0.8, 1) == 1
    z_between = 1.80   # one-sided p ≈ 0.036: holds at α = 0.05, not at α/2 = 0.025
    weak = [normal_cell(f"w{i}", 1.0 - z_between * 0.1, 0.1) for i in range(4)] + [normal_cell("o", 1.0, 0.5)]
    assert judge(weak, Directional("<", 1.0, null_margin=0.0), "every").counts["holds"] == 4
    v = judge(weak, Directional("<", 1.0, null_margin=0.0), "almost all")
    assert v.result is None and v.counts["holds"] == 0 and "α/2" in v.rule and "α/4" in v.rule
    strong = [normal_cell(f"s{i}", 0.5, 0.1) for i in range(4)] + [normal_cell("f", 2.0, 0.1)]
    assert judge(strong, Directional("<", 1.0), "almost all").result is True   # 4 of 5, the fifth failing
    two_fail = [normal_cell(f"f{i}", 1.3, 0.1) for i in range(2)] + [normal_cell(f"o{i}", 1.0, 0.5) for i in range(3)]
    v = judge(two_fail, Directional("<", 1.0, null_margin=0.0), "almost all")    # z = 3: p ≈ 0.0013 < α/4
    assert v.result is False and v.counts["fails"] == 2


def test_an_absent_effect_does_not_hold():
    tight = [normal_cell("k=5", 0.999, 0.001)]      # "deteriorates": ratio < 1, but within ±1 %
    v = judge(tight, Directional("<", 1.0, null_margin=0.01))
    assert v.result is False and v.absent
    c = check("A is better than B", tight, Directional("<", 1.0))
    assert c.result == "does not hold" and c.why.startswith("effect absent")
    # on the claim's side, yet inside the margin: still no effect (0.995 [0.993, 0.997] for "< 1")
    assert judge([normal_cell("k=5", 0.995, 0.001)], Directional("<", 1.0)).result is False
    wide = [normal_cell("k=5", 0.999, 0.05)]
    assert judge(wide, Directional("<", 1.0)).result is None


def test_a_claim_whose_smallest_effect_is_ruled_out_does_not_hold():
    """"SuLQ deteriorates more than ours" (ratio > 1, margin 1 %): an interval from well below 1 to
    just above it rules out a 1 % effect, though it neither lies inside the margin nor wholly below 1."""
    claim = Directional(">", 1.0)
    assert claim.meaningful == pytest.approx(1.01) and Directional("<", 1.0).meaningful == pytest.approx(0.99)
    straddling = [normal_cell("ε", 0.99, 0.008)]              # 90 %: [0.977, 1.003]: below 1.01, not below 1
    v = judge(straddling, claim)
    assert v.result is False and v.absent                    # no opposite effect shown at one-sided α
    reaching = [normal_cell("ε", 0.985, 0.02)]               # one-sided bound ≈ 1.018 > 1.01: open
    assert judge(reaching, claim).result is None
    opposite = [normal_cell("ε", 0.95, 0.01)]                # bound ≈ 0.966 < 1: the opposite, not "absent"
    v = judge(opposite, claim)
    assert v.result is False and not v.absent
    # a bound ("at least", ">=") has no margin: it holds at its threshold
    assert Directional(">=", 1.0).meaningful == 1.0
    assert judge([normal_cell("ε", 1.005, 0.001)], Directional(">=", 1.0)).result is True


def test_ruling_out_the_margin_keeps_a_true_claims_false_fails_at_alpha():
    """Cells whose effect is exactly the claim's smallest (the margin): Holm over the cells keeps the
    chance of a fail at most α (300 replicates: a 99.9 % binomial bound of 0.05 is about 0.094)."""
    rng = np.random.default_rng(7)
    for m in (1, 4, 25):
        fails = 0
        for _ in range(300):
            cells = [t_cell(f"c{j}", 1.01 + float(x.mean()), float(x.std(ddof=1)) / math.sqrt(10), 9)
                     for j, x in enumerate(rng.standard_normal((m, 10)) * 0.01)]
            fails += judge(cells, Directional(">", 1.0)).result is False
        assert fails / 300 <= 0.094, m


def test_equivalence_by_two_one_sided_tests():
    band = Equivalent.ratio(0.10)
    assert math.isclose(band.low, 1 / 1.1) and band.high == 1.1
    assert judge([normal_cell("k", 1.02, 0.01)], band).result is True
    assert judge([normal_cell("k", 1.5, 0.01)], band).result is False
    assert judge([normal_cell("k", 1.08, 0.05)], band).result is None


def test_point_cells_and_no_cells():
    assert judge([point_cell("n", 3.0)], Directional(">=", 3.0)).result is True
    assert judge([point_cell("n", 3.0)], Directional(">", 3.0)).result is False
    assert judge([point_cell("n", 4.0)], Directional(">", 3.0)).result is True
    assert judge([], Directional(">", 3.0)).result is None
    c = check("no data", [], Directional(">", 3.0))
    assert c.result == "not evaluable" and c.cells == 0


def test_the_check_carries_its_cells_and_rule():
    c = check("ours beats SuLQ at every k", [normal_cell(f"k={k}", 0.5, 0.1) for k in (2, 4, 8)],
              Directional("<", 1.0))
    assert c.result == "holds" and c.cells == 3
    assert "every of 3 cells" in c.rule and "Holm" in c.rule


def test_unknown_quantifier_and_side_are_refused():
    with pytest.raises(ValueError, match="quantifier"):
        judge([point_cell("a", 1.0)], Directional("<", 2.0), "usually")
    with pytest.raises(ValueError, match="side"):
        Directional("!=", 1.0)


def _null_rates(m: int, reps: int, rng) -> tuple[float, float]:
    """(false fail, false hold) of "every" with m cells whose truth sits exactly at the threshold
    (the least favourable null for both errors), cells from Student-t intervals of 10 runs."""
    false_fail = false_hold = 0
    for _ in range(reps):
        cells = []
        for j in range(m):
            x = rng.standard_normal(10)
            cells.append(t_cell(f"c{j}", float(x.mean()), float(x.std(ddof=1)) / math.sqrt(10), 9))
        # truth = threshold 0 in every cell: "< 0" is false (a hold is an error), and with the
        # threshold nudged to 1e-9 above the truth "< 1e-9" is true (a fail is an error)
        false_hold += judge(cells, Directional("<", 0.0, null_margin=0.0)).result is True
        false_fail += judge(cells, Directional("<", 1e-9, null_margin=0.0)).result is False
    return false_fail / reps, false_hold / reps


@pytest.mark.parametrize("m", [1, 4, 25])
def test_error_rates_under_the_null_stay_at_alpha(m):
    rate_fail, rate_hold = _null_rates(m, 300, np.random.default_rng(m))
    # one-sided α = 0.05; 300 replicates: a binomial 99.9 % upper bound of 0.05 is about 0.094
    assert rate_fail <= 0.094 and rate_hold <= 0.094
    assert ALPHA == 0.05


def _share_null_rates(quantifier: str, n: int, reps: int, rng) -> tuple[float, float]:
    """(false fail, false hold) of a share quantifier in its least favourable nulls: the claim true by
    exactly the required r cells, those at the threshold and the rest far on the wrong side (a fail is
    an error); false by one cell, r − 1 cells far on the claim's side and the rest at the threshold (a
    hold is an error)."""
    share, strict = QUANTIFIERS[quantifier]
    r = required(share, n, strict)
    false_fail = false_hold = 0
    for _ in range(reps):
        x = rng.standard_normal((n, 10))
        est, se = x.mean(axis=1), x.std(axis=1, ddof=1) / math.sqrt(10)
        shifted_fail = np.where(np.arange(n) < r, 0.0, 5.0)     # r at the threshold, the rest far above
        shifted_hold = np.where(np.arange(n) < r - 1, -5.0, 0.0)   # r − 1 far below, the rest at it
        fail_cells = [t_cell(f"c{j}", float(est[j] + shifted_fail[j]), float(se[j]), 9) for j in range(n)]
        hold_cells = [t_cell(f"c{j}", float(est[j] + shifted_hold[j]), float(se[j]), 9) for j in range(n)]
        false_fail += judge(fail_cells, Directional("<", 1e-9, null_margin=0.0), quantifier).result is False
        false_hold += judge(hold_cells, Directional("<", 0.0, null_margin=0.0), quantifier).result is True
    return false_fail / reps, false_hold / reps


@pytest.mark.parametrize("quantifier,n", [("most", 10), ("almost all", 5), ("almost all", 25)])
def test_share_quantifiers_keep_their_errors_at_alpha_in_their_least_favourable_nulls(quantifier, n):
    rate_fail, rate_hold = _share_null_rates(quantifier, n, 300, np.random.default_rng(n))
    assert rate_fail <= 0.094 and rate_hold <= 0.094      # binomial 99.9 % upper bound of 0.05 at 300


def test_every_dataset_is_one_policy_for_every_paper():
    """docs/VERDICTS.md: a claim over every dataset with some missing is not evaluable (n of N datasets),
    whatever the others show; their verdict and a failure's why stay in the detail, the rule says it."""
    from dpclust.pipeline.aggregate import Check
    from dpclust.pipeline.verdicts import every_dataset

    failed = Check("c", False, "cells", why="genuine: x", rule="every of 2 cells")
    out = every_dataset(failed, ["a", "b", "c"], {"c": "data unavailable"}, {"c": "Cee"})
    assert out.holds is None and not out.undecided and out.why == ""
    assert out.detail == ("not evaluable (2 of 3 datasets; missing: Cee (data unavailable)); on the 2 available: "
                          "does not hold (genuine: x) — cells")
    assert out.rule == "every of 2 cells; not evaluable (2 of 3 datasets; missing: Cee (data unavailable))"
    assert every_dataset(failed, ["a", "b"], {}) is failed                      # nothing missing: unchanged
    assert "missing: b (data unavailable)" in every_dataset(failed, ["a", "b"], ["b"]).detail   # a plain list


def test_relative_and_ratio_cells_share_one_home():
    """The comparison cells every item builds: (a − b)/b on the Welch interval, a/b by the delta method."""
    from dpclust.pipeline.claims import diff_ci, ratio_ci
    from dpclust.pipeline.verdicts import ratio_cell, relative_cell

    a, b = (9.0, 1.0, 10), (10.0, 1.5, 12)
    rel, d = relative_cell("r", a, b).interval(0.9), diff_ci(a, b, 0.9)
    assert rel.estimate == pytest.approx(-0.1) and rel.low == pytest.approx(d.low / 10) \
        and rel.high == pytest.approx(d.high / 10)
    assert ratio_cell("q", a, b).interval(0.9) == ratio_ci(a, b, 0.9)


def test_exact_spend_is_one_bookkeeping_rule():
    """Every item's "every private run spent exactly its budget": each cell's deviation at most the
    tolerance, bookkeeping, the why naming the cells that deviate; no cell: not evaluable."""
    from dpclust.pipeline.verdicts import exact_spend

    ok = exact_spend("spent", [("a", 0.0), ("b", 1e-12)], 1e-9, detail="d")
    assert ok.holds is True and ok.kind == "bookkeeping" and ok.cells == 2
    bad = exact_spend("spent", [("a", 0.0), ("b", 0.5)], 1e-9)
    assert bad.holds is False and bad.why == "the budget spent differs from the setting in 1 cells: b"
    none = exact_spend("spent", [], 1e-9)
    assert none.holds is None and none.detail == "no private runs available" and none.kind == "bookkeeping"
