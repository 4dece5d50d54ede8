"""The leaderboard's three items end to end on the test preset, as a user runs them:
`python -m dpclust.pipeline item leaderboard <item> --preset test` (data from the mirror, real runs),
by default (DP methods only) and with the opt-in that adds the methods not DP as published."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpclust.pipeline.items.leaderboard.common import DP_KINDS

pytestmark = pytest.mark.slow
ALG1 = {"lushen2020.prior", "lushen2020.posterior"}
OPTED = ALG1 | {"balcan2017.balcan_authors"}   # the test preset's opt-in groups (config/papers/leaderboard.yaml)


@pytest.fixture(scope="module", params=["default", "opt-in"])
def work(request, tmp_path_factory, mirror):
    work = tmp_path_factory.mktemp(f"leaderboard-{request.param}-")
    config = ["--opt-in", "not_dp"] if request.param == "opt-in" else []
    for item in ("table", "figure", "best"):
        out = subprocess.run([sys.executable, "-m", "dpclust.pipeline", "item", "leaderboard", item, "--preset", "test",
                              "--workdir", str(work), "--mirror", str(mirror), *config], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-3000:]
    return work / "results"


def opted_in(work) -> bool:
    return "leaderboard-opt-in-" in str(work)


def test_every_item_writes_its_files(work):
    for item in ("table", "figure", "best"):
        assert (work / "tables" / "leaderboard" / f"{item}.csv").exists()
        for ext in (".png", ".pdf", ".md"):
            assert (work / "figures" / "leaderboard" / f"{item}{ext}").stat().st_size > 0
    for item in ("table", "best"):
        assert "<table class='sortable'>" in (work / "figures" / "leaderboard" / f"{item}.html").read_text()
    note = (work / "figures" / "leaderboard" / "table.md").read_text().strip().splitlines()[-1]   # under the table
    assert "Not run by default" in note and "BLUM" in note            # (the test preset lists its kmeans algorithms)
    assert ("Posterior" in note) != opted_in(work)                    # the opt-in ran Algorithm 1: not in the note
    checks = pd.read_csv(work / "checks" / "leaderboard" / "table.csv")
    assert list(checks["claim"]) == ["Every DP run spent at most its ε (and its δ)"]


def test_the_table_holds_every_planned_cell_normalised_and_ranked_by_guarantee(work):
    t = pd.read_csv(work / "tables" / "leaderboard" / "table.csv")
    assert set(t["algorithm"]) == {"su2016.dplloyd", "cohenaddad2022.hst_kmeans", "cohenaddad2022.hst",
                                   "baselines.kmeanspp", "baselines.kmedianpp"} | (OPTED if opted_in(work) else set())
    assert (t["status"] == "ok").all() and (t["n"] == 2).all()
    assert (t["mean"] > 0).all() and (t["ci_low"] <= t["mean"]).all() and (t["mean"] <= t["ci_high"]).all()
    refs = t[t["epsilon"].isna()]
    assert set(refs["guarantee"]) == {"non-private"} and refs["rank"].isna().all()
    assert np.isclose(t.groupby(["objective", "dataset", "k"])["best_nonprivate"].nunique(), 1).all()
    ranked = t["rank"].notna()
    assert (ranked == t["guarantee"].isin(DP_KINDS)).all()            # ranked exactly when DP is declared
    for alg in ALG1 & set(t["algorithm"]):   # the opt-in's: labelled, δ = 0, no ε reported, never ranked
        row = t[t["algorithm"] == alg].iloc[0]
        assert row["guarantee"] == "not DP as published" and row["delta"] == 0.0 and np.isnan(row["rank"])
        assert np.isnan(row["eps_spent_max"]) and np.isnan(row["eps_spent_mean"])
    dp = t[t["guarantee"].isin(DP_KINDS)]
    assert (dp["eps_spent_max"] > 0).all() and t.loc[~t["guarantee"].isin(DP_KINDS), "eps_spent_max"].isna().all()
    assert (t.loc[t["algorithm"] == "cohenaddad2022.hst", "objective"] == "kmedian").all()
