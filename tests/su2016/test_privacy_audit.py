"""Empirical privacy audits of DPLloyd's iteration (joint and su_tops split budgets), GkM's Eq. (3)
release and EUGkM's synopsis (every cell) on neighbouring datasets, and of the not-DP variant
DPLloyd with `init: random_points` (its audit rejects the claimed ε; the sphere-packing DPLloyd passes).

Each audit must pass (lower bound ≤ the claimed ε) with the real noise and FAIL (lower bound > ε)
when `dpclust.audit.statistics.halved_noise()` halves every noise scale. The statistics are likelihood-ratio
style events for the neighbouring pair, so audits of 6,000-10,000 samples have the power to see a factor 2.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpclust.accountant import Accountant
from dpclust.audit import statistics as audit
from dpclust.su2016 import dplloyd, eugkm, gupt

EPS = 1.0


def _dplloyd_step(data, rng):
    """One DPLloyd iteration, k = 1, d = 1, domain [-1, 1] (r = 1): released (count, sum)."""
    st = dict(dplloyd.dplloyd.settings.defaults(), bounds=[-1.0, 1.0], init_seed=0)
    _, counts, sums = dplloyd.noisy_lloyd_step(data, np.zeros((1, 1)), (EPS, None), Accountant(EPS), rng,
                                               1.0, (-1.0, 1.0), st, "audit")
    # event "count ≥ 21 and sum ≥ 1" (the region where D' = D + {1.0} is most likely)
    return min(counts[0] - 20.0, sums[0, 0])


D_LLOYD = np.zeros((20, 1))
DP_LLOYD = np.vstack([D_LLOYD, [[1.0]]])


def _eug_cell(data, rng):
    """Noisy weight of the cell holding (0.55, 0.55) in the EUG synopsis (every cell released)."""
    st = dict(eugkm.eugkm.settings.defaults(), bounds=[-1.0, 1.0], init_seed=0, theta=1.0)
    syn = eugkm.synopsis(data, EPS, rng, st, Accountant(EPS))
    assert syn.info["cells_per_dim"] == 10 and syn.weights.size == 100   # same grid on D and D'
    hit = np.abs(syn.grid.centres() - 0.5).max(axis=1) < 0.1 + 1e-9       # cell [0.4, 0.6)^2, centre (0.5, 0.5)
    return float(syn.weights[hit].sum())


def _dplloyd_step_su_tops(data, rng):
    """The su_tops split path of the same iteration: counts Lap(1/ε_0), sums Lap(r/ε_s), ε_0 + ε_s = ε."""
    T, e0, es = dplloyd.su_tops_schedule(1.0, 20, 1, 1, 0.225)     # one iteration's split, rescaled to ε
    assert T * (e0 + es) == pytest.approx(1.0) and e0 < es
    st = dict(dplloyd.dplloyd.settings.defaults(), bounds=[-1.0, 1.0], init_seed=0)
    _, counts, sums = dplloyd.noisy_lloyd_step(data, np.zeros((1, 1)), (EPS * T * e0, EPS * T * es), Accountant(EPS),
                                               rng, 1.0, (-1.0, 1.0), st, "audit")
    return min(counts[0] - 20.0, sums[0, 0])


def _gkm_eq3(data, rng):
    """GkM's Eq. (3) release (k = d = 1) on block outputs `data` (ℓ,) with the range fixed to [0, 1]."""
    cents = np.asarray(data, dtype=float).reshape(-1, 1, 1)
    out = gupt.noisy_average(cents, np.zeros((1, 1)), np.ones((1, 1)), EPS, rng, Accountant(EPS), cents.shape[0])
    return float(out[0, 0])


D_GKM = np.zeros(10)                                           # ℓ = 10 block outputs
DP_GKM = np.r_[np.zeros(9), 1.0]                               # one block (one tuple's block) changed

D_EUG = np.full((95, 2), -0.95)                                # N = 95 → M = 95, m = 10
DP_EUG = np.vstack([D_EUG, [[0.55, 0.55]]])                    # N = 96 → m = 10; the new point's cell is empty in D


@pytest.mark.slow
@pytest.mark.parametrize("mech,D,Dp,n", [(_dplloyd_step, D_LLOYD, DP_LLOYD, 10_000),
                                         (_dplloyd_step_su_tops, D_LLOYD, DP_LLOYD, 10_000),
                                         (_gkm_eq3, D_GKM, DP_GKM, 10_000),
                                         (_eug_cell, D_EUG, DP_EUG, 6_000)],
                         ids=["dplloyd_iteration", "dplloyd_su_tops_split", "gkm_eq3", "eugkm_synopsis"])
def test_audit_passes_and_catches_halved_noise(mech, D, Dp, n):
    res = audit.audit(mech, D, Dp, n_samples=n, seed=1)
    assert res.epsilon_lower_bound <= EPS, res
    with audit.halved_noise() as calls:
        halved = audit.audit(mech, D, Dp, n_samples=n, seed=1)
    assert sum(calls.values()) > 0
    assert halved.epsilon_lower_bound > EPS, halved


def _dplloyd_released_record(init):
    """DPLloyd (k = 2, one iteration) on data in [−1, 1]: statistic 1 if a released centre equals the
    record 0.9 exactly — a record of D' = D + {0.9}, absent from D — else 0."""
    def mech(data, rng):
        # random_points: a fresh draw of k records per run; sphere packing: data independent, one set
        seed = int(rng.integers(2 ** 62)) if init == "random_points" else 0
        st = dict(dplloyd.dplloyd.settings.defaults(), bounds=[-1.0, 1.0], init=init, iterations=1, init_seed=seed)
        res = dplloyd.dplloyd(data, 2, EPS, 0.0, rng, st)
        return float(np.any(res.centers == 0.9))
    return mech


D_REC = np.full((20, 1), -0.9)
DP_REC = np.vstack([D_REC, [[0.9]]])                            # add one record


@pytest.mark.slow
def test_dplloyd_random_points_init_is_not_dp_and_the_audit_rejects_its_epsilon():
    """`init: random_points` starts from k records and charges nothing for them: when the noisy count
    of a cluster stays below min_count its centre is released unchanged — a record of the data. The
    event "a centre equals 0.9" has probability 0 on D and > 0 on D' = D + {0.9}: the audit's lower
    bound exceeds the claimed ε. The sphere-packing DPLloyd (data-independent starts) passes."""
    from dpclust.settings import guarantee_of

    assert not guarantee_of(dplloyd.dplloyd, {"init": "random_points"}).is_dp
    assert guarantee_of(dplloyd.dplloyd, {"init": "sphere_packing"}).is_dp
    bad = audit.audit(_dplloyd_released_record("random_points"), D_REC, DP_REC, n_samples=2000, seed=3)
    assert bad.epsilon_lower_bound > EPS, bad
    good = audit.audit(_dplloyd_released_record("sphere_packing"), D_REC, DP_REC, n_samples=2000, seed=3)
    assert good.epsilon_lower_bound <= EPS, good


# --- the public N of "add/remove one record, N public" (EUGkM, the hybrid, DPLloyd su_tops) ----------
def _n_dependent(function, X, settings, k=1):
    info = function(X, k, EPS, 0.0, np.random.default_rng(0), dict(settings, bounds=[0.0, 1.0], init_seed=1)).info
    return {key: info[key] for key in ("cells_total", "epsilon_threshold", "iterations_run") if key in info}


def test_tops_dplloyd_takes_the_public_n():
    """DPLloyd's su_tops allocation sets T from N (declared "add/remove one record, N public"): with
    `public_n` T is the same for D and D ∪ {x}, unset it is the data's size. (The configured N-public
    algorithms: tests/test_public_size.py.)"""
    assert "public_n" in dplloyd.dplloyd.settings
    X = np.random.default_rng(4).uniform(0.2, 0.5, size=(20, 2))
    Xp = np.vstack([X, [[0.9, 0.1]]])
    tops = {"allocation": "su_tops"}
    assert (_n_dependent(dplloyd.dplloyd, X, dict(tops, public_n=20))
            == _n_dependent(dplloyd.dplloyd, Xp, dict(tops, public_n=20)))
    assert _n_dependent(dplloyd.dplloyd, Xp, tops) == _n_dependent(dplloyd.dplloyd, Xp, dict(tops, public_n=21))


def test_eugkm_audit_with_the_public_n_finds_no_violation_and_with_the_data_size_shows_the_leak():
    """The full audit's `line_sums` design (n = 20, add/remove): EUGkM with N held fixed releases the
    one cell's centre on both neighbours (no violation; no power, as at the full audit's 1,000 samples),
    while N read from each dataset (the audit's planned `n_from_data` variant) gives 1 cell vs 2 x 2
    and the diagonal offset separates them (ε ≥ 3 at 200 samples; ≥ 4.9 at 1,000 in the full audit
    before `public_n`)."""
    from pathlib import Path

    from dpclust.pipeline.audit_job import run_audit
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    config = load_config(Path(__file__).resolve().parents[2] / "config")
    jobs = {j.variant: j for j in plan(config).audits if (j.algorithm, j.design) == ("su2016.eugkm", "line_sums")}
    spec = dict(jobs[""].spec, samples=200)
    assert spec["settings"]["public_n"] == spec["n"] == 20
    fixed = run_audit(spec)
    assert fixed["plain"]["epsilon_lower_bound"] == 0.0 and fixed["plain"]["p_D"] == fixed["plain"]["p_Dp"]
    variant = dict(jobs["n_from_data"].spec, samples=200)
    assert variant["settings"]["public_n"] is None                       # N read from each dataset
    assert {k: v for k, v in variant.items() if k not in ("settings", "relation_source", "seed")} == \
        {k: v for k, v in spec.items() if k not in ("settings", "relation_source", "seed")}
    from_data = run_audit(variant)
    assert from_data["plain"]["epsilon_lower_bound"] > 3.0
    assert {from_data["plain"]["p_D"], from_data["plain"]["p_Dp"]} == {0.0, 1.0}
