"""Items: the claim checks can fail (and hold) on hand-made tables; the test preset renders end to end."""
import numpy as np
import pandas as pd
import pytest

from dpclust.balcan2017.items import common, fig2, fig2d, supp3d, table1
from dpclust.workflow import load_config, plan

CLAIMS = {"ours": "o", "sulq": "s", "sa": "a", "nonprivate": "b", "orders_of_magnitude": 10.0,
          "competitive_ratio": 2.0, "spent_rel_tol": 1e-9}
FIG2 = {"options": {"datasets": ["lo", "hi"]}, "claims": CLAIMS,
        "names": {"algorithms": {"o": "Ours-name", "s": "SuLQ-name"}, "datasets": {"hi": "High"}}}


def _table(costs: dict, dims: dict) -> pd.DataFrame:
    rows = []
    for (ds, alg, k), m in costs.items():
        rows.append({"dataset": ds, "d": dims[ds], "algorithm": alg, "k": k, "epsilon": None if alg == "b" else 1.0,
                     "status": "ok", "reason": "", "mean": m, "std": 0.0, "n": 5,
                     "eps_spent_max": None if alg == "b" else 1.0, "eps_spent_min": None if alg == "b" else 1.0})
    return pd.DataFrame(rows, columns=common.COLUMNS)


def _fig2_costs(sulq_factor_hi):
    c = {}
    for ds, f in (("lo", 2.0), ("hi", sulq_factor_hi)):
        for k in (2, 4):
            c[(ds, "b", k)] = 10.0 / k
            c[(ds, "o", k)] = 12.0 / k
            c[(ds, "s", k)] = f * 12.0 / k
            c[(ds, "a", k)] = 1000.0
    return c


def test_fig2_checks_hold_and_fail():
    good = fig2.check_fig2(_table(_fig2_costs(5.0), {"lo": 3, "hi": 100}), FIG2)
    assert [c.holds for c in good] == [True, True, True, True, True]
    bad = fig2.check_fig2(_table(_fig2_costs(0.5), {"lo": 3, "hi": 100}), FIG2)
    assert bad[0].holds is False and bad[1].holds is False      # SuLQ wins on "hi"; gap shrinks with d
    assert bad[0].claim.startswith("Ours-name has a lower mean k-means objective than SuLQ-name")  # names table
    assert "High k=2" in bad[0].detail


def test_fig2_thresholds_come_from_claims():
    table = _table(_fig2_costs(5.0), {"lo": 3, "hi": 100})     # S&A/ours = 1000/(12/k) ∈ [166, 333]
    strict = {**FIG2, "claims": {**CLAIMS, "orders_of_magnitude": 500.0, "competitive_ratio": 1.1}}
    res = fig2.check_fig2(table, strict)
    assert res[2].holds is False and "≥ 500×" in res[2].claim     # ours/k-means++ = 1.2 > 1.1
    assert res[3].holds is False and "≤ 1.1×" in res[3].claim


def test_fig2_checks_not_evaluable_when_unavailable():
    t = pd.DataFrame([{"dataset": "lo", "d": None, "algorithm": "o", "k": 2, "epsilon": 1.0, "status": "data_unavailable",
                       "reason": "no file", "mean": np.nan, "std": np.nan, "n": 0}], columns=common.COLUMNS)
    assert all(c.holds is None for c in fig2.check_fig2(t, FIG2))


def test_fig2_aggregate_keeps_the_configured_datasets():
    records = [{"dataset": ds, "algorithm": "o", "k": 2, "epsilon": 1.0, "d": 3, "status": "ok",
                "runs": [{"seed": 0, "cost_kmeans": 1.0, "epsilon_spent": 1.0}]} for ds in ("lo", "hi", "other")]
    table = fig2.aggregate_fig2(records, {"options": {"datasets": ["hi", "lo"]}})
    assert sorted(table["dataset"]) == ["hi", "lo"]


def test_spent_check_catches_underspend():
    t = _table({("lo", "o", 2): 1.0}, {"lo": 3})
    t.loc[0, "eps_spent_min"] = 0.5
    assert common.spent_check(t, ["o"], 1e-9).holds is False
    t.loc[0, "eps_spent_min"] = 1.0 - 1e-6
    assert common.spent_check(t, ["o"], 1e-9).holds is False
    assert common.spent_check(t, ["o"], 1e-5).holds is True      # the tolerance is the claims' spent_rel_tol


def test_fig2d_checks():
    claims = {"ours": "o", "sulq": "s", "nonprivate": "b", "competitive_ratio": 2.0, "spent_rel_tol": 1e-9}
    t = _table({("x", "b", 10): 10.0}, {"x": 3})
    extra = []
    for eps, o, s in ((0.1, 15.0, 40.0), (1.0, 11.0, 12.0)):
        for alg, m in (("o", o), ("s", s)):
            extra.append({"dataset": "x", "d": 3, "algorithm": alg, "k": 10, "epsilon": eps, "status": "ok",
                          "reason": "", "mean": m, "std": 0.0, "n": 1, "eps_spent_max": eps, "eps_spent_min": eps})
    t = pd.concat([t, pd.DataFrame(extra, columns=common.COLUMNS)], ignore_index=True)
    res = fig2d.check_fig2d(t, {"claims": claims, "names": {}})
    assert [c.holds for c in res] == [True, True, True, True]
    res = fig2d.check_fig2d(t, {"claims": {**claims, "competitive_ratio": 1.2}, "names": {}})
    assert res[1].holds is False                                  # ours/k-means++ = 1.5 at ε = 0.1


def test_supp3d_checks():
    claims = {"griding": "g", "kvariates": "kv", "comparable": ["a", "s", "o"], "comparable_factor": 3.0,
              "order_of_magnitude": 10.0, "spent_rel_tol": 1e-9}
    t = _table({("x", "g", 3): 1.0, ("x", "a", 3): 2.0, ("x", "s", 3): 2.5, ("x", "o", 3): 3.0, ("x", "kv", 3): 30.0},
               {"x": 3})
    assert [c.holds for c in supp3d.check_supp3d(t, {"claims": claims})] == [True, True, True, True]
    t.loc[t["algorithm"] == "kv", "mean"] = 4.0
    t.loc[t["algorithm"] == "o", "mean"] = 0.5
    res = supp3d.check_supp3d(t, {"claims": claims})
    assert res[0].holds is False and res[1].holds is False and res[2].holds is False


def test_supp3d_table_keeps_the_papers_labels(tmp_path):
    t = _table({("x", "o", 3): 3.0, ("x", "zz", 3): 4.0}, {"x": 3})
    item = {"title": "T", "figure": {"labels": {"o": "Ours"}},
            "names": {"algorithms": {"o": "Balcan et al."}}}
    supp3d.render_supp3d(t, item, str(tmp_path / "s"))
    md = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert "| Ours |" in md and "| zz |" in md and "Balcan et al." not in md


def test_table1_is_static_from_config():
    cfg = load_config(overrides={"papers": ["baselines", "su2016", "balcan2017"]})
    item = cfg["paper_configs"]["balcan2017"]["items"]["table1"]
    t = table1.aggregate_table1([], item)
    assert list(t.columns)[0] == "Reference" and len(t) == 6 and t.iloc[-1, 0] == "Ours"


def test_full_protocol_job_budget():
    cfg = load_config(overrides={"papers": ["baselines", "su2016", "balcan2017"]})
    jobs = {j.path for j in plan(cfg).runs if j.paper == "balcan2017"}
    assert len(jobs) <= 500


@pytest.mark.slow
def test_test_preset_renders_fig1_and_supp3d(tmp_path, mirror):
    from dpclust.pipeline import run_item_locally

    for name in ("fig1", "supp3d"):
        target = run_item_locally("balcan2017", name, tmp_path, mirror=str(mirror), log=lambda *a: None,
                                  overrides={"preset": "test", "papers": ["baselines", "su2016", "balcan2017"]})
        for path in target.outputs:
            if target.kind == "figure" and path.endswith(".md"):
                continue          # the Snakemake render script writes a figure's .md caption page
            assert __import__("os").path.exists(path), path
    checks = pd.read_csv(tmp_path / "results" / "checks" / "balcan2017" / "supp3d.csv")
    assert "every private run spent exactly its ε (run records)" in set(checks["claim"])
    assert checks.set_index("claim").loc["every private run spent exactly its ε (run records)", "result"] == "holds"


def _plan_table(target) -> pd.DataFrame:
    """A summary table with one ok row per planned cell of `target` (costs rising with ε⁻¹ and k)."""
    rows = []
    for j in target.runs:
        eps = j.epsilon
        rows.append({"dataset": j.dataset, "d": 3, "algorithm": j.algorithm, "k": j.k, "epsilon": eps,
                     "status": "ok", "reason": "", "mean": 10.0 * j.k / (eps or 1.0), "std": 1.0, "n": 2,
                     "eps_spent_max": eps, "eps_spent_min": eps})
    return pd.DataFrame(rows, columns=common.COLUMNS).drop_duplicates(["dataset", "algorithm", "k", "epsilon"])


@pytest.mark.parametrize("item", ["fig2", "fig2a", "fig2c", "fig2_table", "fig2d", "supp3d"])
def test_each_step_needs_only_its_own_spec(item, tmp_path):
    """Render and checks run on exactly the step specs the workflow hands them (a render spec has no
    `claims`, a checks spec no `figure`), and the display names come from the names table."""
    from dpclust.pipeline import step_function

    cfg = load_config(overrides={"preset": "quick"})
    target = plan(cfg).item("balcan2017", item)
    table = _plan_table(target)
    agg = target.step_spec("aggregate")
    assert "claims" not in agg and "figure" not in agg
    render = target.step_spec("render")
    assert "claims" not in render and "table" not in render
    step_function(render, "render")(table, render, str(tmp_path / item))
    assert (tmp_path / f"{item}.png").exists()
    if target.has_checks:
        spec = target.step_spec("checks")
        assert "figure" not in spec and "table" not in spec
        checks = step_function(spec, "checks")(table, spec)
        assert checks and all(c.holds is not None for c in checks)
        assert any("Balcan et al." in c.claim for c in checks)          # config/names.yaml
