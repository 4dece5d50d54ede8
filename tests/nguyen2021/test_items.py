"""Figure 1 / Table 1 functions: the checks report failures as failures, thresholds come from
`claims`, names from the names table, renders write files; item step specs hold what they read."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpclust.pipeline import declared
from dpclust.pipeline.itemkit import labelled_name
from dpclust.pipeline.items.nguyen2021 import fig1, table1

NAMES = {"algorithms": {fig1.OURS: "Nguyen et al. (Alg. 1)", fig1.BALCAN: "Balcan et al.",
                        fig1.LLOYD: "Lloyd (10 iterations)"},
         "datasets": {"nguyen_synth": "Synthetic (50k × 100)", "mnist60k": "MNIST (train)"}}
#: the sentences as config/papers/nguyen2021.yaml declares them
DECLARED = declared.texts_from_config(Path(__file__).parents[2] / "config", "nguyen2021", "fig1")
ITEM = {"title": "Figure 1", "claims": {"plateau_ratio": 0.5, "budget_rel_tol": 1e-9, **DECLARED}, "names": NAMES}


KINDS = {fig1.OURS: "(ε, δ)-DP", fig1.BALCAN: "(ε, δ)-DP", fig1.LLOYD: "non-private", fig1.AUTHORS: fig1.NOT_DP}


def _table(ours, balcan, lloyd, ks=(2, 6, 10), dataset="nguyen_synth", sd=0.1, n=5, authors=None):
    rows = []
    runs = ([(fig1.OURS, ours), (fig1.BALCAN, balcan), (fig1.LLOYD, lloyd)]
            + ([(fig1.AUTHORS, authors)] if authors else []))
    for alg, vals in runs:
        for k, v in zip(ks, vals):
            rows.append({"group": "g", "dataset": dataset, "algorithm": alg, "k": k, "epsilon": 1.0,
                         "metric": "cost_kmeans", "mean": v, "std": sd * v, "n": n, "status": "ok",
                         "reason": "", "budget_error": 0.0, "delta_setting": 50_000 ** -1.5,
                         "guarantee": KINDS[alg]})
    return pd.DataFrame(rows)


def _verdicts(table, item=ITEM):
    return [c.holds for c in fig1.checks(table, item)]


def test_checks_hold_when_the_paper_claims_hold():
    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    assert _verdicts(t) == [True, True, True]


def test_checks_fail_when_ours_loses_or_costs_do_not_plateau():
    t = _table(ours=[10, 9.8, 25], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    assert _verdicts(t)[0] is False
    t = _table(ours=[10, 5, 2.5], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    assert _verdicts(t)[1] is False
    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    t.loc[t["algorithm"] == fig1.OURS, "budget_error"] = 1e-3
    assert _verdicts(t)[2] is False


def test_thresholds_come_from_claims():
    """Ours drops 30 %, Lloyd 70 % (1 % sd: tight intervals): a plateau at ratio 0.5 (0.3 < 0.35),
    not at 0.4 (0.3 ≥ 0.28); a budget deviation of 1e-6 fails at tolerance 1e-9 and holds at 1e-5."""
    t = _table(ours=[10, 8, 7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3], sd=0.01)
    assert _verdicts(t)[1] is True
    strict = dict(ITEM, claims={"plateau_ratio": 0.4, "budget_rel_tol": 1e-9, **DECLARED})
    assert _verdicts(t, strict)[1] is False
    assert "< 0.4 ×" in fig1.checks(t, strict)[1].claim
    t.loc[t["algorithm"] == fig1.BALCAN, "budget_error"] = 1e-6
    assert _verdicts(t)[2] is False
    loose = dict(ITEM, claims={"plateau_ratio": 0.5, "budget_rel_tol": 1e-5, **DECLARED})
    assert _verdicts(t, loose)[2] is True
    with pytest.raises(KeyError):
        fig1.checks(t, dict(ITEM, claims=DECLARED))


def test_claim_texts_use_the_names_table():
    t = _table(ours=[10, 9.8, 25], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    first, second, _ = fig1.checks(t, ITEM)
    assert first.claim.startswith("Nguyen et al. (Alg. 1) has a lower mean k-means objective than Balcan et al.")
    assert "Synthetic (50k × 100) k=10" in first.detail
    assert "Synthetic (50k × 100): Lloyd (10 iterations) falls" in second.detail


def test_unavailable_dataset_is_not_evaluable_and_renders_a_panel(tmp_path):
    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    bad = pd.DataFrame([{"group": "g", "dataset": "mnist60k", "algorithm": a, "k": 2, "epsilon": 1.0,
                         "metric": "cost_kmeans", "mean": np.nan, "std": np.nan, "n": 0,
                         "status": "data_unavailable", "reason": "no mirror", "budget_error": np.nan}
                        for a in fig1.ORDER])
    t = pd.concat([t, bad], ignore_index=True)
    checks = fig1.checks(t, ITEM)
    assert checks[0].holds is None and not checks[0].undecided and "not evaluable on MNIST (train)" in checks[0].detail
    assert checks[0].detail.startswith("not evaluable (1 of 2 datasets; missing: MNIST (train) (no runs)); on the 1 "
                                       "available: holds")
    assert checks[1].holds is None and checks[1].detail.startswith("not evaluable (1 of 2 datasets")
    # the rubric (docs/VERDICTS.md): not evaluable while a dataset is missing, even where the available
    # one fails the claim; its verdict and why stay in the detail
    losing = pd.concat([_table(ours=[10, 9.8, 25], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3]), bad],
                       ignore_index=True)
    first = fig1.checks(losing, ITEM)[0]
    assert first.result == "not evaluable" and "on the 1 available: does not hold (genuine:" in first.detail
    fig1.render(t, ITEM, str(tmp_path / "fig1"))
    assert (tmp_path / "fig1.png").stat().st_size > 0 and (tmp_path / "fig1.pdf").exists()


def _plan(repo, preset="full"):
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    return plan(load_config(repo / "config", overrides={"preset": preset, "papers": ["nguyen2021"]}))


def test_table1_is_rendered_from_its_step_specs(repo, tmp_path):
    target = _plan(repo).item("nguyen2021", "table1")
    table = table1.aggregate([], target.step_spec("aggregate"))
    assert list(table.columns) == ["Reference", "Mult. Approx.", "Add. Approx."]
    assert list(table["Reference"]) == ["Balcan et al. (2017)", "Stemmer and Kaplan (2018)",
                                        "Jones, Nguyen, and Nguyen (2020)", "This work"]
    assert table.iloc[3].tolist() == ["This work", "O(1)", "Õ(k √d)"]
    spec = target.step_spec("render")
    table1.render(table, spec, str(tmp_path / "table1"))
    md = (tmp_path / "table1.md").read_text()
    assert "Õ(k² + d)" in md and "δ_p = 1/n^1.5" in md


def test_fig1_step_specs_split_the_options_by_step(repo):
    """Names reach every step; thresholds only the checks; the planned k grid is the paper's."""
    target = _plan(repo).item("nguyen2021", "fig1")
    checks, render, aggregate = (target.step_spec(s) for s in ("checks", "render", "aggregate"))
    assert checks["claims"] == {"plateau_ratio": 0.5, "budget_rel_tol": 1e-9, **DECLARED}
    assert render["names"]["algorithms"].get(fig1.AUTHORS, fig1.AUTHORS)
    assert "claims" not in render and "claims" not in aggregate
    assert checks["module"] == "dpclust.pipeline.items.nguyen2021.fig1"
    names = render["names"]["algorithms"]
    assert {a: names[a] for a in (fig1.OURS, fig1.BALCAN, fig1.LLOYD)} == {
        fig1.OURS: "Nguyen et al. (Alg. 1)", fig1.BALCAN: "Balcan et al.", fig1.LLOYD: "Lloyd (10 iterations)"}
    for group in ("private", "private_mnist", "authors", "lloyd"):
        assert render["runs"][group]["k"] == [2, 6, 10, 14, 18]
    datasets = {g: render["runs"][g]["datasets"] for g in ("private", "private_mnist", "authors", "lloyd")}
    assert datasets == {"private": ["nguyen_synth"], "private_mnist": ["mnist60k"], "authors": ["nguyen_synth"],
                        "lloyd": ["nguyen_synth", "mnist60k"]}
    assert render["runs"]["authors"]["algorithms"] == [fig1.AUTHORS]
    quick = _plan(repo, "quick").item("nguyen2021", "fig1")
    assert quick.step_spec("render")["runs"]["private"]["k"] == [2, 10, 18]


def test_checks_are_decided_by_the_engine_and_the_budget_is_bookkeeping():
    """Both claims are unqualified in the paper ("every"); the budget check is our bookkeeping."""
    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    first, second, spent = fig1.checks(t, ITEM)
    assert first.cells == 3 and "every of 3 cells" in first.rule and "Holm" in first.rule
    assert second.cells == 3 and first.kind == second.kind == "paper"
    assert spent.kind == "bookkeeping" and spent.cells == 1
    # ours at Balcan's cost with a tight interval (inside ±1 % of Balcan's cost): no effect, it does not hold
    t = _table(ours=[10, 10, 10], balcan=[10, 10, 10], lloyd=[10, 6, 3], sd=0.001, n=5)
    first = fig1.checks(t, ITEM)[0]
    assert first.result == "does not hold" and "effect absent" in first.why


def test_overlapping_intervals_are_not_decidable():
    """Ours 1 % below Balcan with 10 % sd over 3 runs: the Welch interval straddles 0."""
    t = _table(ours=[9.9, 9.8, 9.7], balcan=[10, 9.9, 9.8], lloyd=[10, 6, 3], n=3)
    first = fig1.checks(t, ITEM)[0]
    assert first.holds is None and first.undecided
    t = _table(ours=[9.9, 9.8, 9.7], balcan=[10, 9.9, 9.8], lloyd=[10, 6, 3], n=3, sd=0.001)
    assert fig1.checks(t, ITEM)[0].holds is True


def test_not_dp_variant_is_labelled_never_compared_and_its_why_is_evidence(monkeypatch):
    """The authors' variant changes no verdict, is labelled "not DP as published" (legend and why), and
    a claim whose role is not DP is refused."""
    base = _table(ours=[10, 9.8, 25], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    with_authors = _table(ours=[10, 9.8, 25], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3], authors=[1, 1, 1])
    assert _verdicts(with_authors) == _verdicts(base)
    first = fig1.checks(with_authors, ITEM)[0]
    assert first.holds is False and first.why.startswith("genuine:") and fig1.NOT_DP in first.why
    assert labelled_name(ITEM, with_authors, fig1.AUTHORS).endswith(" (not DP as published)")
    figs = []
    monkeypatch.setattr(fig1, "save_figure", lambda fig, stem: figs.append(fig))
    fig1.render(with_authors, ITEM, "unused")
    legend = [t.get_text() for t in figs[0].legends[0].get_texts()]
    assert f"{fig1.AUTHORS} (not DP as published)" in legend and "Balcan et al." in legend
    dashed = [line for line in figs[0].axes[0].get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1
    relabelled = with_authors.copy()
    relabelled.loc[relabelled["algorithm"] == fig1.OURS, "guarantee"] = fig1.NOT_DP
    refused = fig1.checks(relabelled, ITEM)
    assert refused[0].holds is None and refused[0].detail.startswith("refused:")
    assert refused[1].holds is None and refused[1].detail.startswith("refused:")


def test_aggregate_with_every_record_unavailable_keeps_the_rows():
    """Offline, no run reports the diagnostics: the table is the unavailable rows (this raised
    KeyError 'nonempty_clusters')."""
    records = [{"group": "g", "dataset": "mnist60k", "algorithm": a, "k": 2, "epsilon": 1.0, "delta": 1e-6,
                "status": "data_unavailable", "reason": "offline", "runs": []} for a in fig1.ORDER]
    table = fig1.aggregate(records, ITEM)
    assert not table.empty and set(table["status"]) == {"data_unavailable"}


def test_the_plateau_detail_reports_a_cell_an_earlier_look_settled_as_settled():
    """Lloyd's fall, settled as holding at an earlier replication look, is "falls" in the detail too,
    even where this look's runs alone leave its interval straddling 0."""
    from dpclust.pipeline import verdicts

    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 9, 8], sd=0.5)
    plain = fig1.checks(t, ITEM)[1]
    assert "Lloyd (10 iterations) may fall (interval straddles 0)" in plain.detail
    key = declared.run_key("nguyen_synth", {"k": [2, 10]}, fig1.LLOYD, [])
    record = {"state": "holds", "label": "x", "estimate": -0.2, "low": -0.3, "high": -0.1, "p_fail": 1.0,
              "absent": False, "look": 0}
    with verdicts.settled({plain.claim: {key: record}}):
        settled = fig1.checks(t, ITEM)[1]
    assert "Lloyd (10 iterations) falls," in settled.detail and "settled at look 0" in settled.detail
