"""Su et al. (2016): the two claims of issue #39 item 6 on small synthetic NICV tables with known answers.

* Figure 1 (§5.1): on the low-d datasets "EUGkM clearly outperforms DPLloyd at small ε value and their
  gap becomes smaller as ε increases", read at the ε grid's ends: |DPLloyd − EUGkM| at the largest ε
  below EUGkM's lead at the smallest ε, every low-d dataset, the rubric's 1 % null margin;
* Figure 5 (§6.4): on the low-d datasets, when ε increases the hybrid has "slightly better performance"
  than EUGkM: Hybrid < EUGkM at every ε above `small_epsilon`, the rubric's 1 % null margin.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpclust.pipeline import declared
from dpclust.pipeline.items.su2016 import common, fig1, fig5

LABELS = {"su2016.dplloyd": "DPLloyd", "su2016.eugkm": "EUGkM", "su2016.hybrid": "Hybrid", "su2016.lloyd": "Baseline"}
NAMES = {"algorithms": {"su2016.dplloyd": "DPLloyd", "su2016.eugkm": "EUGkM", "su2016.hybrid": "Hybrid",
                        "su2016.lloyd": "Lloyd"},
         "datasets": {"s1": "S1", "gowalla": "Gowalla", "adult_num": "Adult-num"}}
FIG1_CLAIMS = {"low_d": ["s1"], "high_d": ["adult_num"], "gkm_worst_fraction": 0.9, "dplloyd_best_fraction": 1.0,
               "dplloyd_best_exempt": {"dataset": "s1", "below_epsilon": 0.15}, "small_epsilon": 0.15,
               "dplloyd_high_d_fraction": 0.8, "gkm3k_fraction": 0.9,
               "declared": declared.from_config(Path(__file__).parents[2] / "config", "su2016", "fig1")}
FIG5_CLAIMS = {"high_d": [], "low_d": ["s1"], "most_cases": 0.5, "small_epsilon": 0.15, "size_tolerance": 0.1,
               "best_optimum": "su2016.lloyd_restarts",
               "quoted": {"adult_eps005": {"dataset": "adult_num", "epsilon": 0.05, "fallback": 0.37, "forced": 0.244},
                          "adult_baseline_sizes": {"dataset": "adult_num", "largest": 13894, "smallest": 3160},
                          "gowalla_eps07": {"dataset": "gowalla", "epsilon": 0.7, "hybrid": 0.02172,
                                            "eugkm": 0.02174}},
               "declared": declared.from_config(Path(__file__).parents[2] / "config", "su2016", "fig5")}
GAP = "The gap between EUGkM and DPLloyd on the low-dimensional datasets becomes smaller as ε increases"
SLIGHTLY = "On low-d datasets, as ε increases"


def record(dataset, algorithm, eps, mean, spread, runs=10, applied=None):
    """`runs` runs of mean NICV `mean`, spread evenly over ± `spread` (each its own initial set)."""
    values = mean + spread * np.linspace(-1.0, 1.0, runs)
    info = {} if applied is None else {"hybrid_applied": applied}
    return {"group": "g", "dataset": dataset, "algorithm": algorithm, "k": 3, "epsilon": eps, "status": "ok",
            "d": 2, "n": 1000, "runs": [{"seed": i, "nicv": float(v), "wall_time_s": 0.01, "cluster_sizes": [6, 4],
                                         "info": dict(info)} for i, v in enumerate(values)]}


def table(cells, spread=1e-4, dataset="s1", extra=()):
    """The NICV table of one dataset: {(algorithm, ε): mean NICV}, each cell's runs ± `spread`."""
    recs = [record(dataset, "su2016.lloyd", None, 0.01, 0.0, runs=3)]
    recs += [record(dataset, alg, eps, v, spread, applied=(eps > 0.15) if alg == "su2016.hybrid" else None)
             for (alg, eps), v in cells.items()]
    return common.aggregate_nicv([*recs, *extra], {"table": {"labels": LABELS}})


def gap_check(cells, spread=1e-4, extra=()):
    spec = {"options": {"panels": ["s1", "adult_num"]}, "claims": FIG1_CLAIMS, "names": NAMES}
    [check] = [c for c in fig1.checks(table(cells, spread, extra=extra), spec) if c.claim.startswith(GAP)]
    return check


def slightly_check(cells, spread=1e-4, panels=("s1",)):
    spec = {"options": {"panels": list(panels)}, "claims": FIG5_CLAIMS, "names": NAMES}
    [check] = [c for c in fig5.checks(table(cells, spread), spec) if c.claim.startswith(SLIGHTLY)]
    return check


def ends(d_lo, e_lo, d_hi, e_hi, mid=None):
    cells = {("su2016.dplloyd", 0.05): d_lo, ("su2016.eugkm", 0.05): e_lo,
             ("su2016.dplloyd", 1.0): d_hi, ("su2016.eugkm", 1.0): e_hi}
    if mid:
        cells.update({("su2016.dplloyd", 0.2): mid[0], ("su2016.eugkm", 0.2): mid[1]})
    return cells


def test_gap_claim_holds_when_the_distance_at_the_largest_eps_is_below_the_lead_at_the_smallest():
    # lead 0.08 at ε = 0.05, distance 0.005 at ε = 1 (the middle ε does not enter: the grid's ends)
    check = gap_check(ends(0.10, 0.02, 0.030, 0.025, mid=(0.5, 0.01)))
    assert check.holds is True and check.cells == 1 and check.kind == "paper"
    assert "every of 1 cell" in check.rule and "grid's ends" in check.rule
    assert check.quantity < 0 and "S1 ε=0.05→1" in check.detail


def test_gap_claim_fails_when_the_gap_grows_or_the_curves_cross_further_apart():
    # EUGkM's lead grows
    assert gap_check(ends(0.10, 0.02, 0.30, 0.02)).holds is False
    # the curves cross: DPLloyd ahead at ε = 1 by more than EUGkM's lead at ε = 0.05 (a larger distance)
    crossed = gap_check(ends(0.10, 0.02, 0.02, 0.20))
    assert crossed.holds is False and crossed.why
    # a signed reading would call this a shrinking gap; the distance between the curves did not shrink
    assert crossed.quantity > 0


def test_gap_claim_unchanged_gap_is_effect_absent():
    # the gap changes by 0.1 % of the lead: inside the rubric's ±1 % null margin
    check = gap_check(ends(0.10, 0.02, 0.08008, 0.0), spread=1e-6)
    assert check.holds is False and "effect absent" in check.why


def test_gap_claim_is_not_decidable_on_noisy_runs():
    check = gap_check(ends(0.10, 0.02, 0.030, 0.025), spread=0.5)
    assert check.holds is None and check.undecided


def test_gap_claim_uses_the_ends_where_both_methods_ran():
    # DPLloyd alone at ε = 2: not an end of the comparison (EUGkM did not run there)
    extra = [record("s1", "su2016.dplloyd", 2.0, 5.0, 1e-4)]
    check = gap_check(ends(0.10, 0.02, 0.030, 0.025), extra=extra)
    assert check.holds is True and "ε=0.05→1 " in check.detail


def slight(hyb_hi, eug_hi, hyb_lo=0.30, eug_lo=0.20):
    """Hybrid and EUGkM at a small ε (0.1, where the hybrid falls back) and two larger ones (0.5, 1)."""
    return {("su2016.hybrid", 0.1): hyb_lo, ("su2016.eugkm", 0.1): eug_lo,
            ("su2016.hybrid", 0.5): hyb_hi, ("su2016.eugkm", 0.5): eug_hi,
            ("su2016.hybrid", 1.0): hyb_hi * 0.9, ("su2016.eugkm", 1.0): eug_hi * 0.9}


def test_hybrid_slightly_better_holds_above_the_small_eps_only():
    # 5 % below EUGkM at ε = 0.5 and 1; worse at ε = 0.1 (below small_epsilon: not a cell)
    check = slightly_check(slight(0.0190, 0.0200))
    assert check.holds is True and check.cells == 2
    assert "ε > claims.small_epsilon (0.15)" in check.rule and "applied 100%" in check.detail


def test_hybrid_slightly_better_fails_when_worse_or_within_the_null_margin():
    worse = slightly_check(slight(0.0210, 0.0200))
    assert worse.holds is False and "effect absent" not in worse.why
    # 0.1 % better (the size of §6.4's Gowalla example, 0.02172 vs 0.02174): inside the ±1 % null margin
    tie = slightly_check(slight(0.02172, 0.02174), spread=1e-7)
    assert tie.holds is False and "effect absent" in tie.why


def test_hybrid_slightly_better_is_not_decidable_on_noisy_runs_and_not_evaluable_without_low_d_cells():
    noisy = slightly_check(slight(0.0190, 0.0200), spread=0.05)
    assert noisy.holds is None and noisy.undecided
    only_small = slightly_check({("su2016.hybrid", 0.1): 0.01, ("su2016.eugkm", 0.1): 0.02})
    assert only_small.holds is None and not only_small.undecided and only_small.cells == 0
