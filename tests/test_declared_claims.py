"""Declared claims (dpclust.pipeline.declared): typed entries, one clear error each, known answers."""

from __future__ import annotations

import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.pipeline import declared
from dpclust.pipeline.aggregate import Check
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan

NAMES = {"algorithms": {"p.a": "Alpha", "p.b": "Beta", "p.c": "Gamma"}, "datasets": {"x": "X", "y": "Y"}}
BASE = {"claim": "{p.a} beats {p.b} (§1)", "compare": "p.a", "against": "p.b", "side": "<"}


def source(means, available=("x", "y"), missing=None, sd=0.01, n=50):
    """Cells of (dataset, algorithm, ε) → mean, each with sd and n runs."""
    missing = dict(missing or {})
    return declared.Source(
        available=list(available), planned=[*available, *missing], missing=missing, points=[0.1, 1.0],
        stats=lambda ds, alg, e: (means[(ds, alg, e)], sd, n) if (ds, alg, e) in means else None,
        names={"x": "X", "y": "Y", "z": "Z"}, cell_text="cells: relative")


def grid(a, b, c=None):
    out = {}
    for ds in ("x", "y"):
        for e in (0.1, 1.0):
            out[(ds, "p.a", e)], out[(ds, "p.b", e)] = a, b
            if c is not None:
                out[(ds, "p.c", e)] = c
    return out


def run(entries, means, claims=None, hooks=None, **kw):
    item = {"paper": "p", "item": "i", "names": NAMES, "claims": {**(claims or {}), "declared": entries}}
    return declared.decide_all(None, item, source(means, **kw), hooks or {})


@pytest.mark.parametrize("entry, words", [
    ({**BASE, "sides": "<"}, "unknown key(s) ['sides']"),
    ({**BASE, "side": "≤"}, "side must be one of"),
    ({**BASE, "factor": "c"}, "a `relative` comparison takes no `factor`"),
    ({**BASE, "kind": "difference"}, "kind must be one of"),
    ({**BASE, "kind": "ratio", "factor": "c"}, "`factor: c` names no value of the item's claims"),
    ({**BASE, "quantifier": "always"}, "quantifier must be one of"),
    ({k: v for k, v in BASE.items() if k != "against"}, "`against` is required"),
    ({**BASE, "datasets": "low_d"}, "`datasets: low_d` names no value of the item's claims"),
    ({**BASE, "alternative": {"share": "nope", "claim": "x"}}, "alternative needs `share`"),
    ({"python": "h", "claim": "x"}, "a `python` hook takes no other key"),
])
def test_a_bad_declaration_is_one_clear_error_naming_it(entry, words):
    with pytest.raises(DPClustError) as err:
        declared.parse([entry], {}, "p/i")
    assert "p/i: claims.declared[0]" in str(err.value) and words in str(err.value)


def test_a_clear_lead_holds_a_clear_loss_does_not_and_a_tie_is_open():
    assert [c.holds for c in run([BASE], grid(1.0, 2.0))] == [True]
    lost = run([BASE], grid(2.0, 1.0))[0]
    assert lost.holds is False and lost.cells == 4 and lost.claim == "Alpha beats Beta (§1)"
    assert run([BASE], grid(1.0, 1.0 + 1e-4), sd=0.5, n=3)[0].result == "not decidable"


def test_several_comparators_decide_the_closest_and_the_exempt_cells_are_listed():
    entry = {**BASE, "against": ["p.b", "p.c"], "exempt": "ex"}
    claims = {"ex": {"dataset": "x", "below_epsilon": 0.5}}
    means = grid(1.0, 2.0, 1.5)
    means[("x", "p.c", 0.1)] = 0.5            # Alpha loses to Gamma only in the exempt cell
    check = run([entry], means, claims)[0]
    assert check.holds is True and check.cells == 3
    assert "exempt cells: X ε=0.1: Alpha − Beta" in check.detail and "(max over Alpha − Beta" in check.detail
    means[("y", "p.c", 1.0)] = 0.5            # ... and outside it: the claim fails
    assert run([entry], means, claims)[0].holds is False


def test_datasets_and_epsilon_cap_select_the_cells_and_thresholds_reach_the_text():
    entry = {**BASE, "claim": "{p.a} beats {p.b} on {datasets} at ε ≤ {cap:g}", "datasets": "only_x",
             "epsilon_at_most": "cap"}
    means = grid(1.0, 2.0)
    means[("y", "p.a", 0.1)] = means[("x", "p.a", 1.0)] = 3.0   # losses outside the selection
    check = run([entry], means, {"only_x": ["x"], "cap": 0.1})[0]
    assert check.holds is True and check.cells == 1 and check.claim == "Alpha beats Beta on X at ε ≤ 0.1"


def test_the_alternative_reading_appears_only_when_it_differs_and_never_changes_the_verdict():
    alt = {"share": "need", "claim": "{claim}: at least {share:.0%}"}
    means = grid(1.0, 2.0)
    means[("y", "p.a", 1.0)] = 3.0            # fails in 1 of 4 cells
    paper, ours = run([{**BASE, "alternative": alt}], means, {"need": 0.75})
    assert paper.holds is False and ours.holds is True
    assert ours.claim == "alternative reading: Alpha beats Beta (§1): at least 75%"
    assert len(run([{**BASE, "alternative": alt}], means, {"need": 1.0})) == 1   # "every" already: no alternative
    # at 4 cells "at least 90 %" needs all 4, as "every" does: the same reading, no alternative row
    assert len(run([{**BASE, "alternative": alt}], means, {"need": 0.9})) == 1


def test_a_missing_dataset_makes_the_claim_not_evaluable():
    check = run([BASE], grid(1.0, 2.0), missing={"z": "offline"})[0]
    assert check.holds is None and not check.undecided and "2 of 3 datasets" in check.detail


def test_a_hook_decides_in_its_place_and_an_unknown_one_is_refused():
    def hook(table, item):
        return [Check("hooked", True)]
    checks = run([BASE, {"python": "h"}, BASE], grid(1.0, 2.0), hooks={"h": hook})
    assert [c.claim for c in checks] == ["Alpha beats Beta (§1)", "hooked", "Alpha beats Beta (§1)"]
    with pytest.raises(DPClustError, match="names no hook 'g'"):
        run([{"python": "g"}], grid(1.0, 2.0), hooks={"h": hook})


def test_epsilon_above_keeps_the_larger_eps_the_reading_reaches_the_rule_and_a_note_the_labels():
    entry = {**BASE, "epsilon_above": "small", "reading": "reading: {p.a} below {p.b} above ε = {small:g}"}
    means = grid(1.0, 2.0)
    means[("x", "p.a", 0.1)] = means[("y", "p.a", 0.1)] = 3.0   # losses at the small ε only
    item = {"paper": "p", "item": "i", "names": NAMES, "claims": {"small": 0.1, "declared": [entry]}}
    src = source(means)
    src = declared.Source(**{**src.__dict__, "note": lambda ds, alg, e: f"note {alg}"})
    [check] = declared.decide_all(None, item, src, {})
    assert check.holds is True and check.cells == 2
    assert check.rule.endswith("; reading: Alpha below Beta above ε = 0.1")
    assert "X ε=1 (note p.a)" in check.detail


def test_planning_refuses_a_misspelt_declaration_in_the_config(cfg_dir):
    """A declaration is checked when the workflow is planned, before any job: one line naming it."""
    path = cfg_dir / "papers" / "su2016.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["items"]["fig1"]["claims"]["declared"][0]["quantifer"] = "every"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(DPClustError) as err:
        plan(load_config(cfg_dir, overrides={"preset": "test"}))
    assert "su2016/fig1: claims.declared[0]: unknown key(s) ['quantifer']" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_ratio_within_c_holds_below_c_fails_above_and_a_degenerate_cell_never_holds():
    """`kind: ratio` decides mean_a / mean_b against the claims' factor (c is the margin); with `guard`, a
    cell whose method kept fewer than k/2 non-empty clusters never holds but can still fail."""
    entry = {**BASE, "claim": "{p.a} within {c:g}× of {p.b}", "kind": "ratio", "factor": "c", "guard": True}
    means = grid(1.5, 1.0)
    assert [c.holds for c in run([entry], means, {"c": 2.0})] == [True]
    assert [c.holds for c in run([entry], means, {"c": 1.2})] == [False]
    lows = {("x", 0.1): 1.0}
    src = declared.Source(**{**source(means).__dict__,
                             "nonempty_low": lambda ds, alg, e: (lows.get((ds, e), 8.0), 8)})
    item = {"paper": "p", "item": "i", "names": NAMES, "claims": {"c": 2.0, "declared": [entry]}}
    [check] = declared.decide_all(None, item, src, {})
    assert check.holds is None and "degenerate, 1/8 non-empty clusters" in check.detail
    assert "degenerate (fewer than k/2" in check.detail
    src = declared.Source(**{**source(means).__dict__, "nonempty_low": None})
    assert "guard not applied" in declared.decide_all(None, item, src, {})[0].detail


def test_roles_label_templates_refusal_and_explanation_come_from_the_source_and_claims():
    """`compare`/`against` may name a role of the claims; `{role}` in a text is its display name; `label`
    is a template of the cell's label; a source's refusal replaces the verdict; its `explain` turns the
    `why` text and the failing cells into the reason."""
    entry = {**BASE, "claim": "{ours} beats {theirs}", "compare": "ours", "against": "theirs",
             "label": "{cell}: Δ", "why": "lost"}
    claims = {"ours": "p.a", "theirs": "p.b", "why": {"lost": "{ours} is not below {theirs}"}}
    means = grid(1.0, 2.0)
    means[("y", "p.a", 1.0)] = 3.0
    item = {"paper": "p", "item": "i", "names": NAMES, "claims": {**claims, "declared": [entry]}}
    src = declared.Source(**{**source(means).__dict__,
                             "explain": lambda failing, text: f"{text} at {[tuple(f) for f in failing]}"})
    [check] = declared.decide_all(None, item, src, {})
    assert check.claim == "Alpha beats Beta" and "X ε=0.1: Δ" in check.detail
    assert check.holds is False and check.why == "Alpha is not below Beta at [('y', 1.0, 'p.a', 'p.b')]"
    refused = Check("Alpha beats Beta", None, "refused")
    src = declared.Source(**{**source(means).__dict__, "refuse": lambda a, b, claim: refused})
    assert declared.decide_all(None, item, src, {}) == [refused]


def test_the_cell_axis_is_the_sources_points():
    """A source over k (not ε) labels and decides its cells by its own points."""
    means = {(ds, alg, k): m for ds in ("x", "y") for k in (2, 8) for alg, m in (("p.a", 1.0), ("p.b", 2.0))}
    src = declared.Source(**{**source(means).__dict__, "points": [2, 8],
                             "cell_label": lambda ds, k: f"{ds} k={k}"})
    item = {"paper": "p", "item": "i", "names": NAMES, "claims": {"declared": [BASE]}}
    [check] = declared.decide_all(None, item, src, {})
    assert check.holds is True and check.cells == 4 and "y k=8" in check.detail


def test_each_compared_method_and_each_comparator_get_their_own_cells_in_pair_order():
    """A `compare` list decides each method against the comparators; `each` keeps a cell per comparator
    (pair by pair, then the points), where without it a cell is their extreme; a ratio without a
    factor is decided against 1."""
    means = grid(1.0, 2.0, 4.0)
    entry = {**BASE, "compare": ["p.a", "p.b"], "against": "p.c", "kind": "ratio",
             "label": "{dataset} {compare}/{against} {cell}"}
    [check] = run([entry], means)
    assert check.holds is True and check.cells == 8
    assert check.detail.index("X Alpha/Gamma X ε=0.1") < check.detail.index("X Beta/Gamma X ε=0.1")
    pairs = {**BASE, "against": ["p.b", "p.c"], "each": True, "kind": "ratio", "label": "{against} {cell}"}
    [check] = run([pairs], means)
    assert check.cells == 8 and check.detail.index("Beta X ε=1") < check.detail.index("Gamma X ε=0.1")
    assert run([{**BASE, "against": ["p.b", "p.c"]}], means)[0].cells == 4


def test_a_claim_over_one_named_dataset_with_none_available_is_not_evaluable_saying_why():
    entry = {**BASE, "datasets": "only"}
    [check] = run([entry], grid(1.0, 2.0), {"only": "z"}, missing={"z": "offline"})
    assert check.holds is None and check.detail == "not evaluable (0 of 1 datasets; missing: Z (offline))"


def test_a_declaration_as_our_alternative_reading_is_labelled_and_counts_its_failing_cells():
    """`as_alternative`: the claim reads "alternative reading: …" and is of kind alternative (never in the
    papers' tallies); a `why` template gets how many cells the engine failed and decided."""
    means = grid(1.0, 2.0)
    means[("y", "p.a", 1.0)] = 3.0                      # one cell of four fails
    entry = {**BASE, "as_alternative": True, "why": "w"}
    [paper] = run([{**BASE, "why": "w"}], means, claims={"why": {"w": "lost {n_failing} of {n_decided}"}})
    [ours] = run([entry], means, claims={"why": {"w": "lost {n_failing} of {n_decided}"}})
    assert paper.kind == "paper" and paper.claim == "Alpha beats Beta (§1)"
    assert ours.kind == "alternative" and ours.claim == "alternative reading: Alpha beats Beta (§1)"
    assert ours.holds is paper.holds is False and ours.why.startswith("lost 1 of 4")
