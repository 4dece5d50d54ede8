"""The floating-point design of the pipeline's audit (config/papers/audit.yaml `table: floating_point:`,
planned by dpclust.pipeline.audit_plan.floating_point_jobs, run by dpclust.audit.floating_point.release_audit).

* power: the legacy raw-float Laplace sampler (the positive control) is caught far above its claimed ε at
  a modest sample count with a fixed seed, with no event on D (self-check) and none on its outputs
  rounded to a data-independent grid (rounding control); so is the legacy raw-float Gaussian sampler by
  the Gaussian event (the low-order-bit grid of D's value), the table's second control;
* every algorithm the design covers gives no event with the current mechanisms, while the same runs with
  every release made as before the grid do fire (quick sizes in the slow test);
* the quick preset plans the design's jobs with their declared sizes, and adding them changes no other
  audit job's spec;
* the table shows the rows (the control first, "not applicable: <why>"), their verdicts and claims.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from dpclust import mechanisms as M
from dpclust.api import DPClustError
from dpclust.audit import floating_point as F
from dpclust.pipeline.audit_job import run_audit
from dpclust.pipeline.audit_labels import (
    CONTROL_ALGORITHM,
    CONTROL_KIND,
    FLOATING_POINT,
    FLOATING_POINT_DESIGN,
    NOT_APPLICABLE,
)
from dpclust.pipeline.audit_plan import GAUSSIAN_CONTROL_ALGORITHM
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.items.audit import common as I
from dpclust.pipeline.planning import plan

REPO = Path(__file__).resolve().parents[2]
BOX = [-1.0, 1.0]
#: The algorithms the design covers (every other audited algorithm is declared "not applicable: <why>"):
#: with the Laplace event, and with the Gaussian one (SuLQ's Gaussian sums, Nguyen et al.'s NoisyAVG).
GAUSSIAN = {"balcan2017.sulq", "nguyen2021.ours"}
COVERED = {"balcan2017.kvariates", "balcan2017.kvariates_simhash", "balcan2017.sample_aggregate",
           "balcan2017.balcan"} | GAUSSIAN
CONTROLS = {CONTROL_ALGORITHM, GAUSSIAN_CONTROL_ALGORITHM}


@pytest.fixture(scope="module")
def quick_config():
    return load_config(REPO / "config", overrides={"preset": "quick"})


@pytest.fixture(scope="module")
def quick_plan(quick_config):
    return plan(quick_config)


def _fp_jobs(p):
    return {j.algorithm: j for j in p.audits if j.variant == FLOATING_POINT}


# ---------------------------------------------------------------------------------------------
# power on the legacy sampler, self-check, rounding control
# ---------------------------------------------------------------------------------------------
def test_the_design_catches_the_legacy_laplace_sampler_at_a_modest_sample_count():
    res = F.release_audit(F.legacy_laplace_release, [[0.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]], 1, 1.0, 0.0,
                          {"bounds": BOX}, from_D=[0.0], interior=(-1.0, 1.0), samples=300, seed=2012, legacy=False)
    assert res.event.scales == (M.laplace_scale(2.0, 1.0),)          # from the calibration run on D
    assert res.current.events_D == 0 and res.self_check              # no event on D's outputs
    assert res.current.events_Dp > 100 and res.current.direction == "D'/D"
    assert res.current.epsilon_lower_bound > 3.0 > res.epsilon_claimed == 1.0
    assert res.rounding_control and res.rounding_grid == M.grid_spacing(2.0)


def test_the_same_event_gives_nothing_on_the_grid_laplace_mechanism():
    """The control's release through dpclust.mechanisms (the grid) and, on the same streams, as before it."""
    from dpclust.accountant import Accountant
    from dpclust.api import ClusteringResult

    def grid_sum(X, k, epsilon, delta, rng, settings):
        acc = Accountant(epsilon)
        c = np.clip(M.laplace_mechanism(np.asarray(X).sum(axis=0), 2.0, epsilon, rng, acc), -1.0, 1.0)
        return ClusteringResult.from_accountant(np.repeat(c[None], k, 0), acc)

    res = F.release_audit(grid_sum, [[0.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]], 1, 1.0, 0.0, {"bounds": BOX},
                          from_D=[0.0], interior=(-1.0, 1.0), samples=300, seed=2012)
    assert (res.current.events_D, res.current.events_Dp, res.current.epsilon_lower_bound) == (0, 0, 0.0)
    assert res.legacy.events_D == 0 and res.legacy.epsilon_lower_bound > 3.0     # before the grid: caught
    assert res.legacy_releases == 600 and res.self_check and res.rounding_control


def test_legacy_releases_are_the_old_doubles_and_are_restored():
    orig = M.release_on_grid
    x = np.array([0.0, 1.0, 0.25])
    with F.legacy_releases() as calls:
        old = M.laplace_mechanism(x, 1.0, 1.0, np.random.default_rng(3))
    assert M.release_on_grid is orig and calls["release"] == 1
    np.testing.assert_array_equal(old, x + np.random.default_rng(3).laplace(0.0, 1.0, size=3))
    new = M.laplace_mechanism(x, 1.0, 1.0, np.random.default_rng(3))
    assert not F.off_grid(new, M.grid_spacing(1.0)).any() and (np.abs(new - old) <= M.grid_spacing(1.0) / 2).all()
    with F.recorded_laplace_scales() as scales:
        M.laplace_mechanism(x, 2.0, 0.5, np.random.default_rng(0))
    assert scales == [4.0] and M.laplace_noise is not None


def test_release_event_is_exact_on_single_releases():
    b = 4.0
    ev = F.ReleaseEvent((b,), (0.0,), interior=(-1.0, 1.0))
    rng = np.random.default_rng(1)
    from_0 = rng.laplace(0.0, b, size=200)
    from_half = 0.5 + np.random.default_rng(2).laplace(0.0, b, size=200)
    assert not any(ev(np.array([[y, y]])) for y in from_0)                   # never on D's releases
    assert sum(ev(np.array([[y, 0.0]])) for y in from_half) > 20            # often on D′'s, inside the box
    assert not ev(np.array([[1.0, -1.0]]))                                   # clip faces never fire
    with pytest.raises(ValueError):
        F.ReleaseEvent((), (0.0,))


# ---------------------------------------------------------------------------------------------
# every covered algorithm: nothing with the current mechanisms, the legacy ones fire
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", sorted(COVERED))
def test_covered_algorithm_gives_no_event_and_its_legacy_releases_do(quick_plan, algorithm):
    spec = dict(_fp_jobs(quick_plan)[algorithm].spec, samples=150)
    rec = run_audit(spec)
    plain, legacy = rec["plain"], rec["legacy"]
    assert plain["events_D"] == 0 and plain["epsilon_lower_bound"] <= rec["epsilon_claimed"]
    assert plain["events_Dp"] <= 1            # at most a chance quotient (SuLQ's count > 1 branch)
    assert legacy["events_Dp"] > 5 and legacy["events_D"] <= 1
    assert rec["rounding_control"]["ok"] and rec["self_check"]["ok"]
    assert legacy["releases"] > 0 and rec["design"] == FLOATING_POINT_DESIGN


@pytest.mark.slow
def test_quick_floating_point_audits_as_planned(quick_plan):
    """The quick preset's jobs exactly as planned: the control's violation is shown; every covered
    algorithm: no violation, power shown (the legacy floats' bound above the claimed ε)."""
    recs = [run_audit(j.spec) for j in _fp_jobs(quick_plan).values()]
    table = I.aggregate_audit(recs, {})
    verdicts = dict(zip(table["algorithm"], table["verdict"]))
    assert verdicts.pop(CONTROL_ALGORITHM) == I.CONTROL_SHOWN
    assert verdicts.pop(GAUSSIAN_CONTROL_ALGORITHM) == I.CONTROL_SHOWN
    assert verdicts == {a: I.POWER for a in COVERED}
    assert (table["events_D"] == 0).all() and (table["legacy_events_D"] <= 2).all()


# ---------------------------------------------------------------------------------------------
# the plan
# ---------------------------------------------------------------------------------------------
def test_quick_preset_plans_the_design_with_its_declared_sizes(quick_config, quick_plan):
    jobs = _fp_jobs(quick_plan)
    assert set(jobs) == COVERED | CONTROLS
    assert jobs[CONTROL_ALGORITHM].spec["samples"] == 300
    assert jobs[GAUSSIAN_CONTROL_ALGORITHM].spec["samples"] == 1000
    assert all(jobs[a].spec["samples"] == 1000 for a in COVERED)
    for alg, job in jobs.items():
        spec = job.spec
        assert job.path.endswith(f"/audits/{alg}/{FLOATING_POINT_DESIGN}.{FLOATING_POINT}.json")
        assert quick_plan.audit(job.path) is job and spec["bounds"] == BOX and spec["epsilon"] == 1.0
        assert spec["variant"]["name"] == FLOATING_POINT
    assert jobs[CONTROL_ALGORITHM].spec["guarantee"]["kind"] == CONTROL_KIND
    assert jobs[CONTROL_ALGORITHM].spec["function"] == "dpclust.audit.floating_point:legacy_laplace_release"
    assert jobs[GAUSSIAN_CONTROL_ALGORITHM].spec["function"] == "dpclust.audit.floating_point:legacy_gaussian_release"
    assert jobs[GAUSSIAN_CONTROL_ALGORITHM].spec["delta"] == 1e-5
    # the Gaussian event where declared (and only there: the Laplace entries' events are as before)
    assert {a for a, j in jobs.items() if j.spec["event"].get("mechanism") == "gaussian"} == \
        GAUSSIAN | {GAUSSIAN_CONTROL_ALGORITHM}
    assert all(set(j.spec["event"]) == {"from_D", "from_Dp", "every_coordinate"} for a, j in jobs.items()
               if a not in GAUSSIAN | {GAUSSIAN_CONTROL_ALGORITHM})
    # N public held fixed where the algorithm takes it; settings chosen for a single release
    assert jobs["balcan2017.sample_aggregate"].spec["settings"]["public_n"] == 1
    assert jobs["balcan2017.balcan"].spec["settings"]["public_n"] == 1
    assert jobs["balcan2017.sulq"].spec["settings"]["sum_mechanism"] == "gaussian"
    assert jobs["balcan2017.sulq"].spec["guarantee"]["kind"] == "(ε, δ)-DP"
    assert jobs["balcan2017.sulq"].spec["event"]["floor"] == 2.0 ** -12
    assert jobs["balcan2017.balcan"].spec["settings"]["refine_sum_mechanism"] == "laplace"
    ng = jobs["nguyen2021.ours"].spec                 # 256 copies of one record, N = 256 public on both sides
    assert (ng["n"], ng["copies"], ng["settings"]["public_n"], len(ng["records"])) == (256, 256, 256, 1)
    assert ng["guarantee"]["kind"] == "(ε, δ)-DP" and ng["delta"] == 1e-5
    # every other audited algorithm is declared "not applicable: <why>"
    declared = quick_config["paper_configs"]["audit"]["items"]["audit"]["table"][FLOATING_POINT]["algorithms"]
    audited = {j.algorithm for j in quick_plan.audits if not j.variant}
    assert {a for a in audited if isinstance(declared[a], str)} == audited - COVERED
    assert all(declared[a].startswith(f"{NOT_APPLICABLE}: ") for a in audited - COVERED)


@pytest.mark.parametrize("preset", ["quick", "full"])
def test_adding_the_design_changes_no_other_audit_job(preset):
    config = load_config(REPO / "config", overrides={"preset": preset})
    without = copy.deepcopy(config)
    del without["paper_configs"]["audit"]["items"]["audit"]["table"][FLOATING_POINT]
    before = {j.path: j.spec_json for j in plan(without).audits}
    after = {j.path: j.spec_json for j in plan(config).audits}
    assert {p: after[p] for p in before} == before
    assert all(after[p] and json.loads(after[p])["design"] == FLOATING_POINT_DESIGN for p in set(after) - set(before))
    assert len(set(after) - set(before)) == len(COVERED) + len(CONTROLS)


def test_test_preset_plans_no_floating_point_job():
    p = plan(load_config(REPO / "config", overrides={"preset": "test"}))
    assert not _fp_jobs(p)


@pytest.mark.parametrize("mutate, message", [
    (lambda fp: fp["algorithms"].pop("su2016.dplloyd"), "declare the floating-point design"),
    (lambda fp: fp["algorithms"].update({"su2016.dplloyd": "does not apply"}), "not applicable: <why>"),
    (lambda fp: fp["algorithms"]["balcan2017.kvariates"].update(nope=1), "unknown key"),
    (lambda fp: fp["algorithms"]["balcan2017.kvariates"].update(records=[[2.0, 0.0]]), "records"),
    (lambda fp: fp["algorithms"]["balcan2017.kvariates"].pop("from_D"), "from_D"),
    (lambda fp: fp["algorithms"].update({"audit.nope": "not applicable: x"}), "unknown algorithm"),
    (lambda fp: fp["algorithms"]["balcan2017.sulq"].update(mechanism="poisson"), "mechanism"),
    (lambda fp: fp["algorithms"]["balcan2017.sulq"].update(from_D=[0.0]), "from_D"),
    (lambda fp: fp["algorithms"]["balcan2017.sulq"].update(floor=-1.0), "floor"),
    (lambda fp: fp["algorithms"]["nguyen2021.ours"].update(copies=0), "copies"),
    (lambda fp: fp["gaussian_control"].update(from_D=[0.0]), "from_D"),
])
def test_invalid_declaration_is_one_clear_error(quick_config, mutate, message):
    config = copy.deepcopy(quick_config)
    mutate(config["paper_configs"]["audit"]["items"]["audit"]["table"][FLOATING_POINT])
    with pytest.raises(DPClustError, match=message):
        plan(config)


# ---------------------------------------------------------------------------------------------
# the table: rows, verdicts, claims
# ---------------------------------------------------------------------------------------------
def _control_spec(quick_plan, **changes):
    return {**_fp_jobs(quick_plan)[CONTROL_ALGORITHM].spec, "samples": 200, **changes}


def test_table_rows_verdicts_and_claims(quick_plan):
    control = run_audit(_control_spec(quick_plan))
    kv = run_audit(dict(_fp_jobs(quick_plan)["balcan2017.kvariates"].spec, samples=200))
    # the legacy sampler posing as an ε-DP algorithm: a violation with its own ("current") releases
    planted = run_audit(_control_spec(quick_plan, algorithm="test.raw_floats", control=False, name="",
                                      guarantee={"kind": "ε-DP", "note": "", "relation": "add/remove one record"}))
    item = {"table": {FLOATING_POINT: {"algorithms": {"su2016.dplloyd": "not applicable: quotients"}}}}
    table = I.aggregate_audit([kv, planted, control], item)
    assert list(table.columns) == I.COLUMNS and table.iloc[0]["algorithm"] == CONTROL_ALGORITHM
    by = table.set_index("algorithm")
    assert by.loc[CONTROL_ALGORITHM, "verdict"] == I.CONTROL_SHOWN
    assert by.loc["balcan2017.kvariates", "verdict"] == I.POWER
    assert by.loc["balcan2017.kvariates", "name"].endswith(I.FLOATING_POINT_NAME)
    assert by.loc["test.raw_floats", "verdict"] == I.VIOLATION
    assert "0 / 0 (0 / " in " ".join(I.display_table(table)["events on D / D′ (legacy)"])
    checks = I.check_audit(table, item)
    (power,) = [c for c in checks if c.claim.startswith("The floating-point design has power")]
    assert power.holds is True and "events on D 0" in power.detail
    assert [c.holds for c in checks if "raw_floats" in c.claim] == [False]
    assert [c.holds for c in checks if "balcan2017.kvariates" in c.claim] == [True]
    # an algorithm declared "not applicable: <why>" gets a row (its reason as verdict) once it is audited;
    # it makes no claim
    dplloyd = run_audit(dict(next(j for j in quick_plan.audits
                                  if j.algorithm == "su2016.dplloyd" and not j.variant).spec, samples=20))
    table = I.aggregate_audit([dplloyd, control], item)
    na = table[table["verdict"] == "not applicable: quotients"]
    assert len(na) == 1 and na.iloc[0]["name"] == "su2016.dplloyd (su2016)" + I.FLOATING_POINT_NAME
    assert not [c for c in I.check_audit(table, item) if I.FLOATING_POINT_NAME + " (" in c.claim
                and "su2016" in c.claim]
    assert I.display_table(table).iloc[-1]["ε lower bound"] == ""


def test_a_failed_positive_control_fails_its_claim(quick_plan):
    rec = run_audit(_control_spec(quick_plan, samples=4))
    table = I.aggregate_audit([rec], {})
    assert table.iloc[0]["verdict"] == I.CONTROL_NOT_SHOWN
    (check,) = [c for c in I.check_audit(table, {}) if c.claim.startswith("The floating-point design")]
    assert check.holds is False and check.why


def test_render_shows_the_rows(quick_plan, tmp_path):
    rec = run_audit(_control_spec(quick_plan))
    table = I.aggregate_audit([rec], {})
    I.render_audit_table(table, {"title": "Privacy audit"}, str(tmp_path / "t"))
    I.render_audit_figure(table, {"title": "Privacy audit"}, str(tmp_path / "f"))
    md = (tmp_path / "t.md").read_text()
    assert "positive control: violation shown" in md and "events on D / D′" in md
    assert (tmp_path / "f.png").stat().st_size > 0


def test_the_audit_rule_runs_the_design_jobs(quick_plan):
    """workflow/rules/audit.smk: the rule's wildcards match the design's paths, and its args (the spec and
    the code hash) resolve for an algorithm and for the positive control, which is no configured algorithm."""
    import re
    from types import SimpleNamespace

    from dpclust.pipeline.audit_labels import VARIANTS
    from dpclust.pipeline.audit_rules import audit_rule_functions

    results = quick_plan.config["results_dir"]
    rules = audit_rule_functions(quick_plan, results, quick_plan.config["algorithms"])
    for alg in (CONTROL_ALGORITHM, GAUSSIAN_CONTROL_ALGORITHM, "balcan2017.sulq"):
        design = f"{FLOATING_POINT_DESIGN}.{FLOATING_POINT}"
        assert re.fullmatch(r"[A-Za-z0-9_]+\.[A-Za-z0-9_]+", alg)
        assert re.fullmatch(rf"[a-z_]+(\.({'|'.join(VARIANTS)}))?", design)
        args = rules.args(SimpleNamespace(algorithm=alg, design=design))
        assert args.startswith("--spec ") and re.search(r"--code-hash [0-9a-f]{16}$", args)
        assert json.loads(_fp_jobs(quick_plan)[alg].spec_json) == _fp_jobs(quick_plan)[alg].spec


def test_no_algorithm_uses_the_legacy_sampler():
    """The legacy raw-float sampler and the legacy releases live in the audit package only (the audit's
    pipeline modules name them: the control's function, the record's counts)."""
    src = REPO / "src" / "dpclust"
    users = [str(path.relative_to(src)) for path in src.rglob("*.py")
             if "audit" not in str(path.relative_to(src)) and any(
                 name in path.read_text(encoding="utf-8") for name in ("legacy_laplace", "legacy_releases"))]
    assert users == []
