"""The audit items: aggregate (verdicts, Bonferroni maximum over designs), table, figure, checks."""
from __future__ import annotations

import pandas as pd
import pytest

from dpclust.audit.designs import ADD_REMOVE, REPLACE_ONE
from dpclust.pipeline.audit_job import evaluate, run_audit
from dpclust.pipeline.items.audit import common as I

from .fake_algorithms import register

FAKES = register()
ITEM = {"title": "Privacy audit", "names": {"algorithms": {"test.honest_sum": "Honest sum"}}}


def _record(function, design="corner_outlier", n=1, k=1, samples=600, guarantee=None, relation=ADD_REMOVE,
            relation_source="", settings=None, variant=None):
    spec = {"algorithm": f"test.{function}", "function": f"{FAKES}:{function}", "private": True,
            "settings": settings or {}, "design": design, "n": n, "k": k, "relation": relation, "epsilon": 1.0,
            "delta": 0.0, "samples": samples, "confidence": 0.95, "seed": 11, "relation_source": relation_source}
    if guarantee is not None:
        spec["guarantee"] = guarantee
    if variant is not None:
        spec["variant"] = variant
    return run_audit(spec)


@pytest.fixture(scope="module")
def records():
    pure = {"kind": "ε-DP", "note": "", "relation": ADD_REMOVE}
    not_dp = {"kind": "not DP as published", "note": "exact sum", "relation": REPLACE_ONE}
    return [
        _record("honest_sum", guarantee=pure),
        _record("honest_sum", design="lone_point", guarantee=pure),
        _record("buggy_sum", guarantee=pure),
        _record("blurred_sum", samples=200),                                     # guarantee undeclared
        _record("exact_sum", design="line_sums", n=20, samples=200, guarantee=not_dp, relation=REPLACE_ONE),
    ]


@pytest.fixture(scope="module")
def table(records):
    return I.aggregate_audit(records, ITEM)


def test_aggregate_rows_verdicts_and_labels(table):
    assert list(table.columns) == I.COLUMNS
    summary = table[table["summary"]].set_index("algorithm")
    assert summary.loc["test.buggy_sum", "verdict"] == I.VIOLATION
    assert summary.loc["test.honest_sum", "verdict"] == I.POWER
    assert summary.loc["test.blurred_sum", "verdict"] == I.NO_POWER
    assert summary.loc["test.blurred_sum", "guarantee"] == I.UNDECLARED       # never reported as DP
    assert summary.loc["test.exact_sum", "verdict"] == I.NOT_DP_SHOWN
    assert summary.loc["test.exact_sum", "relation"] == REPLACE_ONE
    assert summary.loc["test.honest_sum", "name"] == "Honest sum (test)"
    assert len(table) == 5 + 1                                                 # one max row for two designs


def test_bonferroni_maximum_over_designs(records, table):
    honest = table[table["algorithm"] == "test.honest_sum"]
    designs, top = honest[~honest["summary"]], honest[honest["summary"]].iloc[0]
    assert top["design"] == "max" and "2 designs" in top["design_title"] and top["confidence"] == 0.95
    recs = [r for r in records if r["algorithm"] == "test.honest_sum"]
    adjusted = [evaluate(r["plain"]["samples_D"], r["plain"]["samples_Dp"], 0.0, 0.975, r["seed"]).epsilon_lower_bound
                for r in recs]
    assert top["lower_bound"] == pytest.approx(max(adjusted))
    assert top["lower_bound"] <= designs["lower_bound"].max() + 1e-12    # each design's bound at a higher confidence


def test_render_table_and_figure(table, tmp_path):
    stem = tmp_path / "audit"
    I.render_audit_table(table, ITEM, str(stem))
    for ext in (".md", ".png", ".pdf", ".html"):
        assert (tmp_path / f"audit{ext}").stat().st_size > 0
    html = (tmp_path / "audit.html").read_text()
    assert "sortable" in html and I.VIOLATION in html and "Honest sum" in html
    md = (tmp_path / "audit.md").read_text()
    assert "unknown (undeclared)" in md and "halved-noise bound" in md
    I.render_audit_figure(table, ITEM, str(tmp_path / "fig"))
    assert (tmp_path / "fig.png").stat().st_size > 0
    I.render_audit_figure(table.iloc[0:0], ITEM, str(tmp_path / "empty"))
    assert (tmp_path / "empty.png").exists()


def test_checks_fail_on_a_violation_with_its_evidence(table):
    checks = {c.claim: c for c in I.check_audit(table, ITEM)}
    bug = next(c for k, c in checks.items() if "buggy_sum" in k)
    assert bug.holds is False and "ε ≥" in bug.detail and "privacy bug" in bug.why
    honest = next(c for k, c in checks.items() if "Honest sum" in k)
    assert honest.holds is True
    undeclared = next(c for k, c in checks.items() if "blurred_sum" in k)
    assert "guarantee undeclared" in undeclared.claim and "no power" in undeclared.detail
    assert undeclared.holds is None and undeclared.result == "not decidable"      # no power is never a pass
    shown = next(c for k, c in checks.items() if "exact_sum" in k)
    assert shown.claim.startswith("The non-DP variants' violations are shown") and shown.holds is True


def test_checks_without_non_dp_variants_say_so(table):
    checks = I.check_audit(table[table["guarantee"] != I.NOT_DP], ITEM)
    last = [c for c in checks if c.claim == "The non-DP variants' violations are shown"]
    assert len(last) == 1 and last[0].holds is None


def test_aggregate_of_no_records_is_an_empty_table():
    empty = I.aggregate_audit([], ITEM)
    assert isinstance(empty, pd.DataFrame) and empty.empty and list(empty.columns) == I.COLUMNS
    assert I.check_audit(empty, ITEM)[0].holds is None


def test_n_from_data_variant_is_its_own_row_outside_the_guarantee_never_a_privacy_bug(records):
    """Records of the `n_from_data` variant (dpclust.pipeline.audit_labels) are grouped apart from the
    algorithm's own audits, named ", N from the data", judged "outside the guarantee" (a leak there
    is the expected finding, not a violation of the declared guarantee) and checked as "reading N
    from the data leaks"."""
    from dpclust.pipeline.audit_labels import N_FROM_DATA_SOURCE

    pure = {"kind": "ε-DP", "note": "", "relation": ADD_REMOVE}
    source = f"declared guarantee: {N_FROM_DATA_SOURCE}"
    leak = _record("buggy_sum", guarantee=pure, relation_source=source)
    quiet = _record("honest_sum", samples=200, guarantee=pure, relation_source=source)
    table = I.aggregate_audit(records + [leak, quiet], ITEM)
    honest = table[table["algorithm"] == "test.honest_sum"]
    assert honest["summary"].sum() == 2                                      # the algorithm's max row and the variant's
    variant = table[table["name"].str.endswith(I.N_FROM_DATA_NAME)].set_index("algorithm")
    assert set(variant.index) == {"test.buggy_sum", "test.honest_sum"} and variant["summary"].all()
    assert variant.loc["test.buggy_sum", "verdict"] == I.OUTSIDE_SHOWN
    assert variant.loc["test.honest_sum", "verdict"] == I.OUTSIDE_NOT_SHOWN
    main = table[(table["algorithm"] == "test.honest_sum") & table["summary"]
                 & ~table["name"].str.endswith(I.N_FROM_DATA_NAME)]
    assert main["design"].tolist() == ["max"] and main["verdict"].tolist() == [I.POWER]   # unchanged by the variant
    shown = I.display_table(table)
    assert shown["guarantee (relation)"].str.contains("N read from each dataset: outside the guarantee").sum() == 2
    checks = I.check_audit(table, ITEM)
    leaks = {c.claim: c for c in checks if c.claim.startswith("Reading N from the data leaks")}
    assert len(leaks) == 2
    by_name = {("buggy" if "buggy_sum" in k else "honest"): c for k, c in leaks.items()}
    assert by_name["buggy"].holds is True and by_name["honest"].holds is False and by_name["honest"].why
    bugs = [c for c in checks if "privacy bug" in c.why]
    assert len(bugs) == 1 and "N from the data" not in bugs[0].claim                # only the real buggy_sum's audit


def test_power_variant_is_its_own_row_within_the_guarantee(records):
    """Records of the `power` variant (the algorithm at settings chosen for the attack's power,
    dpclust.pipeline.audit_labels) are grouped apart from the algorithm's audit at its own settings, named
    ", at <setting> = <value>", and judged as the DP-labelled algorithm they are: power shown where
    the default settings leave none, and a violation there is a privacy bug."""
    from dpclust.pipeline.audit_labels import POWER

    pure = {"kind": "ε-DP", "note": "", "relation": ADD_REMOVE}
    default = _record("tunable_sum", samples=400, guarantee=pure, settings={"blur": 50.0})
    power = _record("tunable_sum", samples=400, guarantee=pure, settings={"blur": 1.0},
                    variant={"name": POWER, "settings": {"blur": 1.0}})
    bug = _record("buggy_sum", samples=400, guarantee=pure, variant={"name": POWER, "settings": {"blur": 1.0}})
    assert power["variant"] == {"name": POWER, "settings": {"blur": 1.0}} and default["variant"] is None
    item = {**ITEM, "names": {"algorithms": {"test.tunable_sum": "Tunable sum", "test.buggy_sum": "Buggy sum"}}}
    table = I.aggregate_audit(records + [default, power, bug], item)
    rows = table[table["algorithm"] == "test.tunable_sum"].set_index("name")
    assert list(rows.index) == ["Tunable sum (test)", "Tunable sum (test), at blur = 1"] and rows["summary"].all()
    assert rows["verdict"].tolist() == [I.NO_POWER, I.POWER]
    buggy = table[table["algorithm"] == "test.buggy_sum"].set_index("name")
    assert buggy.loc["Buggy sum (test), at blur = 1", "verdict"] == I.VIOLATION
    assert buggy.loc["Buggy sum (test)", "verdict"] == I.VIOLATION                 # the records' own row, unchanged
    checks = {c.claim: c for c in I.check_audit(table, item)}
    tunable = {k: c for k, c in checks.items() if "Tunable sum" in k}
    assert [c.holds for c in tunable.values()] == [None, True]
    assert "at blur = 1" in list(tunable)[1]
    bugs = [c for c in checks.values() if "privacy bug" in c.why]
    assert ({c.claim.split(": ", 1)[1].split(" (ε-DP")[0] for c in bugs}
            == {"Buggy sum (test)", "Buggy sum (test), at blur = 1"})
    nested = {"variant": {"name": POWER, "settings": {"inner": {"range_fraction": 0.01, "rounds": 1}, "blur": 1.0}}}
    assert I.power_suffix(nested) == ", at inner.range_fraction = 0.01, inner.rounds = 1, blur = 1"


def test_a_non_dp_violation_not_shown_is_not_decidable_never_a_fail(table):
    """No power decides nothing, for not-DP variants as for DP ones (issue: 3 of the papers'
    "does not hold" were this no-power outcome scored as a fail)."""
    weak = table.copy()
    weak.loc[weak["verdict"] == I.NOT_DP_SHOWN, "verdict"] = I.NOT_DP_NOT_SHOWN
    checks = [c for c in I.check_audit(weak, ITEM) if "exact_sum" in c.claim]
    assert checks and all(c.holds is None and c.result == "not decidable" for c in checks)
    assert all("no power" in c.detail for c in checks)
