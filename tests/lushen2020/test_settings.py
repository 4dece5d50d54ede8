"""Declared settings are the one home of every default; the config holds only overrides; the items
read their thresholds from `claims:`, their names from config/names.yaml and nothing else."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.lushen2020 import baselines
from dpclust.lushen2020.algorithm import SETTINGS, lushen, posterior, prior
from dpclust.pipeline.aggregate import Context
from dpclust.pipeline.configuration import load_config, resolve_algorithm
from dpclust.pipeline.declared import texts_from_config
from dpclust.pipeline.items.lushen2020 import common, fig7, fig8, iterations, table2
from dpclust.pipeline.planning import plan
from dpclust.pipeline.resolve import import_object
from dpclust.settings import Interval, Setting, Settings, declared, settings_of

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[1] / "config" / "papers" / "lushen2020.yaml"

#: Settings that the entries of d0337d3 carried although their function never read them (the
#: five baselines shared one YAML anchor): each wrapper now declares only what it reads. The
#: reference run's `strategy` was always overridden by `budget_reference`, so `reference` no
#: longer holds it.
UNUSED_BEFORE = {
    "dplloyd_baseline": {"gupt_budget", "gupt", "privgene", "reference.strategy"},
    "gupt_baseline": {"max_iterations", "dplloyd", "privgene", "reference.strategy"},
    "privgene_baseline": {"max_iterations", "gupt_budget", "dplloyd", "gupt", "reference.strategy"},
}


@pytest.fixture(scope="module")
def config():
    return load_config()


@pytest.fixture(scope="module")
def before():
    """Every algorithm's settings as config/papers/lushen2020.yaml listed them at d0337d3."""
    return yaml.safe_load((HERE / "settings_d0337d3.yaml").read_text())["algorithms"]


def _flat(settings: dict) -> dict:
    """{'reference.atom_steps': 100, ...}: nested mappings flattened one level (reference only)."""
    out = {}
    for key, value in settings.items():
        if key == "reference":
            out.update({f"reference.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


#: What changed since d0337d3, on purpose (issue 12 / 15): Algorithm 1 draws its starts per (seed, ε)
#: (`init_per_epsilon`, also in the baselines' reference settings); the baselines get "the larger" of the
#: two strategies' totals as the config always said (it was the Prior's alone), and may take a public
#: total (`public_iterations`, the DP variants). LLOYD's runs are gone: Lloyd's cost is each Algorithm 1
#: run's diagnostic from the run's own starts.
ADDED = {"init_per_epsilon", "reference.init_per_epsilon", "public_iterations"}
CHANGED = {"budget_reference": ("prior", "larger")}
REMOVED_ALGORITHMS = {"lushen2020.lloyd"}
DP_VARIANTS = {"lushen2020.blum_dp", "lushen2020.dwork_dp", "lushen2020.su_dp", "lushen2020.privgene_dp"}


def test_resolved_settings_equal_those_of_d0337d3_but_for_the_documented_changes(config, before):
    """Every algorithm of d0337d3 still configured resolves (declared defaults + its overrides) to the
    settings it had, minus the settings its function never read, plus ADDED, with CHANGED values."""
    configured = {n for n in config["algorithms"] if n.startswith("lushen2020.")}
    assert configured == (set(before) - REMOVED_ALGORITHMS) | DP_VARIANTS
    for name, entry in before.items():
        if name in REMOVED_ALGORITHMS:
            continue
        resolved = resolve_algorithm(config, name)
        assert resolved["function"] == entry["function"] and resolved["private"] == entry["private"]
        old, new = _flat(entry["settings"]), _flat(resolved["settings"])
        dropped = UNUSED_BEFORE.get(entry["function"].rpartition(":")[2], set())
        assert set(old) - set(new) == dropped, name
        assert set(new) - set(old) <= ADDED, name
        for key in set(new) & set(old):
            expected = CHANGED[key][1] if key in CHANGED and old[key] == CHANGED[key][0] else old[key]
            assert new[key] == expected and type(new[key]) is type(expected), (name, key)


def test_the_config_holds_only_overrides_of_the_declared_defaults():
    entries = yaml.safe_load(CONFIG.read_text())["algorithms"]
    for name, entry in entries.items():
        declared_settings = settings_of(import_object(entry["function"]))
        assert declared_settings is not None, f"{name}: {entry['function']} declares no settings"
        defaults = declared_settings.defaults()
        for key, value in (entry.get("settings") or {}).items():
            assert key in defaults, (name, key)
            assert value != defaults[key], f"{name}: {key} = {value!r} repeats the declared default"


def test_strategy_wrappers_and_the_baselines_reuse_algorithm_1s_declaration():
    assert set(posterior.settings) == set(prior.settings) == set(SETTINGS) - {"strategy"}
    assert baselines.dplloyd_baseline.settings["reference"].default == prior.settings.defaults()
    for function in (baselines.dplloyd_baseline, baselines.gupt_baseline, baselines.privgene_baseline):
        assert function.settings["reference"].default == lushen.settings.without("strategy").defaults()


@pytest.mark.parametrize("function, given, message", [
    (lushen, {"atom_step": 100}, r"unknown setting\(s\) \['atom_step'\]"),
    (lushen, {"strategy": "future"}, r"setting 'strategy' must be one of"),
    (lushen, {"rejection_batch": 0}, r"setting 'rejection_batch' must be >= 1"),
    (lushen, {"min_noisy_count": 0.0}, r"setting 'min_noisy_count' must be > 0"),
    (posterior, {"strategy": "prior"}, r"unknown setting\(s\) \['strategy'\]"),
    (baselines.dplloyd_baseline, {"gupt": {}}, r"unknown setting\(s\) \['gupt'\]"),
    (baselines.dplloyd_baseline, {"dplloyd": {"alocation": "uniform"}}, r"setting 'dplloyd' unknown .*'alocation'"),
    (baselines.dplloyd_baseline, {"reference": {"strategy": "prior"}}, r"setting 'reference' unknown key"),
    (baselines.dplloyd_baseline, {"budget_reference": "both"}, r"setting 'budget_reference' must be one of"),
    (baselines.gupt_baseline, {"gupt_budget": "all"}, r"setting 'gupt_budget' must be one of"),
    (baselines.gupt_baseline, {"gupt": {"blocks_": 3}}, r"setting 'gupt' unknown .*'blocks_'"),
    (baselines.privgene_baseline, {"privgene": {"poolsize": 3}}, r"setting 'privgene' unknown .*'poolsize'"),
])
def test_unknown_or_invalid_settings_raise_naming_them(function, given, message):
    X = np.random.default_rng(0).random((30, 2))
    with pytest.raises(DPClustError, match=message):
        function(X, 3, 10.0, 0.0, np.random.default_rng(0), dict(given, bounds=[0.0, 1.0], init_seed=1))


def test_a_bad_override_fails_at_planning_time(config):
    with pytest.raises(DPClustError, match=r"lushen2020.dwork.*'max_iterations' must be >= 1"):
        resolve_algorithm(config, "lushen2020.dwork", {"max_iterations": 0}, where="fig7")
    with pytest.raises(DPClustError, match=r"unknown setting\(s\) \['dplloyd'\]"):
        resolve_algorithm(config, "lushen2020.gupt", {"dplloyd": {}}, where="fig7")


def test_su_settings_come_from_the_declaration_when_su_declares_them(monkeypatch):
    """`_su`: Su et al.'s declared defaults when the function declares settings, else (until
    su2016 is migrated) its module's DEFAULTS."""
    from dpclust.su2016 import dplloyd as su_dplloyd

    function, defaults = baselines._su(baselines.SU_DPLLOYD)
    declared_settings = settings_of(function)
    expected = declared_settings.defaults() if declared_settings is not None else su_dplloyd.DEFAULTS
    assert defaults == expected and defaults is not expected
    fake = Settings(iterations=Setting(7, "REC test", Interval(int, 1)))
    monkeypatch.setattr(su_dplloyd, "dplloyd", declared(fake)(lambda X, k, e, d, rng, s: s))
    assert baselines._su(baselines.SU_DPLLOYD)[1] == {"iterations": 7}


# --- items: thresholds from claims, names from the names table ----------------------------------
def _records(prior_match, posterior_match, it=(9, 4)):
    recs = []
    for alg, match in ((common.PRIOR, prior_match), (common.POSTERIOR, posterior_match)):
        rec = {"dataset": "iris", "algorithm": alg, "k": 3, "epsilon": 10.0, "status": "ok", "reason": "",
               "settings": {"atom_steps": 100}, "guarantee": {"kind": "not DP as published"}, "runs": []}
        for seed, m in enumerate(match):
            rec["runs"].append({"seed": seed, "cost_kmeans": 1.0, "iterations": it[0], "epsilon_spent": 0.1,
                                "info": {"match": m, "lloyd_iterations": it[1], "prenoise_ratio": 1.0,
                                         "lloyd_steps": it[0] + 1}})
        recs.append(rec)
    return recs


def test_fig8_thresholds_come_from_claims():
    """Prior 120/200 (CI ≈ 0.53–0.67), Posterior 40/200 (≈ 0.15–0.26): the verdicts follow the thresholds."""
    table = fig8.aggregate(_records([True] * 120 + [False] * 80, [True] * 40 + [False] * 160), {})
    strict = fig8.checks(table, {"claims": {"prior_min_match": 0.84, "posterior_max_match": 0.1}})
    loose = fig8.checks(table, {"claims": {"prior_min_match": 0.5, "posterior_max_match": 0.3}})
    assert [c.holds for c in strict] == [False, True, False]
    assert [c.holds for c in loose] == [True, True, True]
    assert "84%" in strict[0].claim and "50%" in loose[0].claim and "30%" in loose[2].claim


def test_iteration_thresholds_come_from_claims():
    opts = {"strategy": common.PRIOR, "count": "iterations",
            "paper_table": {"algorithm": {"iris": 8.2}, "lloyd": {"iris": 6.1}, "ratio": {"iris": 1.34}}}
    recs = _records([True] * 40, [True] * 40, it=(9, 5))
    for i, run in enumerate(recs[0]["runs"]):    # a little spread, so that the intervals have a width
        run["iterations"] = 9 + (i % 3) - 1
        run["info"]["lloyd_iterations"] = 5 + (i % 2)
    table = iterations.aggregate(recs, {"options": opts})
    item = {"options": opts, "reproduces": "Lu & Shen 2020, Figure 10"}
    strict = iterations.checks(table, dict(item, claims={"max_ratio": 1.5, "lloyd_tolerance": 0.05}))
    loose = iterations.checks(table, dict(item, claims={"max_ratio": 2.0, "lloyd_tolerance": 0.25}))
    assert [c.holds for c in strict] == [False, False, True]     # 1.64×; 5.5 vs 6.1 is −10 %
    assert [c.holds for c in loose] == [True, True, True]
    assert "Fig. 10(b)" in loose[1].claim and "±25%" in loose[1].claim


def test_fig7_cap_slack_comes_from_claims():
    recs = [{"dataset": "iris", "algorithm": alg, "k": 3, "epsilon": 10.0, "status": "ok", "reason": "",
             "settings": {"atom_steps": 100} if alg in common.ALG1 else {"reference": {"atom_steps": 100}},
             "runs": [{"seed": 0, "cost_kmeans": 1.0, "epsilon_spent": 10.0 + 1e-6, "info": {},
                       "ledger": [["all", 10.0 + 1e-6, 0.0]]}]}   # the nominal total: the ledger's
            for alg in (*common.ALG1, *common.BASELINES)]
    table = fig7.aggregate(recs, {})
    texts = texts_from_config(HERE.parents[1] / "config", "lushen2020", "fig7")
    assert fig7.checks(table, {"claims": {"cap_slack": 1e-9, **texts}})[-1].holds is False
    assert fig7.checks(table, {"claims": {"cap_slack": 1e-5, **texts}})[-1].holds is True


def test_names_come_from_the_step_spec():
    names = {"algorithms": {common.PRIOR: "PRIOR-X", common.POSTERIOR: "POST-Y"}, "datasets": {}}
    table = fig8.aggregate(_records([True] * 40, [False] * 40), {})
    checks = fig8.checks(table, {"claims": {"prior_min_match": 0.84, "posterior_max_match": 0.8},
                                     "names": names})
    assert "PRIOR-X" in checks[0].claim and "POST-Y" in checks[2].claim
    assert "iris: prior-x − post-y = 1" in checks[1].detail


def test_planned_specs_give_each_step_only_its_options(config):
    items = {t.item: t for t in plan(config).items if t.paper == "lushen2020"}
    for item in ("fig7", "fig8", "fig9", "fig10"):
        target = items[item]
        assert "claims" in target.step_spec("checks") and "claims" not in target.step_spec("render")
        assert "figure" in target.step_spec("render") and "figure" not in target.step_spec("checks")
        assert "claims" not in target.step_spec("aggregate") and "figure" not in target.step_spec("aggregate")
    assert "table" in items["table2"].step_spec("aggregate") and "table" not in items["table2"].step_spec("checks")


def test_table2_labels_and_the_runs_k_are_table_2s(config, monkeypatch):
    """The Dataset column keeps the paper's labels (names table; House's says its origin is unverified,
    from the registry's `origin: unverified`), and fig7's runs (k from the registry's
    paper_k.lushen2020) use Table 2's k on every dataset."""
    import dpclust.data

    def unavailable(path):
        raise dpclust.data.DatasetUnavailable(f"{path}: offline")

    monkeypatch.setattr(dpclust.data, "load_processed", unavailable)
    items = {t.item: t for t in plan(config).items if t.paper == "lushen2020"}
    spec = items["table2"].step_spec("aggregate")
    ctx = Context(dataset_paths={d: f"{d}.h5" for d in spec["datasets"]})
    table = table2.aggregate([], spec, ctx)
    assert table["dataset"].tolist() == ["Iris", "House (origin unverified)", "S1", "Birch2", "Image", "Lifesci"]
    assert table["name"].tolist() == ["iris", "house", "s1", "birch2_12k", "image", "lifesci"]
    assert (table["status"] == "data_unavailable").all()
    ks = {(job.dataset, job.k) for job in items["fig7"].runs}
    assert ks == set(spec["table"]["k"].items())
    assert {d: v[2] for d, v in spec["table"]["paper"].items()} == spec["table"]["k"]
