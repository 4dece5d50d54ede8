"""Figure 1 / Table 1 functions: the checks report failures as failures, renders write files."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from dpclust.nguyen2021 import items

ITEM = {"title": "Figure 1", "options": {"plateau_ratio": 0.5}}


def _table(ours, balcan, lloyd, ks=(2, 6, 10), dataset="nguyen_synth"):
    rows = []
    for alg, vals in ((items.OURS, ours), (items.BALCAN, balcan), (items.LLOYD, lloyd)):
        for k, v in zip(ks, vals):
            rows.append({"group": "g", "dataset": dataset, "algorithm": alg, "k": k, "epsilon": 1.0,
                         "metric": "cost_kmeans", "mean": v, "std": 0.1 * v, "n": 5, "status": "ok",
                         "reason": "", "budget_error": 0.0})
    return pd.DataFrame(rows)


def _verdicts(table):
    return [c.holds for c in items.check_fig1(table, ITEM)]


def test_checks_hold_when_the_paper_claims_hold():
    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    assert _verdicts(t) == [True, True, True]


def test_checks_fail_when_ours_loses_or_costs_do_not_plateau():
    t = _table(ours=[10, 9.8, 25], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    assert _verdicts(t)[0] is False
    t = _table(ours=[10, 5, 2.5], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    assert _verdicts(t)[1] is False
    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    t.loc[t["algorithm"] == items.OURS, "budget_error"] = 1e-3
    assert _verdicts(t)[2] is False


def test_unavailable_dataset_is_not_evaluable_and_renders_a_panel(tmp_path):
    t = _table(ours=[10, 9.8, 9.7], balcan=[20, 19.5, 19.6], lloyd=[10, 6, 3])
    bad = pd.DataFrame([{"group": "g", "dataset": "mnist60k", "algorithm": a, "k": 2, "epsilon": 1.0,
                         "metric": "cost_kmeans", "mean": np.nan, "std": np.nan, "n": 0,
                         "status": "data_unavailable", "reason": "no mirror", "budget_error": np.nan}
                        for a in items.ORDER])
    t = pd.concat([t, bad], ignore_index=True)
    assert _verdicts(t)[0] is None
    items.render_fig1(t, ITEM, str(tmp_path / "fig1"))
    assert (tmp_path / "fig1.png").stat().st_size > 0 and (tmp_path / "fig1.pdf").exists()


def test_table1_is_rendered_from_the_config(repo, tmp_path):
    cfg = yaml.safe_load((repo / "config/papers/nguyen2021.yaml").read_text())
    item = cfg["items"]["table1"]
    table = items.aggregate_table1([], item)
    assert list(table["Reference"]) == ["Balcan et al. (2017)", "Stemmer and Kaplan (2018)",
                                        "Jones, Nguyen, and Nguyen (2020)", "This work"]
    assert table.iloc[3].tolist() == ["This work", "O(1)", "Õ(k √d)"]
    items.render_table1(table, item, str(tmp_path / "table1"))
    assert "Õ(k² + d)" in (tmp_path / "table1.md").read_text()


def test_config_declares_every_setting_of_the_algorithm(repo):
    from dpclust.nguyen2021.algorithm import DEFAULTS

    cfg = yaml.safe_load((repo / "config/papers/nguyen2021.yaml").read_text())
    settings = cfg["algorithms"]["nguyen2021.ours"]["settings"]
    assert set(settings) == set(DEFAULTS)
    for key, value in DEFAULTS.items():
        if isinstance(value, dict):
            assert settings[key] == pytest.approx(value)
        else:
            assert settings[key] == value
