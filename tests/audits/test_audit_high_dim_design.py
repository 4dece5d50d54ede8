"""The high-dimensional design `high_dim_corner` (dpclust.audit.designs, config/papers/audit.yaml): Balcan
et al.'s authors' calibration at d = 100.

* the design: D = n records at the centre of [0, 1]^100, D' = D and the corner (1, ..., 1) (add/remove;
  replace-one too), statistic = the coordinates of the released centre strictly inside the box;
* what the bound measures (the algorithm's own recovery functions, the authors' last stage's ε/6): the
  authors' release, per-coordinate Lap(Λ/(ε·|S|)) with Λ = √d·h and the exact |S|, exceeds ε; the same
  code with the sum's L1 sensitivity √d·Λ does not (the √d factor), nor the L2 scale with a noisy count
  (the exact count), nor the paper's recovery, even with its noise halved (at d = 100 the L1-calibrated
  noise spreads a record's loss over the 100 coordinates: no power, by construction);
* the pipeline's job (slow): `balcan2017.balcan_authors` as published shows its violation at a small sample
  count with the planned seed; `balcan2017.balcan` (the paper's calibration) shows none, and no power;
* the plan: quick and full plan both jobs with their declared sizes (the test preset none), and adding
  them changes no other audit job's spec.
"""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from dpclust.accountant import Accountant
from dpclust.audit import statistics as audit
from dpclust.audit.designs import ADD_REMOVE, BOUNDS, HIGH_DIMENSION, REPLACE_ONE, design
from dpclust.balcan2017.algorithm import _authors_recovery, _noisy_mean_recovery
from dpclust.pipeline.audit_job import run_audit
from dpclust.pipeline.audit_labels import PUBLIC_N_FIXED
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.items.audit import common as I
from dpclust.pipeline.planning import plan

REPO = Path(__file__).resolve().parents[2]
NAME = "high_dim_corner"
ALGORITHMS = ("balcan2017.balcan", "balcan2017.balcan_authors")
SAMPLES = {"quick": 2000, "full": 10000}
DES = design(NAME)


# ---------------------------------------------------------------------------------------------
# the design
# ---------------------------------------------------------------------------------------------
def test_design_builds_neighbouring_datasets_at_d_100():
    assert DES.dimension == HIGH_DIMENSION == 100 and (DES.n, DES.k) == (1, 1)
    D, Dp = DES.datasets()
    assert D.shape == (1, 100) and Dp.shape == (2, 100)
    np.testing.assert_array_equal(D, np.full((1, 100), 0.5))                   # the box centre
    np.testing.assert_array_equal(Dp, np.vstack([D, np.ones((1, 100))]))        # D and the corner
    D3, Dp3 = DES.datasets(3, REPLACE_ONE)
    assert D3.shape == Dp3.shape == (3, 100)
    np.testing.assert_array_equal(Dp3, np.vstack([D3[:2], np.ones((1, 100))]))
    assert DES.datasets(3, ADD_REMOVE)[1].shape == (4, 100)


def test_statistic_counts_the_unclipped_coordinates():
    c = np.full((1, 100), BOUNDS[1])                      # every coordinate clipped onto a face
    assert DES.stat(c) == 0.0
    c[0, :7] = 0.25
    c[0, 7:10] = BOUNDS[0]
    assert DES.stat(c) == 7.0
    two = np.vstack([c, np.full((1, 100), 0.5)])          # k > 1: the largest count over the centres
    assert DES.stat(two) == 100.0
    with pytest.raises(ValueError):
        DES.stat(np.zeros((1, 2)))                        # a 2-D centre is not this design's


# ---------------------------------------------------------------------------------------------
# what the bound measures: the recovery functions of dpclust.balcan2017.algorithm at ε_s = ε/6
# (the authors' last Lloyd step; with k = 1 the released centre is that step alone)
# ---------------------------------------------------------------------------------------------
D_, DP_ = DES.datasets()
H = 0.5 * (BOUNDS[1] - BOUNDS[0])
LAMBDA = math.sqrt(HIGH_DIMENSION) * H                    # the L2 radius of the box: 5
L1 = HIGH_DIMENSION * H                                   # the L1 sensitivity of a cluster sum: 50 = √d·Λ
EPS_STAGE = 1.0 / 6.0


def _release(kind):
    def mechanism(data, rng):
        Xc = data - 0.5
        labels = np.zeros(data.shape[0], dtype=np.int64)
        acc = Accountant(1.0)
        if kind == "authors":        # per-coordinate Lap(Λ/ε) on the sum, divided by the exact count
            Z = _authors_recovery(Xc, labels, 1, EPS_STAGE, H, LAMBDA, rng, acc, "authors")
        elif kind == "l1_exact":     # the same code with the L1 sensitivity √d·Λ: the √d factor removed
            Z = _authors_recovery(Xc, labels, 1, EPS_STAGE, H, math.sqrt(HIGH_DIMENSION) * LAMBDA, rng, acc, "l1")
        elif kind == "l2_noisy":     # the L2 scale, but a noisy count: the exact count removed
            Z = _noisy_mean_recovery(Xc, labels, 1, EPS_STAGE, H, rng, acc, 0.5, LAMBDA, LAMBDA)
        else:                        # the paper's recovery: L1 sensitivity and a noisy count
            Z = _noisy_mean_recovery(Xc, labels, 1, EPS_STAGE, H, rng, acc, 0.5, LAMBDA, L1)
        return DES.stat(Z + 0.5)
    return mechanism


def _bound(kind, samples=2000):
    return audit.audit(_release(kind), D_, DP_, n_samples=samples, seed=3).epsilon_lower_bound


def test_the_bound_needs_the_sqrt_d_factor_and_the_exact_count():
    """≈ 1.5 s a variant. At the stage's ε/6: the authors' release ≈ 1.9 > 1 (a 1-record vs a 2-record
    cluster: ≈ 1.65 vs 3.3 unclipped coordinates); with the L1 sensitivity (√d = 10 times the noise) ≈ 0.2,
    with a noisy count 0; the paper's recovery 0, and 0 with its noise halved (no power)."""
    authors = _bound("authors")
    assert authors > 1.5
    assert _bound("l1_exact") < 0.5
    assert _bound("l2_noisy") < 0.1
    assert _bound("paper") < 0.1
    with audit.halved_noise() as calls:
        assert _bound("paper") < 0.1
    assert calls["laplace_scale"] > 0


# ---------------------------------------------------------------------------------------------
# the pipeline's jobs
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def configs():
    return {preset: load_config(REPO / "config", overrides={"preset": preset}) for preset in ("quick", "full", "test")}


def _jobs(config):
    return {j.algorithm: j for j in plan(config).audits if j.design == NAME}


@pytest.mark.slow
def test_authors_violation_is_shown_and_the_papers_calibration_shows_none(configs):
    """≈ 25 s: 1,000 samples a side (quick: 2,000) with the planned seeds. The authors' code as published
    (3 Lloyd steps, the released centre the last at ε/6 of its nominal 17ε/12) exceeds the claimed ε = 1;
    the paper's calibration does not, and with every noise scale halved neither (at d = 100 its
    L1-calibrated noise spreads a record's loss over the 100 coordinates): no power on this design."""
    jobs = _jobs(configs["quick"])
    authors = run_audit(dict(jobs["balcan2017.balcan_authors"].spec, samples=1000))
    assert authors["epsilon_claimed"] == 1.0 and authors["n_D"] == 1 and authors["n_Dp"] == 2
    assert len(authors["D"][0]) == 100 and authors["statistic"] == "interior_coordinates"
    assert authors["plain"]["epsilon_lower_bound"] > 1.2
    assert np.mean(authors["plain"]["samples_Dp"]) > 1.6 * np.mean(authors["plain"]["samples_D"])
    assert I.verdict(I.NOT_DP, authors["plain"]["epsilon_lower_bound"], authors["halved"]["epsilon_lower_bound"],
                     authors["epsilon_claimed"]) == I.NOT_DP_SHOWN
    paper = run_audit(dict(jobs["balcan2017.balcan"].spec, samples=1000))
    assert paper["epsilon_claimed"] == pytest.approx(1.0) and paper["halved"]["noise_calls"] > 0
    assert paper["plain"]["epsilon_lower_bound"] <= 1.0 and paper["halved"]["epsilon_lower_bound"] <= 1.0
    assert I.verdict(paper["guarantee"]["kind"], paper["plain"]["epsilon_lower_bound"],
                     paper["halved"]["epsilon_lower_bound"], paper["epsilon_claimed"]) == I.NO_POWER


# ---------------------------------------------------------------------------------------------
# the plan
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["quick", "full"])
def test_the_two_jobs_are_planned_with_their_declared_sizes(configs, preset):
    jobs = _jobs(configs[preset])
    assert set(jobs) == set(ALGORITHMS)
    for alg, job in jobs.items():
        spec = job.spec
        assert job.path.endswith(f"/audits/{alg}/{NAME}.json") and not job.variant
        assert (spec["n"], spec["k"], spec["samples"]) == (1, 1, SAMPLES[preset])
        assert spec["relation"] == ADD_REMOVE and spec["relation_source"].startswith("declared guarantee")
        assert spec["settings"]["public_n"] == 1 and PUBLIC_N_FIXED in spec["relation_source"]
        assert spec["epsilon"] == 1.0
    # each at its configured settings: the authors' code as published, the paper's algorithm as in §7
    assert jobs["balcan2017.balcan_authors"].spec["settings"]["calibration"] == "authors"
    assert jobs["balcan2017.balcan_authors"].spec["settings"]["refine_iterations"] == 3
    assert jobs["balcan2017.balcan_authors"].spec["guarantee"]["kind"] == "not DP as published"
    assert jobs["balcan2017.balcan"].spec["settings"]["calibration"] == "paper_dp"
    assert not _jobs(configs["test"])


@pytest.mark.parametrize("preset", ["quick", "full"])
def test_adding_the_design_changes_no_other_audit_job(configs, preset):
    config = configs[preset]
    without = copy.deepcopy(config)
    params = without["paper_configs"]["audit"]["items"]["audit"]["audit"]["params"]
    for alg in ALGORITHMS:
        params[alg]["designs"] = [d for d in params[alg]["designs"] if d != NAME]
        params[alg]["design_params"].pop(NAME)
    before = {j.path: j.spec_json for j in plan(without).audits}
    after = {j.path: j.spec_json for j in plan(config).audits}
    assert {p: after[p] for p in before} == before
    added = set(after) - set(before)
    assert len(added) == 2 and all(json.loads(after[p])["design"] == NAME for p in added)
