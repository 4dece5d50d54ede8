"""Su et al. (2016) items: aggregation, checks that can fail, and one item end to end (test preset)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from dpclust.su2016 import items

OPTS = {"labels": {"su2016.dplloyd": "DPLloyd", "su2016.eugkm": "EUGkM", "su2016.pgkm": "PGkM",
                   "su2016.gkm": "GkM", "su2016.gkm3k": "GkM-3K", "su2016.lloyd": "Baseline"},
        "panels": ["s1", "adult_num"], "low_d": ["s1"], "high_d": ["adult_num"]}


def record(dataset, algorithm, eps, nicvs, group="g"):
    return {"group": group, "dataset": dataset, "algorithm": algorithm, "k": 3, "epsilon": eps, "status": "ok",
            "d": 2, "n": 100,
            "runs": [{"seed": i, "nicv": v, "wall_time_s": 0.01, "cluster_sizes": [60, 40], "info": {}}
                     for i, v in enumerate(nicvs)]}


def table_for(values):
    recs = [record("s1", "su2016.lloyd", None, [0.01, 0.02])]
    for alg, v in values.items():
        recs += [record("s1", alg, 0.1, [v, v]), record("s1", alg, 1.0, [v / 2, v / 2])]
    recs.append({"group": "g", "dataset": "adult_num", "algorithm": "su2016.dplloyd", "k": 5, "epsilon": 0.1,
                 "status": "data_unavailable", "reason": "offline", "runs": []})
    return items.aggregate_nicv(recs, {"options": OPTS})


def test_aggregate_baseline_is_min_over_lloyd_runs_and_unavailable_rows_kept():
    t = table_for({"su2016.dplloyd": 0.05, "su2016.gkm": 0.5})
    ok = t[t["status"] == "ok"]
    assert (ok["baseline"] == 0.01).all()
    assert ok[(ok["method"] == "DPLloyd") & (ok["epsilon"] == 0.1)]["gap"].iloc[0] == pytest.approx(0.04)
    assert (t[t["dataset"] == "adult_num"]["status"] == "data_unavailable").all()
    assert ok[ok["method"] == "Baseline"]["baseline_sizes"].iloc[0] == "60 40"


def claims(values):
    return {c.claim.split(" (")[0]: c.holds for c in items.check_fig1(table_for(values), {"options": OPTS})}


def test_fig1_checks_hold_and_fail_on_the_data():
    good = claims({"su2016.dplloyd": 0.05, "su2016.eugkm": 0.02, "su2016.pgkm": 0.2, "su2016.gkm": 0.9,
                   "su2016.gkm3k": 0.3})
    assert good["GkM is the worst method"] is True
    assert good["EUGkM beats DPLloyd on the low-dimensional datasets at small ε"] is True
    assert good["DPLloyd beats EUGkM on the high-dimensional datasets"] is None      # Adult-num unavailable
    bad = claims({"su2016.dplloyd": 0.05, "su2016.eugkm": 0.5, "su2016.pgkm": 0.01, "su2016.gkm": 0.02,
                  "su2016.gkm3k": 0.3})
    assert bad["GkM is the worst method"] is False
    assert bad["EUGkM beats DPLloyd on the low-dimensional datasets at small ε"] is False
    assert bad["DPLloyd is the best interactive method except possibly S1 at ε < 0.15"] is False


MIRROR = os.environ.get("DPCLUST_DATA_MIRROR", "/work/shared/datasets")


@pytest.mark.slow
@pytest.mark.skipif(not Path(MIRROR, "sipu").exists(), reason="no local dataset mirror")
def test_fig4_end_to_end_test_preset_is_deterministic(tmp_path):
    from dpclust.pipeline import run_item_locally

    repo = Path(__file__).resolve().parents[2] / "config"
    cfg = tmp_path / "cfg"
    (cfg / "papers").mkdir(parents=True)
    top = yaml.safe_load((repo / "config.yaml").read_text())
    top["papers"] = ["su2016"]
    (cfg / "config.yaml").write_text(yaml.safe_dump(top))
    shutil.copy(repo / "datasets.yaml", cfg / "datasets.yaml")
    shutil.copy(repo / "papers" / "su2016.yaml", cfg / "papers" / "su2016.yaml")
    outs = []
    for name in ("a", "b"):
        run_item_locally("su2016", "fig4", tmp_path / name, config_dir=cfg, overrides={"preset": "test"},
                         mirror=MIRROR, log=lambda *_: None)
        recs = sorted((tmp_path / name / "results" / "runs").rglob("*.json"))
        assert recs and (tmp_path / name / "results" / "figures" / "su2016" / "fig4.png").exists()
        loaded = []
        for p in recs:
            r = json.loads(p.read_text())
            for run in r["runs"]:
                run.pop("wall_time_s")
            loaded.append(r)
        outs.append(loaded)
    assert outs[0] == outs[1]
    lloyd = [r for r in outs[0] if r["algorithm"] == "su2016.lloyd"][0]
    assert all(run["epsilon_spent"] == 0 for run in lloyd["runs"])
    assert len(lloyd["runs"][0]["info"]["trace_nicv"]) >= 1
