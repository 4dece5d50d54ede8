"""The generated results page: the papers' claims tallied per paper, our own checks apart."""
from __future__ import annotations

import pandas as pd

from dpclust.pipeline.results_page import write_results_page


def test_the_page_tallies_the_papers_claims_and_keeps_ours_apart(tmp_path):
    summary = tmp_path / "summary.csv"
    pd.DataFrame([
        {"paper": "su2016", "item": "fig1", "claim": "A beats B", "result": "holds", "quantity": 0.8,
         "ci_low": 0.7, "ci_high": 0.9, "kind": "paper", "cells": 4, "rule": "every of 4 cells", "why": ""},
        {"paper": "su2016", "item": "fig2", "claim": "C grows", "result": "does not hold", "quantity": 1.0,
         "ci_low": 0.99, "ci_high": 1.01, "kind": "paper", "cells": 2, "rule": "every of 2 cells",
         "why": "effect absent: flat"},
        {"paper": "su2016", "item": "fig2", "claim": "Every private run spent exactly its ε", "result": "holds",
         "kind": "bookkeeping"},
        {"paper": "audit", "item": "audit", "claim": "No violation: X", "result": "not decidable", "kind": "audit"},
    ]).to_csv(summary, index=False)
    audit = tmp_path / "audit.csv"
    pd.DataFrame([{"name": "X", "guarantee": "ε-DP", "design": "corner", "epsilon_claimed": 1.0,
                   "lower_bound": 0.2, "halved_lower_bound": 0.9, "verdict": "no power", "summary": True}]
                 ).to_csv(audit, index=False)
    out = tmp_path / "RESULTS.md"
    text = write_results_page(str(summary), str(out), "quick", audit_csv=str(audit))
    assert out.read_text() == text and text.startswith("# Results of the quick preset")
    papers = text.split("## The papers' claims")[1].split("## The privacy audit")[0]
    assert "| su2016 | 2 | 1 | 1 | 0 | 0 |" in papers            # two claims of the paper, not four
    assert "effect absent: flat" in papers and "spent exactly" not in papers
    ours = text.split("## Our own checks")[1]
    assert "bookkeeping" in ours and "audit" in ours and "No violation: X" in ours
    assert "## The privacy audit" in text and "no power" in text
    assert "was limited to" not in text                          # the whole protocol: no scope line
    limited = write_results_page(str(summary), str(out), "full", scope=["su2016/fig1", "su2016/fig5"])
    assert "This run was limited to su2016/fig1, su2016/fig5 (config `papers`, `items`)" in limited


def test_a_runs_scope_is_its_items_or_its_papers_when_not_every_paper():
    from dpclust.pipeline.configuration import run_scope

    every = ["baselines", "su2016", "balcan2017", "nguyen2021", "cohenaddad2022", "lushen2020", "leaderboard",
             "audit"]
    assert run_scope({"papers": every}) == []
    assert run_scope({"papers": ["su2016", "baselines"]}) == ["su2016", "baselines"]
    assert run_scope({"papers": ["su2016"], "items": ["su2016/fig3"]}) == ["su2016/fig3"]


def test_the_page_lists_the_claims_decided_in_replication_looks_and_their_cpu(tmp_path):
    summary = tmp_path / "summary.csv"
    pd.DataFrame([
        {"paper": "su2016", "item": "fig3", "claim": "A beats B", "result": "holds", "kind": "paper",
         "runs": "4× (look 2, α = 0.00833)", "stopped": "decided at look 2", "added_cpu_s": 720.0},
        {"paper": "su2016", "item": "fig3", "claim": "C grows", "result": "not decidable", "kind": "paper",
         "runs": "10× (look 3, α = 0.00833)", "stopped": "cap: 10× the paper's runs reached; would need ≈ 40×",
         "added_cpu_s": 720.0},
        {"paper": "su2016", "item": "fig1", "claim": "D", "result": "holds", "kind": "paper", "runs": "1×",
         "stopped": "no replication declared"},
    ]).assign(cells=1, rule="every of 1 cell", quantity=0.5, ci_low=0.4, ci_high=0.6).to_csv(summary, index=False)
    text = write_results_page(str(summary), str(tmp_path / "RESULTS.md"), "quick")
    part = text.split("## Claims decided in replication looks")[1]
    assert "2 claims of 1 items" in part and "0.2 CPU-h" in part      # the item's 720 s counted once
    assert "decided at look 2" in part and "would need ≈ 40×" in part and "| D |" not in part


def test_the_page_says_what_an_undecided_claim_without_replication_would_need(tmp_path):
    summary = tmp_path / "summary.csv"
    pd.DataFrame([{"paper": "su2016", "item": "fig5", "claim": "G", "result": "not decidable", "kind": "paper",
                   "runs": "1×", "stopped": "no replication declared; would need ≈ 9× the paper's runs"}]
                 ).assign(cells=1, rule="r").to_csv(summary, index=False)
    text = write_results_page(str(summary), str(tmp_path / "RESULTS.md"), "quick")
    assert "## Claims left undecided" in text and "| fig5 | G | would need ≈ 9× the paper's runs |" in text


def test_the_page_groups_failing_claims_by_the_cause_their_reasons_name(tmp_path):
    summary = tmp_path / "summary.csv"
    shared = "cause: authors' calibration not DP (the audit shows it): collapse at ε = 0.1"
    pd.DataFrame([
        {"paper": "balcan2017", "item": "fig2", "claim": "ours beats SuLQ", "result": "does not hold",
         "kind": "paper", "why": shared, "cause": "authors' calibration not DP"},
        {"paper": "balcan2017", "item": "fig2d", "claim": "ours is competitive", "result": "does not hold",
         "kind": "paper", "why": shared, "cause": "authors' calibration not DP"},
        {"paper": "su2016", "item": "fig2", "claim": "C grows less", "result": "does not hold", "kind": "paper",
         "why": "genuine: it grows more", "cause": ""},
        {"paper": "su2016", "item": "fig1", "claim": "A beats B", "result": "holds", "kind": "paper"},
    ]).assign(cells=2, rule="every of 2 cells").to_csv(summary, index=False)
    text = write_results_page(str(summary), str(tmp_path / "RESULTS.md"), "quick")
    section = text.split("## Why claims do not hold")[1]
    assert "3 of the papers' claims do not hold, for 2 root causes" in section
    assert "| authors' calibration not DP | 2 | balcan2017/fig2, balcan2017/fig2d |" in section
    assert "| its own (see its reason): C grows less | 1 | su2016/fig2 |" in section and "A beats B" not in section


def test_one_root_cause_is_named_in_the_singular(tmp_path):
    summary = tmp_path / "summary.csv"
    pd.DataFrame([{"paper": "su2016", "item": "fig2", "claim": "C grows less", "result": "does not hold",
                   "kind": "paper", "why": "genuine: it grows more", "cause": ""}]
                 ).assign(cells=2, rule="every of 2 cells").to_csv(summary, index=False)
    text = write_results_page(str(summary), str(tmp_path / "RESULTS.md"), "quick")
    assert "1 of the papers' claims does not hold, for 1 root cause (a reason" in text


def test_a_reason_names_its_cause_by_a_leading_tag():
    from dpclust.pipeline.aggregate import cause_of

    assert cause_of("cause: authors' calibration not DP (the audit's d = 100 design)") == \
        "authors' calibration not DP"
    assert cause_of("cause: the paper's baseline optimum is lost: depends on a lost parameter") == \
        "the paper's baseline optimum is lost"
    assert cause_of("genuine: the cause: is elsewhere") == "" and cause_of("") == "" and cause_of(None) == ""


def test_the_summary_takes_the_cause_from_the_reason_it_finally_shows(tmp_path):
    """`cause` is read after the replication's adjustment, which may replace a claim's reason."""
    from dpclust.pipeline.steps import summarize_checks

    checks = tmp_path / "checks" / "su2016" / "fig5.csv"
    checks.parent.mkdir(parents=True)
    pd.DataFrame([{"claim": "sizes", "result": "does not hold", "kind": "paper", "why": "genuine: differs"},
                  {"claim": "other", "result": "holds", "kind": "paper", "why": ""}]).to_csv(checks, index=False)

    def adjust(table):
        table.loc[table["claim"] == "sizes", "why"] = "cause: lost optimum: at look 1"
        return table

    table = summarize_checks([checks], tmp_path / "summary", adjust=adjust)
    assert list(table.columns).index("cause") == list(table.columns).index("why") + 1
    assert table["cause"].tolist() == ["lost optimum", ""]
    assert pd.read_csv(tmp_path / "summary.csv")["cause"].fillna("").tolist() == ["lost optimum", ""]
