"""Su et al. (2016): the declared settings are the one home of every default.

Each algorithm function declares its settings (`SETTINGS` in its module, `@declared`); the paper
config holds only the named variants' overrides. The resolved settings of every configured
algorithm must be exactly what they were before the declarations existed (TODAY: the settings the
config listed in full, commit d0337d3).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpclust import estimators
from dpclust.api import DPClustError
from dpclust.pipeline.configuration import canonical_json, load_config, resolve_algorithm
from dpclust.settings import AnyValue, Settings
from dpclust.su2016 import common, dplloyd, eugkm, gupt, hybrid, lloyd, privgene

BOUNDS = [-1.0, 1.0]

#: The resolved settings of every su2016 algorithm (as the config listed them before the migration,
#: with the fidelity fixes: EUGkM releases every cell — no max_synopsis_cells, a max_grid_cells memory
#: guard —, Gene declares no x/min_rounds and its mutation decay is 0.97, and the many-restarts
#: Lloyd of §6.4's cluster sizes).
TODAY = {
    "su2016.dplloyd": {"public_n": None, "allocation": "uniform", "clip_centers": True, "init": "sphere_packing",
                       "init_max_tries": 100, "init_search_steps": 20, "iterations": 5, "min_count": 1.0,
                       "record_trace": False, "rho": 0.225},
    "su2016.eugkm": {"public_n": None, "cells_rounding": "round_log", "init": "sphere_packing", "init_max_tries": 100,
                     "init_search_steps": 20, "lloyd_max_iter": 30, "lloyd_tol": 0.0001, "max_grid_cells": 8388608,
                     "n_init_sets": 30, "theta": 10.0},
    "su2016.gene": {"chunk_entries": 4000000, "generations": 100, "mutation_decay": 0.97,
                    "mutation_scale": 0.5, "pool_size": 200, "selected": 10},
    "su2016.gkm": {"align": "sort_first_coordinate", "block_max_iter": 10, "block_restarts": 20, "blocks": "n^0.4",
                   "clip_centers": True, "output_range": "per_coordinate", "range_fraction": 0.5,
                   "range_quantiles": [0.0, 1.0]},
    "su2016.gkm3k": {"align": "sort_first_coordinate", "block_max_iter": 10, "block_restarts": 20, "blocks": "n/3k",
                     "clip_centers": True, "output_range": "per_coordinate", "range_fraction": 0.5,
                   "range_quantiles": [0.0, 1.0]},
    "su2016.gkm_noise": {"align": "sort_first_coordinate", "analysis_epsilon": 1.0, "block_max_iter": 10,
                         "block_restarts": 20, "blocks": "n^0.4", "clip_centers": True, "lloyd_max_iter": 100,
                         "n_init_sets": 30, "output": "noise", "output_range": "per_coordinate", "range_fraction": 0.5,
                   "range_quantiles": [0.0, 1.0]},
    "su2016.gkm_sag": {"align": "sort_first_coordinate", "analysis_epsilon": 1.0, "block_max_iter": 10,
                       "block_restarts": 20, "blocks": "n^0.4", "clip_centers": True, "lloyd_max_iter": 100,
                       "n_init_sets": 30, "output": "sag", "output_range": "per_coordinate", "range_fraction": 0.5,
                   "range_quantiles": [0.0, 1.0]},
    "su2016.hybrid": {"public_n": None, "budget_split": 0.5, "cells_rounding": "round_log", "clip_centers": True,
                      "init": "sphere_packing", "init_max_tries": 100, "init_search_steps": 20, "lloyd_max_iter": 30,
                      "lloyd_tol": 0.0001, "max_grid_cells": 8388608, "min_count": 1.0, "mode": "auto",
                      "n_init_sets": 30, "rho": 0.225, "theta": 10.0},
    "su2016.hybrid_forced": {"public_n": None, "budget_split": 0.5, "cells_rounding": "round_log", "clip_centers": True,
                             "init": "sphere_packing", "init_max_tries": 100, "init_search_steps": 20,
                             "lloyd_max_iter": 30, "lloyd_tol": 0.0001, "max_grid_cells": 8388608, "min_count": 1.0,
                             "mode": "forced", "n_init_sets": 30, "rho": 0.225, "theta": 10.0},
    "su2016.lloyd": {"init": "sphere_packing", "init_max_tries": 100, "init_search_steps": 20, "max_iter": 300,
                     "record_trace": False, "tol": 0.0},
    "su2016.lloyd_restarts": {"init": "kmeans++", "init_max_tries": 100, "init_search_steps": 20, "max_iter": 300,
                              "record_trace": False, "tol": 0.0},
    "su2016.pgkm": {"chunk_entries": 4000000, "min_rounds": 8, "mutation_decay": 0.8, "mutation_scale": 0.5,
                    "pool_size": 200, "selected": 10, "x": 0.00125},
}

FUNCTIONS = [dplloyd.dplloyd, lloyd.lloyd, eugkm.eugkm, hybrid.hybrid, gupt.gkm, gupt.gkm_analysis, privgene.pgkm,
             privgene.gene]


@pytest.fixture(scope="module")
def config():
    return load_config()


def blobs(n=300, d=2, k=3, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.6, 0.6, size=(k, d))
    return np.clip(centres[rng.integers(0, k, size=n)] + rng.normal(0, 0.05, size=(n, d)), -1, 1)


def test_resolved_settings_equal_todays(config):
    ours = sorted(a for a in config["algorithms"] if a.startswith("su2016."))
    assert ours == sorted(TODAY)
    for name, expected in TODAY.items():
        resolved = resolve_algorithm(config, name)["settings"]
        # canonical JSON: equal values AND equal types (10 and 10.0 would give different run specs)
        assert canonical_json(resolved) == canonical_json(expected), name


def test_config_holds_only_overrides_of_the_declared_defaults(config):
    from dpclust.pipeline.resolve import import_object

    for name in TODAY:
        entry = config["algorithms"][name]
        declared = import_object(entry["function"]).settings
        for key, value in (entry.get("settings") or {}).items():
            assert key in declared, f"{name}: {key} is not a declared setting"
            assert value != declared[key].default, f"{name}: {key} repeats the declared default"


def test_the_declarations_are_the_one_home():
    for module in (dplloyd, lloyd, eugkm, hybrid, gupt, privgene):
        assert not hasattr(module, "DEFAULTS"), module.__name__
    for fn in FUNCTIONS:
        assert isinstance(fn.settings, Settings)
        for key, s in fn.settings.items():
            assert not isinstance(s.check, AnyValue), f"{fn.__name__}.{key} has no real constraint"
            assert s.check.error(s.default) is None
    # the initialisation settings common.initial_centers reads are declared by every caller
    for fn in (dplloyd.dplloyd, lloyd.lloyd, eugkm.eugkm, hybrid.hybrid):
        assert set(common.INIT_SETTINGS) <= set(fn.settings), fn.__name__
    # the estimators start from the declared defaults
    assert estimators.DPLloyd.default_settings == dplloyd.dplloyd.settings.defaults()
    assert estimators.GkM.default_settings == gupt.gkm.settings.defaults()


def test_lushen2020_functions_expose_their_declarations():
    """lushen2020 calls dplloyd, gkm and pgkm with partial settings and reads `.settings.defaults()`:
    GUPT and PrivGene run with "Su et al.'s defaults", BLUM/DWORK/SU override DPLloyd's settings."""
    assert canonical_json(gupt.gkm.settings.defaults()) == canonical_json(TODAY["su2016.gkm"])
    assert canonical_json(privgene.pgkm.settings.defaults()) == canonical_json(TODAY["su2016.pgkm"])
    assert canonical_json(dplloyd.dplloyd.settings.defaults()) == canonical_json(TODAY["su2016.dplloyd"])
    assert {"allocation", "iterations", "init", "min_count", "clip_centers", "rho"} <= set(dplloyd.dplloyd.settings)


@pytest.mark.parametrize("fn,partial", [
    (dplloyd.dplloyd, {"allocation": "geometric", "iterations": 3, "init": "random_points"}),
    (dplloyd.dplloyd, {"allocation": "su_tops", "rho": 0.3}),
    (gupt.gkm, {}),
    (privgene.pgkm, {"pool_size": 20}),
])
def test_a_partial_settings_dict_is_completed_with_the_declared_defaults(fn, partial):
    X = blobs()
    runtime = {"bounds": BOUNDS, "init_seed": 5}
    short = fn(X, 3, 0.5, 0.0, np.random.default_rng(1), dict(partial, **runtime))
    full = fn(X, 3, 0.5, 0.0, np.random.default_rng(1), dict(fn.settings.defaults(), **partial, **runtime))
    assert np.array_equal(short.centers, full.centers)
    assert short.epsilon_spent == pytest.approx(0.5)


def test_an_unknown_setting_raises_naming_it(config):
    with pytest.raises(DPClustError, match="iteratoins"):
        dplloyd.dplloyd(blobs(), 3, 1.0, 0.0, np.random.default_rng(0),
                        {"bounds": BOUNDS, "init_seed": 0, "iteratoins": 5})
    with pytest.raises(DPClustError, match="thetta"):
        resolve_algorithm(config, "su2016.eugkm", {"thetta": 5.0})


@pytest.mark.parametrize("fn,bad,name", [
    (gupt.gkm, {"blocks": "sqrt"}, "blocks"),
    (gupt.gkm, {"range_quantiles": [0.0, 2.0]}, "range_quantiles"),
    (gupt.gkm, {"range_fraction": 1.0}, "range_fraction"),
    (hybrid.hybrid, {"budget_split": 0.0}, "budget_split"),
    (hybrid.hybrid, {"mode": "sometimes"}, "mode"),
    (eugkm.eugkm, {"init": "random_points"}, "init"),
    (eugkm.eugkm, {"theta": 0.0}, "theta"),
    (dplloyd.dplloyd, {"iterations": 0}, "iterations"),
    (dplloyd.dplloyd, {"iterations": 2.5}, "iterations"),
    (dplloyd.dplloyd, {"clip_centers": "yes"}, "clip_centers"),
    (privgene.pgkm, {"mutation_decay": 1.5}, "mutation_decay"),
    (lloyd.lloyd, {"init": "box"}, "init"),
    (dplloyd.dplloyd, {"init": "kmeans++"}, "init"),           # only the non-private baseline declares it
])
def test_a_bad_value_raises_naming_the_setting(fn, bad, name):
    with pytest.raises(DPClustError, match=f"'{name}'"):
        fn(blobs(), 3, 1.0, 0.0, np.random.default_rng(0), dict(bad, bounds=BOUNDS, init_seed=0))


def test_a_bad_override_in_a_run_group_fails_at_planning(config):
    with pytest.raises(DPClustError, match="'blocks'"):
        resolve_algorithm(config, "su2016.gkm_sag", {"blocks": "n^x"}, where="su2016/fig3/runs/e01")


def test_every_algorithm_declares_its_guarantee_and_relation():
    """Issue 15: each algorithm says what it guarantees and for which neighbouring relation."""
    from dpclust.settings import guarantee_of

    g = lambda fn, **st: guarantee_of(fn, st)  # noqa: E731
    assert g(dplloyd.dplloyd).kind == "ε-DP" and g(dplloyd.dplloyd).relation == "add/remove one record"
    assert g(dplloyd.dplloyd, allocation="su_tops").relation == "add/remove one record, N public"
    bad = g(dplloyd.dplloyd, init="random_points")
    assert bad.kind == "not DP as published" and not bad.is_dp and "data records" in bad.note
    for fn in (eugkm.eugkm, hybrid.hybrid):
        assert g(fn).kind == "ε-DP" and g(fn).relation == "add/remove one record, N public"
        assert "2ε-DP under replace-one" in g(fn).note
    for fn in (gupt.gkm, privgene.pgkm):
        assert g(fn).kind == "ε-DP" and g(fn).relation == "replace-one (n public)"
    for fn in (lloyd.lloyd, privgene.gene, gupt.gkm_analysis):
        assert g(fn).kind == "non-private" and not g(fn).is_dp


def test_gene_declares_only_what_it_reads():
    """Gene runs `generations` rounds: PGkM's x and min_rounds (its N- and ε-dependent round count)
    are not Gene settings; Gene's mutation decay is chosen for its 100-generation horizon (0.97),
    PGkM keeps 0.8 over its 8-13 rounds."""
    assert "x" not in privgene.gene.settings and "min_rounds" not in privgene.gene.settings
    assert {"x", "min_rounds"} <= set(privgene.pgkm.settings)
    assert privgene.gene.settings["mutation_decay"].default == 0.97
    assert privgene.pgkm.settings["mutation_decay"].default == 0.8
    with pytest.raises(DPClustError):
        privgene.gene(np.zeros((10, 2)), 2, None, 0.0, np.random.default_rng(0), {"bounds": [-1, 1], "x": 1.0})
