"""Planning of the audit jobs (dpclust.pipeline.planning's audit section): one job per (algorithm, design)
with a complete spec, the neighbouring relation and δ from the declared guarantee, shared by
`audits_from`, and the real config's presets."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.audit.designs import ADD_REMOVE, DESIGNS, REPLACE_ONE
from dpclust.pipeline.audit_job import SPEC_KEYS
from dpclust.pipeline.audit_labels import PUBLIC_N_FIXED
from dpclust.pipeline.audit_plan import AuditItemTarget
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan

from .fake_algorithms import register

REPO = Path(__file__).resolve().parents[2]
FAKES = register()


@pytest.fixture
def cfg_dir(tmp_path):
    """The real config files with only the baselines paper and a small audit paper of toy algorithms."""
    d = tmp_path / "config"
    (d / "papers").mkdir(parents=True)
    for name in ("config.yaml", "datasets.yaml", "names.yaml"):
        shutil.copy(REPO / "config" / name, d / name)
    names = yaml.safe_load((d / "names.yaml").read_text())
    names["algorithms"]["audit.honest"] = "Honest sum"
    (d / "names.yaml").write_text(yaml.safe_dump(names, allow_unicode=True))
    shutil.copy(REPO / "config" / "papers" / "baselines.yaml", d / "papers" / "baselines.yaml")
    top = yaml.safe_load((d / "config.yaml").read_text())
    top["papers"] = ["baselines", "audit"]
    (d / "config.yaml").write_text(yaml.safe_dump(top))
    paper = yaml.safe_load((REPO / "config" / "papers" / "audit.yaml").read_text())
    paper["algorithms"] = {
        "audit.honest": {"function": f"{FAKES}:honest_sum"},
        "audit.approx": {"function": f"{FAKES}:approx_sum"},
        "audit.exact": {"function": f"{FAKES}:exact_sum"},
        "audit.kvariates": {"function": f"{FAKES}:undeclared_sum"},   # no declared guarantee
    }
    paper["items"]["audit"]["audit"] = {
        "algorithms": {"select": "private"}, "designs": ["corner_outlier", "line_sums"], "samples": 50,
        "epsilon": 1.0, "delta": 1.0e-5,
        "design_params": {"corner_outlier": {"n": 3, "k": 1}},
        "params": {"audit.kvariates": {"relation": "replace_one", "samples": 20, "designs": ["lone_point"],
                                       "note": "smaller"},
                   "audit.exact": {"relation": "add_remove", "design_params": {"line_sums": {"n": 5}}}},
    }
    paper["items"]["audit"].pop("presets", None)
    paper["items"]["audit"].pop("table", None)      # the floating-point design: declared per real algorithm
    (d / "papers" / "audit.yaml").write_text(yaml.safe_dump(paper, allow_unicode=True))
    return d


def _edit_audit(cfg_dir, fn):
    path = cfg_dir / "papers" / "audit.yaml"
    data = yaml.safe_load(path.read_text())
    fn(data["items"]["audit"]["audit"])
    path.write_text(yaml.safe_dump(data, allow_unicode=True))


def test_planner_expands_one_job_per_algorithm_and_design(cfg_dir):
    p = plan(load_config(cfg_dir))
    target = p.item("audit", "audit")
    assert isinstance(target, AuditItemTarget)
    jobs = {(j.algorithm, j.design): j for j in target.audits}
    assert set(jobs) == {("audit.honest", "corner_outlier"), ("audit.honest", "line_sums"),
                         ("audit.approx", "corner_outlier"), ("audit.approx", "line_sums"),
                         ("audit.exact", "corner_outlier"), ("audit.exact", "line_sums"),
                         ("audit.kvariates", "lone_point")}
    for job in target.audits:
        spec = job.spec
        assert set(SPEC_KEYS) <= set(spec)
        assert job.path == f"{p.config['results_dir']}/audits/{job.algorithm}/{job.design}.json"
        assert p.audit(job.path) is job
    honest = jobs["audit.honest", "corner_outlier"].spec
    assert (honest["n"], honest["k"], honest["samples"], honest["delta"]) == (3, 1, 50, 0.0)
    assert honest["relation"] == ADD_REMOVE and honest["relation_source"] == "declared guarantee"
    assert honest["guarantee"]["kind"] == "ε-DP"
    assert jobs["audit.approx", "line_sums"].spec["delta"] == 1.0e-5             # (ε, δ)-DP: the audit's δ
    exact = jobs["audit.exact", "line_sums"].spec
    assert exact["relation"] == REPLACE_ONE                                       # the guarantee wins over params
    assert (exact["n"], exact["k"]) == (5, DESIGNS["line_sums"].k)
    kv = jobs["audit.kvariates", "lone_point"].spec
    assert "guarantee" not in kv and kv["relation"] == REPLACE_ONE and kv["samples"] == 20 and kv["note"] == "smaller"
    assert kv["relation_source"] == "audit config (guarantee undeclared)"
    assert len({j.spec["seed"] for j in target.audits}) == len(target.audits)
    figure = p.item("audit", "audit_figure")
    assert figure.audits == target.audits and len(p.audits) == len(target.audits)
    assert target.step_names()["algorithms"] == {"audit.honest": "Honest sum"}     # names of the audited algorithms
    assert p.item("baselines", "table").runs and not hasattr(p.item("baselines", "table"), "audits")


def test_planner_is_deterministic_and_specs_are_canonical(cfg_dir):
    a = [j.spec_json for j in plan(load_config(cfg_dir)).audits]
    b = [j.spec_json for j in plan(load_config(cfg_dir)).audits]
    assert a == b and all(json.loads(s) for s in a)


@pytest.mark.parametrize("mutate, message", [
    (lambda a: a.update(designs=["nope"]), "audit"),
    (lambda a: a.update(algorithms=["baselines.lloyd"], params={}), "takes no privacy budget"),
    (lambda a: a.update(algorithms=["audit.missing"]), "unknown algorithm"),
    (lambda a: a["params"].update({"baselines.lloyd": {}}), "not audited by this item"),
    (lambda a: a.update(design_params={"line_sums": {"n": 1, "k": 2}}), "1 <= k <= n"),
    (lambda a: a.update(samples=2), "audit"),
    (lambda a: a["params"].update({"audit.honest": {"n_from_data": ["line_sums"]}}), "n_from_data"),  # no public N
    (lambda a: a["params"].update({"audit.honest": {"n_from_data": ["nope"]}}), "audit"),
])
def test_invalid_audit_config_is_one_clear_error(cfg_dir, mutate, message):
    _edit_audit(cfg_dir, mutate)
    with pytest.raises(DPClustError, match=message):
        plan(load_config(cfg_dir))


def _with_tunable(cfg_dir, power):
    """The toy audit paper plus `audit.tunable` (tunable_sum: setting `blur`) with a `power` variant."""
    path = cfg_dir / "papers" / "audit.yaml"
    data = yaml.safe_load(path.read_text())
    data["algorithms"]["audit.tunable"] = {"function": f"{FAKES}:tunable_sum"}
    data["items"]["audit"]["audit"]["params"]["audit.tunable"] = {"power": power}
    path.write_text(yaml.safe_dump(data, allow_unicode=True))


def test_power_variant_is_planned_on_its_own_path_with_its_settings(cfg_dir):
    """`power` plans one more job per algorithm: its design, n and samples, the settings it overrides
    (resolved: the rest stay the algorithm's), `variant` in the spec, its own seed and note; the
    algorithm's own audits keep their specs."""
    from dpclust.pipeline.audit_labels import POWER

    before = {j.path: j.spec_json for j in plan(load_config(cfg_dir)).audits}
    _with_tunable(cfg_dir, {"settings": {"blur": 1.0}, "design": "line_sums", "n": 4, "samples": 30,
                            "epsilon": 2.0, "note": "why these settings"})
    jobs = plan(load_config(cfg_dir)).audits
    after = {j.path: j.spec_json for j in jobs}
    assert {p: after[p] for p in before} == before
    tunable = {j.path: j for j in jobs if j.algorithm == "audit.tunable"}
    results = load_config(cfg_dir)["results_dir"]   # results/<preset>
    power = tunable.pop(f"{results}/audits/audit.tunable/line_sums.power.json")
    assert power.variant == POWER and {j.design for j in tunable.values()} == {"corner_outlier", "line_sums"}
    spec = power.spec
    assert spec["variant"] == {"name": POWER, "settings": {"blur": 1.0}} and spec["settings"]["blur"] == 1.0
    assert (spec["design"], spec["n"], spec["k"], spec["samples"], spec["note"]) == ("line_sums", 4, 1, 30,
                                                                                      "why these settings")
    assert spec["epsilon"] == 2.0
    own = tunable[f"{results}/audits/audit.tunable/line_sums.json"].spec
    assert own["epsilon"] == 1.0
    assert own["settings"]["blur"] == 50.0 and "variant" not in own and own["seed"] != spec["seed"]


@pytest.mark.parametrize("power, message", [
    ({"settings": {"nope": 1}, "design": "corner_outlier"}, "nope"),          # an unknown setting: resolved
    ({"settings": {"blur": 0.5}, "design": "corner_outlier"}, "blur"),        # a value its constraint refuses
    ({"settings": {"blur": 1.0}}, "design"),                                  # schema: a design is required
    ({"settings": {"blur": 1.0}, "design": "corner_outlier", "n": 1, "k": 2}, "1 <= k <= n"),
])
def test_invalid_power_variant_is_one_clear_error(cfg_dir, power, message):
    _with_tunable(cfg_dir, power)
    with pytest.raises(DPClustError, match=message):
        plan(load_config(cfg_dir))


def test_include_adds_explicit_algorithms_to_a_selection(cfg_dir):
    _edit_audit(cfg_dir, lambda a: a.update(algorithms={"select": "private", "guarantee": ["ε-DP"],
                                                         "include": ["audit.exact"]}, params={}))
    algs = {j.algorithm for j in plan(load_config(cfg_dir)).audits}
    assert algs == {"audit.honest", "audit.exact"}


def test_real_config_audits_every_private_algorithm():
    """(The floating-point design's jobs, with their own datasets and its positive control, are
    tests/audits/test_audit_floating_point_design.py's.)"""
    from dpclust.pipeline.audit_labels import FLOATING_POINT

    for preset in ("full", "quick", "test"):
        config = load_config(REPO / "config", overrides={"preset": preset})
        p = plan(config)
        private = {a for a, e in config["algorithms"].items() if e.get("private", True)}
        audited = {j.algorithm for j in p.item("audit", "audit").audits if j.variant != FLOATING_POINT}
        if preset == "test":
            assert audited and audited <= private
            continue
        assert audited == private
        threshold = [j for j in p.audits if j.variant != FLOATING_POINT]
        for job in threshold:
            spec = job.spec
            if job.variant == "power":
                # its own budget: test_real_config_power_variants
                continue
            if job.algorithm.startswith("lushen2020."):
                assert spec["epsilon"] == 10.0                          # the cap: ε_step = 0.1
            else:
                assert spec["epsilon"] == 1.0
        if preset == "full":
            assert {j.design for j in threshold} == set(DESIGNS)
        # the guarantee each algorithm declares reaches its audits (Lu & Shen's Algorithm 1 and the
        # §7.1 baselines as configured: not DP as published), with the relation it is stated for
        kinds = {j.algorithm: (j.spec.get("guarantee") or {}).get("kind") for j in threshold}
        assert {a for a, k in kinds.items() if k == "not DP as published"} >= {
            "lushen2020.posterior", "lushen2020.prior", "lushen2020.blum", "lushen2020.dwork", "lushen2020.su"}
        for job in threshold:
            if job.spec.get("guarantee"):
                assert job.spec["relation_source"].startswith("declared guarantee")
        # "add/remove one record, N public": N held fixed (public_n = |D|) where the algorithm takes it,
        # and said so where it reads N from its data
        for job in threshold:
            relation = (job.spec.get("guarantee") or {}).get("relation", "").lower()
            n_public = job.spec["relation"] == "add/remove one record" and "n public" in relation
            takes_n = "public_n" in job.spec["settings"]   # declared (complete settings carry every declared name)
            if job.variant:
                continue
            if n_public and takes_n:
                assert job.spec["settings"]["public_n"] == job.spec["n"]
                assert "public_n = |D| on both neighbours" in job.spec["relation_source"]
            elif n_public:
                assert "reads N from each dataset" in job.spec["relation_source"]
            else:
                assert job.spec["settings"].get("public_n") is None
        if preset != "test":   # every configured "add/remove, N public" algorithm takes the public N
            fixed = {j.algorithm for j in threshold if j.spec["settings"].get("public_n")}
            assert fixed == {"su2016.eugkm", "su2016.hybrid", "su2016.hybrid_forced", "balcan2017.balcan",
                             "balcan2017.balcan_authors", "balcan2017.balcan_kmedian", "balcan2017.sample_aggregate",
                             "balcan2017.partition_illustration", "nguyen2021.ours", "nguyen2021.ours_authors"}
            assert not any("reads N from each dataset" in j.spec["relation_source"] for j in threshold)


def test_real_config_audits_eugkm_and_the_hybrid_also_with_n_from_the_data():
    """The `n_from_data` variant: EUGkM and the hybrid, with N read from each neighbour (public_n unset),
    on their own paths, labelled outside the guarantee; their main audits keep N fixed and unchanged."""
    from dpclust.pipeline.audit_labels import N_FROM_DATA, N_FROM_DATA_SOURCE

    expected = {"full": {(a, d) for a in ("su2016.eugkm", "su2016.hybrid") for d in ("line_sums", "lone_point")},
                "quick": {("su2016.eugkm", "line_sums"), ("su2016.hybrid", "line_sums")}, "test": set()}
    for preset, pairs in expected.items():
        audits = plan(load_config(REPO / "config", overrides={"preset": preset})).audits
        variants = [j for j in audits if j.variant == N_FROM_DATA]
        assert {(j.algorithm, j.design) for j in variants} == pairs
        for job in variants:
            assert job.variant == N_FROM_DATA and job.path.endswith(f"/{job.algorithm}/{job.design}.{N_FROM_DATA}.json")
            assert job.spec["settings"]["public_n"] is None and N_FROM_DATA_SOURCE in job.spec["relation_source"]
            assert "public_n = |D|" not in job.spec["relation_source"]
        for job in (j for j in audits if j.variant != N_FROM_DATA and j.algorithm in ("su2016.eugkm", "su2016.hybrid")):
            assert (job.spec["settings"]["public_n"] == job.spec["n"]
                    and N_FROM_DATA_SOURCE not in job.spec["relation_source"])
        assert len({j.path for j in audits}) == len(audits) and len({j.spec["seed"] for j in audits}) == len(audits)


def test_real_config_power_variants():
    """The `power` audits of the real config (full and quick): settings with the fewest compositions,
    within each guarantee (public N held fixed where the algorithm takes it), on their own paths."""
    from dpclust.pipeline.audit_labels import POWER

    expected = {"su2016.dplloyd": {"iterations": 1}, "examples.noisy_lloyd": {"iterations": 1},
                "su2016.eugkm": {"theta": 0.25, "n_init_sets": 1}, "su2016.hybrid": {"theta": 0.25, "n_init_sets": 1},
                "su2016.gkm": {"range_fraction": 0.01}, "su2016.gkm3k": {"range_fraction": 0.01},
                "su2016.hybrid_forced": {"budget_split": 0.01, "theta": 0.25, "n_init_sets": 1},
                "lushen2020.dwork_dp": {"public_iterations": 1}, "lushen2020.gupt": {"gupt": {"range_fraction": 0.01}},
                "balcan2017.kvariates_simhash": {"nodes": 1, "potential_fraction": 0.01},
                "cohenaddad2022.hst": {"layers": 1, "lloyd_iterations": 0, "tree_budget_fraction": 1.0,
                                       "weight_threshold_factor": 0.5},
                "balcan2017.sulq": {"iterations": 1, "sum_mechanism": "laplace", "count_fraction": 0.01},
                "balcan2017.balcan": {"budget_weights": {"candidate": 0.001, "local_swap": 0.001, "recovery": 0.001,
                                                         "select": 0, "refine": 1},
                                      "refine_iterations": 1, "refine_sum_mechanism": "laplace",
                                      "refine_count_fraction": 0.01}}
    for preset in ("full", "quick"):
        audits = plan(load_config(REPO / "config", overrides={"preset": preset})).audits
        power = {j.algorithm: j for j in audits if j.variant == POWER}
        assert {a: j.spec["variant"]["settings"] for a, j in power.items()} == expected
        for alg, job in power.items():
            spec = job.spec
            assert job.path.endswith(f"/{alg}/{job.design}.{POWER}.json") and spec["note"].startswith("power: ")
            assert all(spec["settings"][key] == value for key, value in expected[alg].items())
            assert spec["epsilon"] == (100.0 if alg.startswith("lushen2020.") else 1.0)   # Lu & Shen: a cap of 100
            if "public_n" in spec["settings"] and spec["settings"]["public_n"] is not None:
                assert spec["settings"]["public_n"] == spec["n"] and PUBLIC_N_FIXED in spec["relation_source"]
