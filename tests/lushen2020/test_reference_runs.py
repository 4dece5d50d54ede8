"""Lu & Shen §7.1's ε_ref from the recorded Algorithm 1 runs of the same (dataset, k, ε, seed)
(run group key `reference_runs`): the library reads them, the runner passes them, the planner makes
them planned inputs and refuses cells they do not cover."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dpclust.api import DPClustError
from dpclust.lushen2020.baselines import FRESH, RECORDED, reference_total
from dpclust.pipeline.configuration import load_config, resolve_algorithm
from dpclust.pipeline.planning import plan
from dpclust.pipeline.resolve import import_object
from dpclust.pipeline.run_job import ReferenceRuns, run_batch
from dpclust.pipeline.run_plan import link_reference_runs


@pytest.fixture(scope="module")
def config():
    return load_config(overrides={"preset": "test"})


def _settings(config, name="lushen2020.blum"):
    return dict(resolve_algorithm(config, name)["settings"], bounds=[0.0, 1.0], init_seed=3)


def _recorded(settings, totals):
    """reference_runs as the runner gives them: one recorded run per strategy."""
    ref = dict(settings["reference"], bounds=[0.0, 1.0])
    return {strategy: {"settings": dict(ref, strategy=strategy), "iterations": int(total * 10) + 1,
                       "info": {"strategy": strategy, "epsilon_total_bottom_up": total,
                                "sampling_iterations": int(total * 10)}}
            for strategy, total in totals.items()}


def test_recorded_runs_give_the_larger_total_and_draw_nothing(config):
    settings = _settings(config)
    settings["reference_runs"] = _recorded(settings, {"posterior": 1.3, "prior": 0.9})
    rng = np.random.default_rng(7)
    state = json.dumps(rng.bit_generator.state)
    total, info = reference_total(np.zeros((5, 2)), 2, 10.0, rng, settings)
    assert total == 1.3 and info["reference_strategy"] == "posterior"
    assert info["reference_sampling_iterations"] == 13 and info["reference_iterations"] == 14
    assert info["epsilon_reference_prior"] == 0.9 and info["reference_source"] == RECORDED
    assert json.dumps(rng.bit_generator.state) == state   # no fresh Algorithm 1 run


def test_without_recorded_runs_the_library_runs_algorithm1_itself(config):
    settings = _settings(config)
    X = np.random.default_rng(0).uniform(size=(60, 2))
    total, info = reference_total(X, 3, 20.0, np.random.default_rng(1), settings)
    assert info["reference_source"] == FRESH and 0 < total <= 20.0


def test_a_recorded_run_of_other_settings_is_refused(config):
    settings = _settings(config)
    recorded = _recorded(settings, {"posterior": 1.0, "prior": 1.0})
    recorded["prior"]["settings"]["tol"] = 0.5          # a setting that changes Algorithm 1's total
    with pytest.raises(DPClustError, match="other settings.*tol"):
        reference_total(np.zeros((5, 2)), 2, 10.0, np.random.default_rng(0), dict(settings, reference_runs=recorded))
    recorded = _recorded(settings, {"posterior": 1.0})
    with pytest.raises(DPClustError, match="no recorded 'prior' run"):
        reference_total(np.zeros((5, 2)), 2, 10.0, np.random.default_rng(0), dict(settings, reference_runs=recorded))


def test_the_planner_makes_the_recorded_runs_inputs_of_the_baselines(config):
    the_plan = plan(config)
    batches = {(b.item, b.group, b.data, b.algorithm): b for b in the_plan.batches if b.paper == "lushen2020"}
    for (item, group, data, algorithm), batch in batches.items():
        reads = algorithm in ("lushen2020.su", "lushen2020.dwork", "lushen2020.blum", "lushen2020.privgene")
        assert bool(batch.reference_files) == (reads and item == "fig7"), (group, data, algorithm)
        for path in batch.reference_files:
            other = the_plan.run(path)
            assert other.algorithm in ("lushen2020.posterior", "lushen2020.prior") and other.data == data
    su = batches[("fig7", "baselines", "iris", "lushen2020.su")]
    assert len(su.reference_files) == 2 and '"reference_runs"' in su.spec_json


def test_a_cell_the_recorded_runs_do_not_cover_is_one_clear_error(config):
    jobs = [job for job in plan(config).item("lushen2020", "fig7").runs
            if job.algorithm != "lushen2020.prior" or job.seed_start > 0]
    with pytest.raises(DPClustError, match="reference_runs 'prior' needs the runs of lushen2020.prior"):
        link_reference_runs("lushen2020/fig7", jobs)


def test_the_runner_passes_each_seed_its_own_recorded_runs(config, prepared_from_mirror):
    iris_path = str(prepared_from_mirror("iris"))
    the_plan = plan(config)
    su = next(b for b in the_plan.batches if b.item == "fig7" and b.algorithm == "lushen2020.su" and b.data == "iris")
    references = [record for path in su.reference_files
                  for record in run_batch(the_plan.run(path).spec, {"iris": iris_path})["records"]]
    out = run_batch(su.spec, {"iris": iris_path}, references=references)
    index = ReferenceRuns(references)
    for record in out["records"]:
        for run in record["runs"]:
            totals = {strategy: index.runs[(f"lushen2020.{strategy}", "iris", record["k"], record["epsilon"],
                                            run["seed"])]["info"]["epsilon_total_bottom_up"]
                      for strategy in ("posterior", "prior")}
            info = run["diagnostics"]["info"]
            assert info["epsilon_reference"] == max(totals.values())
            assert info["reference_source"] == RECORDED
    with pytest.raises(DPClustError, match="no recorded run of lushen2020.posterior"):
        run_batch(su.spec, {"iris": iris_path}, references=[])
    # the library function alone (no runner) still works, from fresh runs
    entry = resolve_algorithm(config, "lushen2020.su")
    X = np.random.default_rng(0).uniform(size=(40, 2))
    res = import_object(entry["function"])(X, 3, 20.0, 0.0, np.random.default_rng(0),
                                           dict(entry["settings"], bounds=[0.0, 1.0], init_seed=1))
    assert res.info["reference_source"] == FRESH
