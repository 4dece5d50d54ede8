"""Sensitivity of verdicts to settings we had to choose (dpclust.pipeline.sensitivity; docs/VERDICTS.md):
the label, the own and variant rows, the checks step, the variant datasets and their planning."""
from __future__ import annotations

import dataclasses
import textwrap

import numpy as np
import pandas as pd
import pytest

from dpclust.api import DPClustError
from dpclust.data import load_registry
from dpclust.data.synthetic import generate
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.configuration import group_datasets, load_config
from dpclust.pipeline.planning import plan
from dpclust.pipeline.sensitivity import alternatives, label, label_checks, own_rows, variant_rows
from dpclust.pipeline.steps import check_item

SPEC = {"what": "the generator", "declared": "seed 0", "groups": {"sens_a": "a"},
        "variants": {"_g1": "seed 1", "_g2": "seed 2"}}


def test_label_says_robust_setting_dependent_or_undecided():
    assert label("σ", [("1", "holds"), ("2", "holds")]) == "robust over σ (holds at 1, 2)"
    assert label("σ", [("1", "holds"), ("2", "does not hold"), ("3", "not decidable")]) == \
        "setting-dependent: σ (holds at 1; does not hold at 2; not decidable at 3)"
    # an undecided value never counts as a flip; robust needs two decided values that agree
    assert label("σ", [("1", "does not hold"), ("2", "not decidable")]) == \
        "σ: decided at one value only (does not hold at 1; not decidable at 2)"
    assert label("σ", [("1", "does not hold"), ("2", "not decidable"), ("3", "does not hold")]).startswith("robust")
    assert label("σ", [("1", "not decidable")]) == "σ: decided at no value (not decidable at 1)"


def _table():
    return pd.DataFrame({"dataset": ["s", "s_g1", "s_g2", "t"], "group": ["a", "sens_a", "sens_a", "b"],
                         "value": [1.0, 2.0, 3.0, 4.0]})


def test_own_rows_drop_the_variants_and_variant_rows_read_as_the_items_own():
    own = own_rows(_table(), SPEC)
    assert list(own["dataset"]) == ["s", "t"]
    g1 = variant_rows(_table(), SPEC, "_g1")
    assert list(g1["dataset"]) == ["s"] and list(g1["group"]) == ["a"] and list(g1["value"]) == [2.0]
    assert own_rows(_table(), None).equals(_table())
    stray = _table().assign(group=["a", "b", "sens_a", "b"])   # "s_g1" from an own group
    with pytest.raises(DPClustError, match="'s_g1' ends with a variant suffix"):
        own_rows(stray, SPEC)


def test_label_checks_keeps_the_declared_verdict_and_lists_every_value():
    own = [Check("c", False, detail="d", why="genuine", cells=2), Check("e", True, cells=1)]
    variants = {"seed 1": [Check("c", True, cells=2), Check("e", True, cells=1)],
                "seed 2": [Check("c", False, why="x", cells=2), Check("e", None, cells=0)]}
    c, e = label_checks(own, variants, SPEC)
    assert c.holds is False and c.claim == "c"
    assert c.sensitivity == \
        "setting-dependent: the generator (holds at seed 1; does not hold at seed 0 (declared), seed 2)"
    assert c.why.startswith("genuine; setting-dependent") and c.detail == "d"
    assert e.sensitivity == "robust over the generator (holds at seed 0 (declared), seed 1); not run at seed 2"
    # a threshold in the claim's text: matched by position; `applies_to` picks the claims it concerns
    c2, e2 = label_checks(own, {"3×": [Check("c at 3×", True, cells=2), Check("e at 3×", True, cells=1)]},
                          dict(SPEC, applies_to=["c"]))
    assert "setting-dependent: the generator (holds at 3×; does not hold at seed 0 (declared))" in c2.sensitivity
    assert e2 is own[1]


def test_data_variants_are_compared_with_the_same_datasets_at_the_declared_value():
    table = pd.DataFrame({"dataset": ["s", "t", "s_g1"], "group": ["a", "a", "sens_a"], "value": [1.0, 9.0, 2.0]})

    def checks(rows, item):
        names = item["options"]["datasets"]
        assert item["claims"]["beat_datasets"] == names and item["claims"]["threshold"] == 5
        got = rows[rows["dataset"].isin(names)]
        return [Check("every value below 5", bool((got["value"] < 5).all()), why="w", cells=len(got))]

    # every list of the table's dataset names, in options and claims, is cut to the varied datasets
    spec = {"options": {"datasets": ["s", "t"]}, "claims": {"beat_datasets": ["s", "t"], "threshold": 5},
            "names": {}}
    decl = {"what": "g", "declared": "seed 0", "groups": {"sens_a": "a"}, "variants": {"_g1": "seed 1"}}
    main = checks(own_rows(table, decl), spec)
    declared, others, scope = alternatives(checks, table, own_rows(table, decl), spec, decl, main)
    assert main[0].holds is False and declared[0].holds is True and others["seed 1"][0].holds is True
    assert scope == "on s only: "
    (labelled,) = label_checks(main, others, decl, declared, scope)
    assert labelled.holds is False
    assert "on s only: robust over g (holds at seed 0 (declared), seed 1)" in labelled.sensitivity


def test_the_declared_value_on_the_scope_keeps_the_cells_earlier_looks_settled():
    """A replicated claim's headline keeps the cells an earlier look settled; so does its check at the
    declared value on the variants' scope (the same runs), while the variants are decided afresh."""
    from dpclust.pipeline import verdicts

    table = pd.DataFrame({"dataset": ["s", "t", "s_g1"], "group": ["a", "a", "sens_a"],
                          "value": [-1.0, -9.0, -9.0]})

    def checks(rows, item):
        cells = [verdicts.t_cell(d, float(v), 1.0, 9) for d, v in zip(rows["dataset"], rows["value"])]
        cells = [dataclasses.replace(c, key=c.label) for c in cells]
        return [verdicts.check("every value below 0", cells, verdicts.Directional("<", 0.0))]

    decl = {"what": "g", "declared": "seed 0", "groups": {"sens_a": "a"}, "variants": {"_g1": "seed 1"}}
    spec = {"options": {"datasets": ["s", "t"]}, "claims": {}, "names": {}}
    settled = {"every value below 0": {"s": {"state": "holds", "label": "s", "estimate": -3.0, "low": -4.0,
                                             "high": -2.0, "p_fail": 1.0, "absent": False, "look": 0}}}
    own = own_rows(table, decl)
    with verdicts.settled(settled):
        main = checks(own, spec)
    assert main[0].holds is True                  # s settled at look 0; t holds on its own
    declared, others, scope = alternatives(checks, table, own, spec, decl, main, settled)
    assert declared[0].holds is True and others["seed 1"][0].holds is True and scope == "on s only: "
    declared, _, _ = alternatives(checks, table, own, spec, decl, main)
    assert declared[0].holds is None             # s alone, decided afresh: −1 ± t·1 is open


def test_the_checks_step_decides_on_the_own_rows_and_labels_from_the_alternatives(tmp_path, monkeypatch):
    (tmp_path / "toy_items.py").write_text(textwrap.dedent('''
        from dpclust.pipeline.aggregate import Check

        def checks(table, item):
            rows = table[table["group"] == "a"]
            limit = item["claims"]["limit"]
            return [Check(f"value of s is below {limit}", bool((rows["value"] < limit).all()), why="genuine",
                          cells=len(rows), rule="every row")]
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    csv = tmp_path / "table.csv"
    _table().to_csv(csv, index=False)
    limits = {"what": "the limit (REC)", "declared": "2.5", "claims": {"0.5": {"limit": 0.5}}}
    spec = {"paper": "toy", "item": "x", "module": "toy_items", "claims": {"limit": 2.5},
            "sensitivity": [SPEC, limits]}
    frame = check_item(spec, csv, tmp_path / "checks")
    assert list(frame["result"]) == ["holds"]
    assert "setting-dependent: the generator (holds at seed 0 (declared), seed 1; does not hold at seed 2)" \
        in frame["sensitivity"][0]
    assert "setting-dependent: the limit (REC) (holds at 2.5 (declared); does not hold at 0.5)" \
        in frame["sensitivity"][0]


def test_sigma_variants_share_the_declared_draw_and_seed_variants_are_new_draws():
    registry = load_registry()
    X, y = generate(registry.dataset("su_synth_k3_d2"))
    Xh, yh = generate(registry.dataset("su_synth_k3_d2_s05"))
    Xg, _ = generate(registry.dataset("su_synth_k3_d2_g1"))
    assert np.array_equal(y, yh)
    # same centres c and normals z, σ halved: X = c + z and Xh = c + z/2, so 2·Xh − X = c in every
    # cluster (no point is clipped at d = 2 in the box ±15)
    centre_of_row = 2 * Xh - X
    for j in range(3):
        assert np.allclose(centre_of_row[y == j], centre_of_row[y == j][0], atol=1e-9)
    assert not np.allclose(Xg, X)


def test_a_family_can_be_filtered_by_its_template_variables():
    registry = load_registry()
    found = group_datasets(registry, [{"family": "su_synth_sigma", "where": [{"K": [2, 10], "D": [2, 10]}]},
                                      "s1"])
    names = [name for name, _ in found]
    assert len(names) == 9 and names[-1] == "s1"
    assert {"su_synth_k2_d10_s05", "su_synth_k10_d10_s2"} <= set(names)
    corners = group_datasets(registry, {"family": "su_synth_seed", "where": [{"D": [2, 10]}, {"K": [2, 10]}]})
    assert len(corners) == 2 * 32   # two draws of the datasets with d or k at an end of the grid
    only = group_datasets(registry, {"family": "su_synth_seed", "where": [{"K": [2], "D": [2], "V": ["_g1"]}]})
    assert only == [("su_synth_k2_d2_g1", "su_synth_seed")]


@pytest.mark.parametrize("preset", ["quick", "full"])
def test_the_variant_runs_are_their_own_batches_and_figure_6_reads_them(preset):
    the_plan = plan(load_config(overrides={"preset": preset}))
    fig2 = the_plan.item("su2016", "fig2")
    groups = {job.group for job in fig2.runs}
    assert {"sens_interactive", "sens_theta10", "sens_baseline"} <= groups
    variants = {job.dataset for job in fig2.runs if job.group.startswith("sens_")}
    assert all(d.endswith(("_g1", "_g2", "_s05", "_s2")) for d in variants)
    assert not any(job.dataset in variants for job in fig2.runs if not job.group.startswith("sens_"))
    assert the_plan.item("su2016", "fig6").step_spec("checks")["sensitivity"]["groups"]["sens_theta10"] == \
        "eugkm_theta10"
    assert all("sensitivity" in fig2.step_spec(step) for step in ("aggregate", "render", "checks"))
    # an item without one gets no key: its steps' specs (and so their jobs) are unchanged
    assert not any("sensitivity" in the_plan.item("su2016", "table1").step_spec(step)
                   for step in ("aggregate", "render", "checks"))
    # alternatives of a claim's threshold (Fig. 3's "close to k") reach its checks alone; its settings
    # variant (GkM's output range) reaches the render step too, which leaves the variant runs out
    fig3 = the_plan.item("su2016", "fig3")
    assert len(fig3.step_spec("checks")["sensitivity"]) == 2
    for step in ("aggregate", "render"):
        kept = fig3.step_spec(step)["sensitivity"]
        assert len(kept) == 1 and "values" in kept[0] and "claims" not in kept[0]
    balcan = the_plan.item("balcan2017", "fig2a")      # data variants and a threshold's alternatives
    kept = balcan.step_spec("aggregate")["sensitivity"]
    assert len(kept) == 1 and "groups" in kept[0] and len(balcan.step_spec("checks")["sensitivity"]) == 2


SETTING = {"what": "ρ (EXT 0.225)", "declared": "0.225", "groups": {"rho_half": "h", "rho_double": "h"},
           "values": {"rho_half": "0.1125", "rho_double": "0.45"}}


def _setting_table():
    """Group h runs algorithms x and y on s and t; the variant groups rerun x on s only."""
    return pd.DataFrame({"dataset": ["s", "s", "t", "t", "s", "s"],
                         "group": ["h", "h", "h", "h", "rho_half", "rho_double"],
                         "algorithm": ["x", "y", "x", "y", "x", "x"],
                         "value": [1.0, 5.0, 1.0, 5.0, 9.0, 2.0]})


def test_settings_variants_take_their_own_groups_place_on_their_datasets_and_algorithms():
    table = _setting_table()
    own = own_rows(table, SETTING)
    assert list(own["group"]) == ["h"] * 4

    def checks(rows, item):
        assert set(rows["group"]) == {"h"} and len(rows) == len(item["options"]["datasets"]) * 2
        x, y = (rows.loc[rows["algorithm"] == a, "value"].to_numpy() for a in ("x", "y"))
        return [Check("x beats y", bool((x < y).all()), why="genuine", cells=len(x))]

    spec = {"options": {"datasets": ["s", "t"]}, "claims": {}}
    main = checks(own, spec)
    declared, others, scope = alternatives(checks, table, own, spec, SETTING, main)
    # scoped to s, the one dataset the variants ran; x's rows of group h replaced, y's kept
    assert scope == "on s only: " and declared[0].holds is True
    assert others["0.1125"][0].holds is False and others["0.45"][0].holds is True
    (labelled,) = label_checks(main, others, SETTING, declared, scope)
    assert labelled.holds is True
    assert labelled.sensitivity == ("on s only: setting-dependent: ρ (EXT 0.225) (holds at 0.225 (declared), 0.45; "
                                    "does not hold at 0.1125)")


def test_the_variant_groups_of_one_value_take_their_places_together():
    """A swept setting's variant: one variant group per own group (e1, e2), both standing for one
    value, are read together, so a claim across the two groups sees the variant in both."""
    decl = {"what": "range", "declared": "a", "groups": {"v1": "e1", "v2": "e2"}, "values": {"v1": "b", "v2": "b"}}
    table = pd.DataFrame({"dataset": ["s"] * 4, "group": ["e1", "e2", "v1", "v2"], "algorithm": ["x"] * 4,
                          "value": [3.0, 2.0, 1.0, 4.0]})
    own = own_rows(table, decl)

    def checks(rows, item):
        by = dict(zip(rows["group"], rows["value"]))
        assert len(rows) == 2 and set(by) == {"e1", "e2"}
        return [Check("e2 below e1", bool(by["e2"] < by["e1"]), why="genuine", cells=1)]

    main = checks(own, {})
    declared, others, _ = alternatives(checks, table, own, {"options": {}, "claims": {}}, decl, main)
    assert list(others) == ["b"] and declared[0].holds is True and others["b"][0].holds is False


def test_settings_variants_need_the_run_group_and_a_declared_own_group():
    with pytest.raises(DPClustError, match="needs the item's table to keep the run group"):
        own_rows(_setting_table().drop(columns="group"), SETTING)
    stray = dict(SETTING, groups={"rho_half": "h"})
    with pytest.raises(DPClustError, match="'rho_double' is in `values` but not in `groups`"):
        alternatives(lambda rows, item: [], _setting_table(), own_rows(_setting_table(), stray),
                     {"options": {}}, stray, [])


def test_an_alternative_stopped_by_an_earlier_look_is_quoted_not_judged_again():
    from dpclust.pipeline.replication import alternative_key

    own = [Check("c", False, why="genuine", cells=2)]
    open_ = Check("c", None, undecided=True, cells=2)
    later = {"seed 1": [open_], "seed 2": [open_]}
    stopped = {alternative_key("c", SPEC["what"], "seed 1"): "does not hold"}
    (c,) = label_checks(own, later, SPEC, stopped=stopped)
    assert c.sensitivity == ("robust over the generator (does not hold at seed 0 (declared), seed 1; "
                             "not decidable at seed 2)")


def test_the_alternatives_with_runs_of_their_own_are_written_for_the_looks(tmp_path):
    """The checks step writes the paper claims at each data or settings alternative, the declared value
    on the scope first, with their rows and cells (what the replication decision replicates); an
    alternative's settled cells are its own."""
    import json

    from dpclust.pipeline import verdicts
    from dpclust.pipeline.replication import alternative_key
    from dpclust.pipeline.sensitivity import alternative_records

    table = pd.DataFrame({"dataset": ["s", "t", "s_g1"], "group": ["a", "a", "sens_a"], "value": [1.0, 1.0, 2.0]})
    seen = []

    def checks(rows, item):
        seen.append(dict(verdicts._PRIOR.get()))
        cell = verdicts.t_cell("s", float(rows["value"].iloc[0]), 0.1, 5)
        return [verdicts.check("value below 5", [dataclasses.replace(cell, key="k")], verdicts.Directional("<", 5.0),
                               "every"),
                Check("alternative reading: value below 9", True, rule="r", cells=1)]

    def rec(state):
        return {"label": "s", "state": state, "estimate": 1.0, "low": 0.0, "high": 2.0, "p_fail": 0.5, "look": 0}

    decl = dict(SPEC, variants={"_g1": "seed 1"})
    settled = {"value below 5": {"k": rec("holds")},
               alternative_key("value below 5", SPEC["what"], "seed 1"): {"k": rec("fails")}}
    declared, others, scope = alternatives(checks, table, own_rows(table, decl), {"names": {}}, decl, [], settled)
    assert seen[0]["value below 5"] == {"k": rec("holds")} and seen[1] == {"value below 5": {"k": rec("fails")}}
    records = alternative_records(decl, declared, declared, others, scope)
    assert scope == "on s only: " and alternative_records(decl, declared, declared, others, "").keys() == {
        alternative_key("value below 5", SPEC["what"], "seed 1")}
    values = ("seed 0 (declared)", "seed 1")
    assert sorted(records) == [alternative_key("value below 5", SPEC["what"], v) for v in values]
    alt = records[alternative_key("value below 5", SPEC["what"], "seed 1")]   # its settled cell kept
    assert alt["row"]["result"] == "does not hold" and alt["cells"]["k"]["state"] == "fails"
    assert alt["value"] == "seed 1"
    assert alt["of"] == "value below 5"
    assert alternative_records({"what": "t", "declared": "2", "claims": {"3": {}}}, declared, declared, others) == {}
    json.dumps(records)


def test_a_claim_worded_for_its_scope_is_matched_to_the_items_own():
    """On a scope the claim may name fewer datasets: its records say which own claim they stand for, and
    a stopped value is found under the scope's wording."""
    from dpclust.pipeline.replication import alternative_key
    from dpclust.pipeline.sensitivity import alternative_records

    own = [Check("c on S and T", False, why="genuine", cells=2, rule="r")]
    at_scope = [Check("c on S", False, cells=1, rule="r")]
    variants = {"seed 1": [Check("c on S", None, undecided=True, cells=1, rule="r")]}
    records = alternative_records(SPEC, own, at_scope, variants, "on S only: ")
    assert {r["of"] for r in records.values()} == {"c on S and T"}
    assert set(records) == {alternative_key("c on S", SPEC["what"], v) for v in ("seed 0 (declared)", "seed 1")}
    stopped = {alternative_key("c on S", SPEC["what"], "seed 1"): "does not hold"}
    (c,) = label_checks(own, variants, SPEC, at_scope, "on S only: ", stopped)
    assert c.sensitivity == "on S only: robust over the generator (does not hold at seed 0 (declared), seed 1)"


def test_a_claim_failing_on_cells_the_setting_does_not_vary_is_robust_over_it():
    """Cohen-Addad et al.'s "within 3×" fails on Shuttle, which Skin's dimension does not touch: the
    failure is robust over it, though on Skin alone the variant stays undecided. A failing cell past
    Holm's first step (p > α/n) could lose its rejection as the scope's cells move: not robust then."""
    from dpclust.pipeline import verdicts
    from dpclust.pipeline.declared import run_key

    def checks(rows, item):
        cells = [verdicts.t_cell(d, float(v), float(se), 9) for d, v, se in
                 zip(rows["dataset"], rows["value"], rows["se"])]
        cells = [dataclasses.replace(c, key=run_key(c.label, {}, "m", [])) for c in cells]
        return [verdicts.check("every value below 0", cells, verdicts.Directional("<", 0.0))]

    decl = {"what": "g", "declared": "d = 3", "groups": {"sens_a": "a"}, "variants": {"_d4": "d = 4"}}
    spec = {"options": {"datasets": ["s", "t"]}, "claims": {}, "names": {}}

    def label_of(s_value, t_value):
        table = pd.DataFrame({"dataset": ["s", "t", "s_d4"], "group": ["a", "a", "sens_a"],
                              "value": [s_value, t_value, -0.5], "se": [1.0, 1.0, 1.0]})
        own = own_rows(table, decl)
        main = checks(own, spec)
        declared, others, scope = alternatives(checks, table, own, spec, decl, main)
        assert main[0].holds is False and others["d = 4"][0].holds is None
        return declared[0], label_checks(main, others, decl, declared, scope)[0]

    declared, far = label_of(-9.0, 9.0)
    assert declared.holds is True
    assert far.sensitivity.startswith("robust over g: it fails on cells the setting does not vary (t: 9 [")
    assert far.sensitivity.endswith("on s only: g: decided at one value only (holds at d = 3 (declared); "
                                    "not decidable at d = 4)")
    assert "robust over g" in far.why
    # s fails at Holm's first step, t (α/2 < p ≤ α) only at its second: were s to hold at d = 4, t
    # would not fail, so the failure is not robust over g
    declared, near = label_of(9.0, 1.9)
    assert declared.holds is False and "t: 1.9" in near.detail and "(fails)" in near.detail.split("t: 1.9")[1]
    assert near.sensitivity == ("on s only: g: decided at one value only (does not hold at d = 3 (declared); "
                                "not decidable at d = 4)")
