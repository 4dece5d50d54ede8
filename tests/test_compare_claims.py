"""`python -m dpclust.pipeline compare-claims`: two runs' claim summaries, verdicts per paper and the claims
whose verdict differs (the quick preset beside the full protocol)."""
import pandas as pd

from dpclust.pipeline.cli import main
from dpclust.pipeline.compare_claims import compare_claims


def _summary(path, rows):
    pd.DataFrame(rows, columns=["paper", "item", "claim", "result", "quantity", "ci_low", "ci_high",
                                "threshold", "detail", "why"]).to_csv(path, index=False)
    return path


def _pair(tmp_path):
    quick = _summary(tmp_path / "quick.csv", [
        ["p1", "fig1", "A beats B", "holds", 0.5, 0.4, 0.6, "< 1", "", ""],
        ["p1", "fig1", "gap grows", "not decidable", 0.1, -0.1, 0.3, "> 0", "", ""],
        ["p2", "table1", "N = 10", "holds", 10, None, None, "= 10", "", ""],
        ["p2", "fig2", "only quick", "holds", 1, 0, 2, "", "", ""],
    ])
    full = _summary(tmp_path / "full.csv", [
        ["p1", "fig1", "A beats B", "holds", 0.5, 0.45, 0.55, "< 1", "", ""],
        ["p1", "fig1", "gap grows", "does not hold", -0.2, -0.3, -0.1, "> 0", "", "genuine: noise"],
        ["p2", "table1", "N = 10", "holds", 10, None, None, "= 10", "", ""],
        ["p2", "fig3", "only full", "not evaluable", None, None, None, "", "", "data unavailable"],
    ])
    return quick, full


def test_changes_are_the_claims_whose_verdict_differs_or_that_one_run_lacks(tmp_path):
    totals, changes = compare_claims(*_pair(tmp_path))
    got = {(r.item, r.claim): (r.result_quick, r.result_full) for r in changes.itertuples()}
    assert got == {("fig1", "gap grows"): ("not decidable", "does not hold"),
                   ("fig2", "only quick"): ("holds", "-"),
                   ("fig3", "only full"): ("-", "not evaluable")}
    assert changes.loc[changes["claim"] == "gap grows", "why_full"].item() == "genuine: noise"
    counts = totals.set_index(["paper", "result"])
    assert counts.loc[("p1", "holds"), "quick"] == 1 and counts.loc[("p1", "does not hold"), "quick"] == 0
    assert counts.loc[("p1", "does not hold"), "full"] == 1
    assert counts["quick"].sum() == 4 and counts["full"].sum() == 4


def test_the_totals_count_the_papers_claims_and_the_changes_say_whose(tmp_path):
    """As the summary's tallies: a check of our own (audit, bookkeeping, an alternative reading) is
    never in a paper's counts; one whose verdict differs is listed with its kind."""
    cols = ["kind", "paper", "item", "claim", "result", "quantity", "ci_low", "ci_high", "threshold", "detail", "why"]
    rows_a = [["paper", "p1", "fig1", "A beats B", "holds", 1, 0, 2, "", "", ""],
              ["alternative", "p1", "fig1", "A beats B (90 %)", "holds", 1, 0, 2, "", "", ""],
              ["audit", "audit", "audit", "no violation: X", "not decidable", 0, None, None, "", "", ""]]
    rows_b = [r.copy() for r in rows_a]
    rows_b[2][4] = "holds"
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame(rows_a, columns=cols).to_csv(a, index=False)
    pd.DataFrame(rows_b, columns=cols).to_csv(b, index=False)
    totals, changes = compare_claims(a, b)
    assert totals.to_dict("records") == [{"paper": "p1", "result": "holds", "quick": 1, "full": 1}]
    assert changes[["claim", "kind", "result_quick", "result_full"]].values.tolist() == [
        ["no violation: X", "audit", "not decidable", "holds"]]


def test_a_verdict_without_a_reason_gives_its_rules_not_evaluable_clause_and_both_cell_counts(tmp_path):
    cols = ["paper", "item", "claim", "result", "quantity", "ci_low", "ci_high", "cells", "why", "rule"]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame([["p", "f", "c", "holds", 1, 0, 2, 3, "", "every of 3 cells"]], columns=cols).to_csv(a, index=False)
    rule = "every of 7 cells: Holm; not evaluable (3 of 6 datasets; missing: G (dataset source 'g' (x) unavailable))"
    pd.DataFrame([["p", "f", "c", "not evaluable", 1, 0, 2, 7, "", rule]], columns=cols).to_csv(b, index=False)
    row = compare_claims(a, b)[1].iloc[0]
    assert row["why_full"] == "not evaluable (3 of 6 datasets; missing: G (dataset source 'g' (x) unavailable))"
    assert (row["cells_quick"], row["cells_full"]) == (3, 7)


def test_cli_prints_markdown_and_names_a_missing_summary(tmp_path, capsys):
    quick, full = _pair(tmp_path)
    assert main(["compare-claims", str(quick), str(full)]) == 0
    out = capsys.readouterr().out
    assert ("## Checks whose verdict differs (3: the papers' claims and ours, by kind)" in out
            and "| p1 | fig1 | gap grows | paper | not decidable | does not hold |" in out)
    assert main(["compare-claims", str(quick), str(tmp_path / "nope.csv")]) == 2
    assert "no claim summary at" in capsys.readouterr().err
