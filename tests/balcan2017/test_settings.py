"""Declared settings of balcan2017's algorithms are the one home of their defaults.

* Every configured algorithm resolves (declared defaults + config overrides) to exactly the settings
  it had before the migration, when config/papers/balcan2017.yaml listed every setting
  (`resolved_settings_d0337d3.json`, written from commit d0337d3). Documented exceptions:
  `balcan2017.kvariates` no longer carries `nodes` and `potential_fraction`, which the centralised
  k-variates++ never read (they belong to `kvariates_simhash`); `balcan2017.balcan_kmedian` no longer
  carries the k-means recovery/refinement settings it never read (`KMEDIAN_UNUSED`); Algorithm 4
  gained `calibration` (default `paper_dp`, behaviour unchanged); every algorithm whose guarantee
  rests on a public N gained `public_n` (default: the data's size, behaviour unchanged); the NOT-DP variant
  `balcan2017.balcan_authors` is Algorithm 4 with `calibration: authors, refine_iterations: 3`.
* The config holds only overrides (no value equal to its declared default).
* Other papers' params (nguyen2021, cohenaddad2022) still resolve.
* Unknown names and bad values raise one clear error naming the setting, at planning time too.
"""
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.balcan2017 import algorithm, kvariates, partition, sample_aggregate, sulq
from dpclust.pipeline.configuration import load_config, resolve_algorithm
from dpclust.pipeline.planning import plan
from dpclust.pipeline.resolve import import_object
from dpclust.settings import TAGS, AnyValue, settings_of

HERE = Path(__file__).parent
SNAPSHOT = json.loads((HERE / "resolved_settings_d0337d3.json").read_text(encoding="utf-8"))
#: Settings dropped on purpose (never read by the function); everything else must be unchanged.
DROPPED = {"balcan2017.kvariates": {"nodes", "potential_fraction"},
           "balcan2017.balcan_kmedian": {"recovery", "recovery_count_fraction", "refine_iterations",
                                         "refine_count_fraction", "refine_sum_mechanism", "gaussian_calibration",
                                         "delta_weights"}}
#: Settings added since (their defaults keep the old behaviour).
ADDED = {"balcan2017.balcan": {"calibration": "paper_dp", "public_n": None},
         "balcan2017.balcan_kmedian": {"public_n": None},
         "balcan2017.sample_aggregate": {"public_n": None},
         "balcan2017.partition_illustration": {"public_n": None}}
#: Variants added since the snapshot: (the snapshot variant they extend, their overrides).
NEW_VARIANTS = {"balcan2017.balcan_authors": ("balcan2017.balcan", {"calibration": "authors", "refine_iterations": 3})}


def _expected(name):
    base, extra = NEW_VARIANTS.get(name, (name, {}))
    before = SNAPSHOT[base]
    out = {k: v for k, v in before.items() if k not in DROPPED.get(base, set())}
    return {**out, **ADDED.get(base, {}), **extra}
FUNCTIONS = [algorithm.balcan, algorithm.balcan_kmedian, sulq.sulq, sample_aggregate.sample_aggregate,
             kvariates.kvariates, kvariates.kvariates_simhash, partition.partition_illustration]


@pytest.fixture(scope="module")
def cfg():
    return load_config()


def _paper_algorithms(cfg):
    return sorted(name for name, entry in cfg["algorithms"].items() if entry["paper"] == "balcan2017")


def test_every_configured_algorithm_resolves_to_its_settings_before_the_migration(cfg):
    assert _paper_algorithms(cfg) == sorted([*SNAPSHOT, *NEW_VARIANTS])
    for name in _paper_algorithms(cfg):
        assert resolve_algorithm(cfg, name)["settings"] == _expected(name), name


def test_kmedian_declares_only_what_it_reads():
    """The k-median variant no longer declares the k-means recovery/refinement settings: it refuses them."""
    X = np.random.default_rng(0).uniform(0, 1, size=(300, 3))
    for key in DROPPED["balcan2017.balcan_kmedian"] | {"calibration"}:
        assert key not in algorithm.balcan_kmedian.settings
        with pytest.raises(DPClustError, match=key):
            algorithm.balcan_kmedian(X, 2, 1.0, 0.0, np.random.default_rng(1), {"bounds": [0, 1], key: 1})


def test_kvariates_declares_no_settings():
    """The centralised k-variates++ reads no setting (the dropped nodes/potential_fraction were
    kvariates_simhash's): it runs on the runtime keys alone and refuses the old names."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(300, 3))
    res = kvariates.kvariates(X, 3, 1.0, 0.0, np.random.default_rng(1), {"bounds": [-1, 1]})
    assert len(kvariates.kvariates.settings) == 0 and res.centers.shape == (3, 3)
    for key in DROPPED["balcan2017.kvariates"]:
        with pytest.raises(DPClustError, match=key):
            kvariates.kvariates(X, 3, 1.0, 0.0, np.random.default_rng(1), {"bounds": [-1, 1], key: 1})
        assert key in kvariates.kvariates_simhash.settings


def test_config_holds_only_overrides(repo):
    paper = yaml.safe_load((repo / "config" / "papers" / "balcan2017.yaml").read_text(encoding="utf-8"))
    for name, entry in paper["algorithms"].items():
        declared = settings_of(import_object(entry["function"]))
        assert declared is not None, f"{name}: {entry['function']} declares no settings"
        for key, value in (entry.get("settings") or {}).items():
            assert key in declared, f"{name}: unknown setting {key!r}"
            assert value != declared[key].default, f"{name}: {key} repeats its declared default"


def test_declarations_are_complete():
    for fn in FUNCTIONS:
        for key, s in settings_of(fn).items():
            assert s.source.startswith(TAGS), (fn.__name__, key)
            assert not isinstance(s.check, AnyValue), f"{fn.__name__}.{key} has no real constraint"
            assert s.check.error(s.default) is None


def test_shared_settings_have_one_home():
    """Alg. 1's settings are partition's, Λ and the Gaussian calibration SuLQ's: the same objects."""
    for key in partition.PARTITION_SETTINGS:
        assert algorithm.SETTINGS[key] is partition.PARTITION_SETTINGS[key]
        assert algorithm.KMEDIAN_SETTINGS[key] is partition.PARTITION_SETTINGS[key]
    assert algorithm.SETTINGS["data_radius"] is sulq.SETTINGS["data_radius"]
    assert algorithm.SETTINGS["gaussian_calibration"] is sulq.SETTINGS["gaussian_calibration"]
    assert set(algorithm.KMEDIAN_SETTINGS) == (set(algorithm.SETTINGS) - set(algorithm.KMEDIAN_UNUSED)) | {"one_median"}


def test_other_papers_params_still_resolve(cfg):
    nguyen = resolve_algorithm(cfg, "balcan2017.balcan", {"recovery": "noisyavg", "refine_iterations": 1})["settings"]
    assert nguyen == {**_expected("balcan2017.balcan"), "recovery": "noisyavg", "refine_iterations": 1}
    cohen = resolve_algorithm(cfg, "balcan2017.balcan_kmedian", {"one_median": {"one_median_smooth_lambda": 0.1}})
    assert cohen["settings"] == {**_expected("balcan2017.balcan_kmedian"),
                                 "one_median": {"one_median_smooth_lambda": 0.1}}
    assert (resolve_algorithm(cfg, "balcan2017.kvariates_simhash")["settings"]
            == {"nodes": 500, "potential_fraction": 0.5})
    # and the planned runs of those papers carry them
    specs = {(j.paper, j.algorithm): j.spec["settings"]
             for j in plan(cfg).runs if j.algorithm.startswith("balcan2017.")}
    assert specs[("nguyen2021", "balcan2017.balcan")] == nguyen
    assert specs[("cohenaddad2022", "balcan2017.balcan_kmedian")] == cohen["settings"]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_unknown_setting_raises_naming_it(fn):
    X = np.zeros((20, 2))
    with pytest.raises(DPClustError, match="refine_iters"):
        fn(X, 2, 1.0, 1e-6, np.random.default_rng(0), {"bounds": [0, 1], "init_seed": 0, "refine_iters": 3})


@pytest.mark.parametrize("fn,key,value", [
    (algorithm.balcan, "projection_rule", "log_n"),
    (algorithm.balcan, "trials", 0),
    (algorithm.balcan, "candidate_repetitions", "many"),
    (algorithm.balcan, "budget_weights", {"candidate": 8, "local_swap": 1, "recovery": 2, "selection": 0, "refine": 6}),
    (algorithm.balcan, "budget_weights", {"candidate": -1, "local_swap": 1, "recovery": 2, "select": 0, "refine": 6}),
    (algorithm.balcan, "data_radius", 0.0),
    (algorithm.balcan, "recovery", "median"),
    (algorithm.balcan_kmedian, "one_median", 0.1),
    (sulq.sulq, "sum_mechanism", "exponential"),
    (sulq.sulq, "count_fraction", 0.0),
    (sample_aggregate.sample_aggregate, "aggregator", "center_of_attention"),
    (kvariates.kvariates_simhash, "nodes", 0),
    (partition.partition_illustration, "level_rule", "theory"),
    (partition.partition_illustration, "analysis_delta", 0.0),
])
def test_bad_value_raises_naming_the_setting(fn, key, value):
    X = np.zeros((20, 2))
    with pytest.raises(DPClustError, match=f"{fn.__name__}: setting '{key}'"):
        fn(X, 2, 1.0, 1e-6, np.random.default_rng(0), {"bounds": [0, 1], "init_seed": 0, key: value})


def test_bad_value_in_a_run_group_fails_at_planning(cfg):
    with pytest.raises(DPClustError, match="setting 'recovery'"):
        resolve_algorithm(cfg, "balcan2017.balcan", {"recovery": "noisy-avg"}, where="balcan2017/fig2/runs/x")
    with pytest.raises(DPClustError, match=r"unknown setting\(s\) \['nodes'\]"):
        resolve_algorithm(cfg, "balcan2017.kvariates", {"nodes": 2})


def test_every_algorithm_declares_its_guarantee(cfg):
    """Each configured variant resolves to a declared guarantee with its neighbouring relation; the
    authors' calibration is 'not DP as published' with its reason, the default Alg. 4 (ε, δ)-DP."""
    from dpclust.settings import guarantee_of

    for fn in FUNCTIONS:
        assert guarantee_of(fn, fn.settings.defaults()) is not None, fn.__name__
    kinds = {n: resolve_algorithm(cfg, n)["guarantee"] for n in _paper_algorithms(cfg)}
    assert kinds["balcan2017.balcan"]["kind"] == "(ε, δ)-DP" and "n public" in kinds["balcan2017.balcan"]["relation"]
    assert kinds["balcan2017.balcan_authors"]["kind"] == "not DP as published"
    assert ("L2 radius" in kinds["balcan2017.balcan_authors"]["note"]
            and "17ε/12" in kinds["balcan2017.balcan_authors"]["note"])
    assert kinds["balcan2017.balcan_kmedian"]["kind"] == "ε-DP"
    assert kinds["balcan2017.sulq"]["kind"] == "(ε, δ)-DP"
    for n in ("balcan2017.sample_aggregate", "balcan2017.kvariates", "balcan2017.kvariates_simhash",
              "balcan2017.partition_illustration"):
        assert kinds[n]["kind"] == "ε-DP", n
    assert algorithm.balcan.guarantee({**algorithm.balcan.settings.defaults(),
                                       "refine_sum_mechanism": "laplace"}).kind == "ε-DP"
    assert algorithm.balcan.guarantee({**algorithm.balcan.settings.defaults(), "recovery": "noisyavg",
                                       "refine_iterations": 0}).kind == "(ε, δ)-DP"
    assert sulq.sulq.guarantee({**sulq.sulq.settings.defaults(), "sum_mechanism": "laplace"}).kind == "ε-DP"


def test_objectives_are_declared():
    """Run groups select algorithms by objective: the k-median variant minimises the k-median cost."""
    assert algorithm.balcan_kmedian.objective == "kmedian"
    assert algorithm.balcan.objective == "kmeans" and sulq.sulq.objective == "kmeans"
