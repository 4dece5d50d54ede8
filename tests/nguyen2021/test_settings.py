"""The declared settings of Algorithm 1 are the one home of its defaults: the configured variants
resolve to exactly the settings the config listed before the migration (commit d0337d3), the config
holds only overrides, and an unknown setting or a bad value fails with one clear error naming it."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.estimators import Nguyen
from dpclust.nguyen2021.algorithm import SETTINGS, nguyen
from dpclust.settings import AnyValue

#: Every setting as config/papers/nguyen2021.yaml listed it at d0337d3 (before the migration).
BEFORE = {
    "nguyen2021.ours": {
        "alpha": 1.0, "jl_dim": "auto", "jl_matrix": "rademacher", "rounds_factor": 1.0,
        "budget_split": {"em": 0.1, "counts": 0.1, "recovery": 0.4, "lloyd": 0.4},
        "delta_split": {"em": 0.3333333333333333, "recovery": 0.3333333333333333, "lloyd": 0.3333333333333334},
        "lloyd_rounds": 1, "proxy_lloyd_max_iter": 300, "proxy_lloyd_tol": 0.0, "em_max_trials": 200000,
    },
    "nguyen2021.lloyd": {"init": "random_points", "max_iter": 10, "tol": -1.0, "record_trace": False},
}
#: Settings added since (their defaults keep the old behaviour: the paper's exponential mechanism).
ADDED = {"em_sampler": "paper", "authors_estimate_draws": 64, "public_n": None,   # public_n: None = the data's size
         "authors_max_n": 150_000}   # the authors' sampler's effort guard (unused by the paper's sampler)
BEFORE["nguyen2021.ours"] = {**BEFORE["nguyen2021.ours"], **ADDED}
#: Variants added since: Algorithm 1 with the authors' sampler (NOT DP), everything else as ours.
NEW_VARIANTS = {"nguyen2021.ours_authors": {**BEFORE["nguyen2021.ours"], "em_sampler": "authors"}}


@pytest.fixture(scope="module")
def config(repo):
    from dpclust.pipeline.configuration import load_config

    return load_config(repo / "config")


@pytest.mark.parametrize("algorithm", sorted({**BEFORE, **NEW_VARIANTS}))
def test_resolved_settings_equal_the_settings_before_the_migration(config, algorithm):
    from dpclust.pipeline.configuration import resolve_algorithm

    expected = {**BEFORE, **NEW_VARIANTS}[algorithm]
    resolved = resolve_algorithm(config, algorithm)["settings"]
    assert resolved == expected
    # exactly equal floats and types (the split fractions feed the noise scales)
    for key, value in expected.items():
        assert type(resolved[key]) is type(value), key


def test_every_planned_run_of_the_paper_uses_those_settings(config):
    from dpclust.pipeline.planning import plan

    jobs = [j for t in plan(config).items if t.paper == "nguyen2021" for j in t.runs]
    seen = {j.algorithm for j in jobs}
    assert set(BEFORE) <= seen
    for job in jobs:
        if job.algorithm in BEFORE:
            assert job.spec["settings"] == BEFORE[job.algorithm]


def test_config_holds_only_overrides(repo):
    """Every setting the config gives differs from the declared default (else it is a copy)."""
    from dpclust.pipeline.resolve import import_object

    cfg = yaml.safe_load((repo / "config/papers/nguyen2021.yaml").read_text())
    for alg, entry in cfg["algorithms"].items():
        defaults = import_object(entry["function"]).settings.defaults()
        for key, value in (entry.get("settings") or {}).items():
            assert key in defaults, f"{alg}: {key}"
            assert value != defaults[key], f"{alg}: {key} repeats the declared default"


def test_declarations_are_complete():
    assert nguyen.settings is SETTINGS
    for name, setting in SETTINGS.items():
        assert not isinstance(setting.check, AnyValue), name
        assert setting.doc, name
        assert len(setting.source) > 20, name
    assert Nguyen.default_settings == SETTINGS.defaults()


def _X():
    return np.random.default_rng(0).uniform(0, 1, size=(120, 3))


def _run(**settings):
    return nguyen(_X(), 2, 1.0, 1e-3, np.random.default_rng(0), {"bounds": [0.0, 1.0], **settings})


def test_unknown_setting_raises_naming_it():
    with pytest.raises(DPClustError, match=r"unknown setting\(s\) \['alpah'\]"):
        _run(alpah=1.0)


@pytest.mark.parametrize("name,value", [
    ("alpha", 0.0), ("alpha", "one"), ("jl_dim", "five"), ("jl_dim", 0), ("jl_matrix", "gaussian"),
    ("rounds_factor", -1.0), ("lloyd_rounds", -1), ("lloyd_rounds", 1.5), ("proxy_lloyd_max_iter", 0),
    ("em_max_trials", 0), ("proxy_lloyd_tol", float("nan")), ("em_sampler", "greedy"),
    ("authors_estimate_draws", 1),
    ("budget_split", {"em": 0.5, "counts": 0.5, "recovery": 0.5, "lloyd": 0.0}),
    ("budget_split", {"em": 0.2, "counts": 0.2, "recovery": 0.6}),
    ("budget_split", {"em": -0.1, "counts": 0.3, "recovery": 0.4, "lloyd": 0.4}),
    ("delta_split", {"em": 0.5, "recovery": 0.5}),
    ("delta_split", {"em": "a", "recovery": 0.5, "lloyd": 0.5}),
])
def test_bad_value_raises_naming_the_setting(name, value):
    with pytest.raises(DPClustError, match=f"setting '{name}'"):
        _run(**{name: value})


def test_bad_override_in_a_run_group_fails_at_planning(config):
    from dpclust.pipeline.configuration import resolve_algorithm

    with pytest.raises(DPClustError, match="nguyen2021.ours.*'lloyd_rounds'"):
        resolve_algorithm(config, "nguyen2021.ours", {"lloyd_rounds": -2}, where="fig1/runs/private")
    with pytest.raises(DPClustError, match="unknown setting"):
        resolve_algorithm(config, "nguyen2021.ours", {"rounds": 2}, where="fig1/runs/private")


def test_declared_guarantees(config):
    """Algorithm 1 is (ε, δ)-DP for add/remove neighbours with n public; with the authors' sampler it
    is 'not DP as published' with its reason; the resolved variants carry those guarantees, and the
    not-DP variant reports only the nominal budget it was given (its record's guarantee says not DP)."""
    from dpclust.pipeline.configuration import resolve_algorithm

    g = nguyen.guarantee(SETTINGS.defaults())
    assert g.kind == "(ε, δ)-DP" and "n public" in g.relation
    bad = nguyen.guarantee({**SETTINGS.defaults(), "em_sampler": "authors"})
    assert bad.kind == "not DP as published" and "normalised by the largest cover" in bad.note
    assert resolve_algorithm(config, "nguyen2021.ours")["guarantee"]["kind"] == "(ε, δ)-DP"
    assert resolve_algorithm(config, "nguyen2021.ours_authors")["guarantee"]["kind"] == "not DP as published"
    res = _run(em_sampler="authors")
    assert res.epsilon_spent == pytest.approx(1.0)   # the nominal ε it was given, with no guarantee
    assert res.info["nominal_epsilon"] == pytest.approx(1.0) and res.info["privacy_note"].startswith("NOT DP")
    assert _run().epsilon_spent == pytest.approx(1.0)
