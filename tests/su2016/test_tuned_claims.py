"""Su et al. (2016): parameters chosen by looking at a claim (issue #39 item 5; docs/VERDICTS.md "tuned").

On small synthetic tables with known answers:

* Figure 4: Gene's mutation_decay 0.97 was chosen so that "Gene overtakes Lloyd" holds. The paper's row
  is decided at the value fixed beforehand (0.8, run group gene_d080), not evaluable (naming the group)
  where that group did not run; the verdict at the tuned 0.97 is an "alternative reading (tuned
  mutation_decay 0.97)" row, tallied apart; the paper's row says "setting-dependent: mutation_decay
  (...)" when the sweep's verdicts disagree and "robust over mutation_decay" when they agree.
* Figure 5: the reference optimum of §6.4's Adult-num cluster sizes (best_optimum, Lloyd from k-means++
  restarts) was chosen so that the largest-cluster check holds: the paper's rows are decided at the
  §5.1 baseline, the restarts' verdict is an alternative reading.
* Figure 1's S1 exemption is STATED in §5.1 (not tuned): the YAML says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dpclust.pipeline import declared
from dpclust.pipeline.aggregate import Check, checks_frame
from dpclust.pipeline.items.su2016 import common, fig4, fig5

NAMES = {"algorithms": {"su2016.lloyd": "Lloyd", "su2016.gene": "Gene"},
         "datasets": {"s1": "S1", "adult_num": "Adult-num"}}
METHODS = {"su2016.lloyd": "Lloyd", "su2016.gene": "Gene"}
DECAYS = {"gene_d080": 0.8, "gene_d090": 0.9, "gene": 0.97, "gene_d099": 0.99}
TUNED = {"mutation_decay": "0.97 chosen so that 'Gene overtakes Lloyd' holds; fixed beforehand: 0.8"}
OVERTAKES = "Gene overtakes Lloyd by iteration 100"
CONFIG = Path(__file__).resolve().parents[2] / "config" / "papers" / "su2016.yaml"


def fig4_item(datasets=("s1",), tuned=True):
    claims = {"methods": METHODS, "main_group": "gene", "early_iterations": 3, "horizon": 100,
              "why": {"overtakes": "depends on a MISSING parameter. Failing: {failing}"}}
    if tuned:
        claims.update(tuned=TUNED, fixed_beforehand={"mutation_decay": 0.8, "group": "gene_d080"},
                      sweep_groups=["gene_d080", "gene_d090", "gene", "gene_d099"])
    return {"table": {"labels": METHODS}, "claims": claims, "options": {"panels": list(datasets)}, "names": NAMES}


def traces(final, start, n, length=100):
    """`n` runs of NICV traces from `start` to `final` over `length` iterations, ± 1e-5 apart."""
    return [list(np.linspace(start, final, length) + 1e-5 * (i - n / 2)) for i in range(n)]


def fig4_table(gene_final: dict, lloyd_final=0.012, dataset="s1", extra=()):
    """Lloyd (30 sets, converged at `lloyd_final`) and Gene per run group: {group: NICV after 100}."""
    recs = [{"group": "lloyd", "dataset": dataset, "algorithm": "su2016.lloyd", "k": 15, "epsilon": None,
             "status": "ok", "settings": {},
             "runs": [{"seed": i, "info": {"trace_nicv": t}} for i, t in enumerate(traces(lloyd_final, 0.02, 30, 20))]}]
    for group, final in gene_final.items():
        recs.append({"group": group, "dataset": dataset, "algorithm": "su2016.gene", "k": 15, "epsilon": None,
                     "status": "ok", "settings": {"mutation_decay": DECAYS[group]},
                     "runs": [{"seed": i, "info": {"trace_nicv": t}} for i, t in enumerate(traces(final, 0.05, 3))]})
    return fig4.aggregate([*recs, *extra], fig4_item())


def overtakes(table, item=None):
    """(the paper's row, the alternative rows) of "Gene overtakes Lloyd"."""
    rows = [c for c in fig4.checks(table, item or fig4_item()) if OVERTAKES in c.claim]
    paper = [c for c in rows if not c.claim.startswith("alternative reading")]
    assert len(paper) == 1
    return paper[0], [c for c in rows if c.claim.startswith("alternative reading")]


# ---------------------------------------------------------------------------------------------
# Figure 4: mutation_decay
# ---------------------------------------------------------------------------------------------
def test_gene_claim_is_decided_at_the_decay_fixed_beforehand_and_the_tuned_decay_is_an_alternative():
    # frozen above Lloyd at 0.8 (fixed beforehand), below it at the tuned 0.97 and at 0.99
    table = fig4_table({"gene_d080": 0.015, "gene_d090": 0.014, "gene": 0.008, "gene_d099": 0.008})
    paper, [alt] = overtakes(table)
    assert paper.holds is False and paper.kind == "paper" and paper.cells == 1
    assert paper.quantity == pytest.approx((0.015 - 0.012) / 0.012, rel=1e-3)     # the 0.8 cell
    assert "decided at mutation_decay 0.8 (fixed beforehand, run group gene_d080)" in paper.rule
    assert "Gene at mutation_decay 0.8" in paper.detail
    assert alt.claim.startswith("alternative reading (tuned mutation_decay 0.97): Gene overtakes Lloyd")
    assert alt.holds is True and alt.quantity == pytest.approx((0.008 - 0.012) / 0.012, rel=1e-3)
    # the alternative is tallied apart from the paper's claims
    frame = checks_frame([paper, alt])
    assert list(frame["kind"]) == ["paper", "alternative"]


def test_gene_claim_says_setting_dependent_with_the_values_where_it_flips():
    table = fig4_table({"gene_d080": 0.015, "gene_d090": 0.014, "gene": 0.008, "gene_d099": 0.008})
    paper, _ = overtakes(table)
    label = ("setting-dependent: mutation_decay (holds at 0.97 (declared, tuned), 0.99; does not hold at "
             "0.8 (fixed beforehand), 0.9)")
    assert label in paper.detail and label in paper.rule and label in paper.why
    assert "robust" not in paper.detail
    # each value's verdict is in the detail, with its worst cell
    assert "0.9: does not hold (1 dataset; worst 0.1667" in paper.detail


def test_gene_claim_says_robust_when_the_sweep_agrees():
    table = fig4_table({"gene_d080": 0.010, "gene_d090": 0.009, "gene": 0.008, "gene_d099": 0.008})
    paper, [alt] = overtakes(table)
    assert paper.holds is True and alt.holds is True
    assert "robust over mutation_decay (holds at 0.8 (fixed beforehand), 0.9, 0.97 (declared, tuned), 0.99)" \
        in paper.detail
    assert "setting-dependent" not in paper.detail


def test_gene_claim_not_evaluable_without_runs_at_the_decay_fixed_beforehand():
    # a preset that runs no gene_d080 (the value fixed beforehand): no silent fallback to 0.97
    table = fig4_table({"gene": 0.008, "gene_d099": 0.008})
    paper, [alt] = overtakes(table)
    assert paper.holds is None and not paper.undecided and paper.cells == 0
    assert "not evaluable" in paper.detail and "mutation_decay 0.8 (run group gene_d080)" in paper.detail
    assert "robust over mutation_decay (holds at 0.97 (declared, tuned), 0.99)" in paper.detail
    assert alt.holds is True


def test_gene_claim_names_a_dataset_the_fixed_beforehand_group_did_not_run():
    # the quick preset's decay sweep runs on S1 only: Adult-num has Lloyd and Gene at 0.97, none at 0.8
    adult = fig4_table({"gene": 0.15}, lloyd_final=0.2, dataset="adult_num")
    s1 = fig4_table({"gene_d080": 0.015, "gene": 0.008})
    table = pd.concat([s1, adult], ignore_index=True)
    paper, [alt] = overtakes(table, fig4_item(("s1", "adult_num")))
    assert paper.holds is False and paper.cells == 1
    assert "no Gene run at mutation_decay 0.8 (run group gene_d080) in this preset: Adult-num" in paper.detail
    assert alt.holds is True and alt.cells == 2


def test_lloyd_faster_is_decided_at_the_declared_decay_with_the_sweep_beside_it():
    table = fig4_table({"gene_d080": 0.015, "gene_d090": 0.014, "gene": 0.008, "gene_d099": 0.008})
    [faster] = [c for c in fig4.checks(table, fig4_item()) if "improves faster" in c.claim]
    assert faster.holds is True and "Gene at mutation_decay 0.97" in faster.detail
    assert "robust over mutation_decay" in faster.detail


def test_without_a_tuned_flag_the_claim_is_decided_at_the_declared_decay_alone():
    table = fig4_table({"gene_d080": 0.015, "gene": 0.008})
    rows = [c for c in fig4.checks(table, fig4_item(tuned=False)) if OVERTAKES in c.claim]
    assert [c.holds for c in rows] == [True] and not rows[0].claim.startswith("alternative")


def test_a_tuned_decay_needs_its_value_fixed_beforehand():
    item = fig4_item()
    del item["claims"]["fixed_beforehand"]
    with pytest.raises(ValueError, match="fixed_beforehand"):
        fig4.checks(fig4_table({"gene": 0.008}), item)


# ---------------------------------------------------------------------------------------------
# the label itself
# ---------------------------------------------------------------------------------------------
def test_sweep_label_flips_only_between_holds_and_does_not_hold():
    yes, no, open_, none = (Check("c", True), Check("c", False, why="w"), Check("c", None, undecided=True),
                            Check("c", None))
    assert common.sweep_label("s", [("1", yes), ("2", no), ("3", open_)]) == \
        "setting-dependent: s (holds at 1; does not hold at 2; not decidable at 3)"
    assert common.sweep_label("s", [("1", yes), ("2", open_), ("3", none)]) == \
        "s: decided at one value only (holds at 1; not decidable at 2; not evaluable at 3)"
    assert common.sweep_label("s", [("1", yes), ("2", yes), ("3", open_)]) == \
        "robust over s (holds at 1, 2; not decidable at 3)"
    assert common.sweep_label("s", [("1", open_)]) == "s: decided at no value (not decidable at 1)"


# ---------------------------------------------------------------------------------------------
# Figure 5: best_optimum
# ---------------------------------------------------------------------------------------------
def sizes_record(algorithm, nicvs, sizes, group):
    return {"group": group, "dataset": "adult_num", "algorithm": algorithm, "k": 5, "epsilon": None, "status": "ok",
            "d": 6, "n": 48842, "runs": [{"seed": i, "nicv": v, "wall_time_s": 0.01,
                                          "cluster_sizes": sizes if i == 0 else [9000] * 5, "info": {}}
                                         for i, v in enumerate(nicvs)]}


def fig5_checks(base_sizes, restart_sizes, tuned=True):
    recs = [sizes_record("su2016.lloyd", [0.19523, 0.196], base_sizes, "baseline"),
            sizes_record("su2016.lloyd_restarts", [0.19412, 0.196], restart_sizes, "restarts")]
    table = common.aggregate_nicv(recs, {"table": {"labels": {"su2016.lloyd": "Baseline"},
                                                   "size_algorithms": ["su2016.lloyd", "su2016.lloyd_restarts"]}})
    claims = {"high_d": ["adult_num"], "low_d": [], "most_cases": 0.5, "small_epsilon": 0.15, "size_tolerance": 0.1,
              "size_reference": "su2016.lloyd", "best_optimum": "su2016.lloyd_restarts",
              "quoted": {"adult_eps005": {"dataset": "adult_num", "epsilon": 0.05, "fallback": 0.37, "forced": 0.244},
                         "adult_baseline_sizes": {"dataset": "adult_num", "largest": 13894, "smallest": 3160},
                         "gowalla_eps07": {"dataset": "gowalla", "epsilon": 0.7, "hybrid": 0.02172,
                                           "eugkm": 0.02174}},
              "declared": declared.from_config(Path(__file__).parents[2] / "config", "su2016", "fig5")}
    if tuned:
        claims["tuned"] = {"best_optimum": "chosen so that the largest-cluster check holds; fixed beforehand: "
                                           "su2016.lloyd"}
    out = fig5.checks(table, {"claims": claims, "options": {"panels": ["adult_num"]}, "names": NAMES})
    rows = [c for c in out if "clusters" in c.claim]
    assert len(rows) == 4
    return {("alt" if c.claim.startswith("alternative reading") else "paper",
             "largest" if "largest" in c.claim else "smallest"): c for c in rows}


def test_cluster_sizes_are_decided_at_the_section_5_1_baseline_and_the_restarts_are_an_alternative():
    rows = fig5_checks([19799, 12016, 11585, 3308, 2134], [13788, 13396, 11592, 7925, 2141])
    largest, alt = rows["paper", "largest"], rows["alt", "largest"]
    assert largest.holds is False and largest.quantity == pytest.approx((19799 - 13894) / 13894)
    assert "§5.1 baseline's min-NICV run" in largest.claim
    assert alt.claim.startswith("alternative reading (tuned best_optimum su2016.lloyd_restarts): Adult-num")
    assert alt.holds is True and alt.quantity == pytest.approx((13894 - 13788) / 13894)
    assert ("setting-dependent: best_optimum (holds at su2016.lloyd_restarts (tuned); does not hold at "
            "su2016.lloyd (fixed beforehand))") in largest.detail
    assert "decided at su2016.lloyd (fixed beforehand)" in largest.rule
    # the smallest fails at both references: robust
    smallest = rows["paper", "smallest"]
    assert smallest.holds is False and rows["alt", "smallest"].holds is False
    assert "robust over best_optimum (does not hold at su2016.lloyd (fixed beforehand), su2016.lloyd_restarts " \
           "(tuned))" in smallest.detail
    frame = checks_frame([largest, alt])
    assert list(frame["kind"]) == ["paper", "alternative"]


def test_cluster_sizes_robust_when_both_references_agree():
    rows = fig5_checks([13900, 12000, 11000, 8000, 3100], [13788, 13396, 11592, 7925, 3150])
    assert rows["paper", "largest"].holds is True and rows["paper", "smallest"].holds is True
    assert "robust over best_optimum (holds at su2016.lloyd (fixed beforehand), su2016.lloyd_restarts (tuned))" \
        in rows["paper", "largest"].detail


# ---------------------------------------------------------------------------------------------
# the YAML: flags, the values fixed beforehand and the groups that run them
# ---------------------------------------------------------------------------------------------
def test_the_yaml_flags_each_tuned_parameter_with_a_value_fixed_beforehand_that_runs():
    items = yaml.safe_load(CONFIG.read_text())["items"]
    fig4_claims = items["fig4"]["claims"]
    assert "0.97" in fig4_claims["tuned"]["mutation_decay"] and "fixed beforehand: 0.8" in \
        fig4_claims["tuned"]["mutation_decay"]
    fixed = fig4_claims["fixed_beforehand"]
    sweep = items["fig4"]["runs"]["gene_decay"]["sweep"]
    assert sweep["setting"] == "mutation_decay" and sweep["values"][fixed["group"]] == fixed["mutation_decay"] == 0.8
    # every preset runs the group at the value fixed beforehand (the test preset's sweep is that group alone)
    for preset in ("quick", "test"):
        runs = (items["fig4"]["presets"][preset].get("runs") or {}).get("gene_decay") or {}
        values = (runs.get("sweep") or sweep)["values"]
        assert values.get(fixed["group"]) == 0.8, preset
    assert set(fig4_claims["sweep_groups"]) == {*sweep["values"], fig4_claims["main_group"]}
    fig5_claims = items["fig5"]["claims"]
    assert "fixed beforehand: su2016.lloyd" in fig5_claims["tuned"]["best_optimum"]
    assert fig5_claims["size_reference"] == "su2016.lloyd"
    # Figure 1's S1 exemption is the paper's own (§5.1), not tuned
    assert "tuned" not in items["fig1"]["claims"]
