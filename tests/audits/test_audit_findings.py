"""The quick form's audits surface the findings (run exactly as planned under `preset: quick`):
Lu & Shen's Posterior (exact sums divided by noisy counts) exceeds the ε its runs report; the
honest k-variates++ shows no violation and its attack has power. The audits of Prior (same code
path) and of BLUM, DWORK and SU (initial centres are data records, kept when the noisy count is
below 1; BLUM's needs 2,500 samples per side, minutes) are shown by the quick `audit` item and its
checks, not repeated here (the CI budget)."""
from __future__ import annotations

from pathlib import Path

import pytest

from dpclust.pipeline.audit_job import run_audit
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.items.audit import common as I
from dpclust.pipeline.planning import plan

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick():
    return {(j.algorithm, j.design): j for j in plan(load_config(REPO / "config", overrides={"preset": "quick"})).audits
            if not j.variant}


def _one(quick, algorithm):
    jobs = [j for (a, _), j in quick.items() if a == algorithm]
    assert len(jobs) == 1, f"the quick form audits {algorithm} on one design"
    rec = run_audit(jobs[0].spec)
    g = I.guarantee_label(rec["guarantee"])
    return rec, I.verdict(g, rec["plain"]["epsilon_lower_bound"], rec["halved"]["epsilon_lower_bound"],
                          rec["epsilon_claimed"])


@pytest.mark.parametrize("algorithm", ["lushen2020.posterior"])
def test_lushen_exact_sums_violation_is_shown(quick, algorithm):
    rec, verdict = _one(quick, algorithm)
    assert rec["design"] == "line_sums" and rec["epsilon_budget"] == 10.0
    assert rec["epsilon_claimed"] <= 0.25                       # ε₀ + one ε_step at cap 10
    assert rec["plain"]["epsilon_lower_bound"] > 3.0 and rec["plain"]["p_D"] == 0.0
    assert verdict in (I.VIOLATION, I.NOT_DP_SHOWN)


def test_honest_kvariates_is_not_flagged_and_its_attack_has_power(quick):
    rec, verdict = _one(quick, "balcan2017.kvariates")
    assert rec["plain"]["epsilon_lower_bound"] <= rec["epsilon_claimed"] < rec["halved"]["epsilon_lower_bound"]
    assert verdict == I.POWER
