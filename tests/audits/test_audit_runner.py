"""One audit job (dpclust.pipeline.audit_job): the harness catches a planted bug, does not flag an honest
mechanism, reports an attack without power as "no power", and the CLI writes the record."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from dpclust.api import DPClustError
from dpclust.audit.designs import ADD_REMOVE, REPLACE_ONE
from dpclust.pipeline.audit_job import evaluate, run_audit
from dpclust.pipeline.items.audit import common as I

from .fake_algorithms import register

FAKES = register()


def _spec(function, samples=1000, design="corner_outlier", n=1, k=1, relation=ADD_REMOVE, **kw):
    return {"algorithm": f"test.{function}", "function": f"{FAKES}:{function}", "private": True, "settings": {},
            "design": design, "n": n, "k": k, "relation": relation, "epsilon": 1.0, "delta": 0.0,
            "samples": samples, "confidence": 0.95, "seed": 7, **kw}


def _verdict(rec, guarantee="ε-DP"):
    return I.verdict(guarantee, rec["plain"]["epsilon_lower_bound"], rec["halved"]["epsilon_lower_bound"],
                     rec["epsilon_claimed"])


def test_honest_mechanism_is_not_flagged_and_the_attack_has_power():
    rec = run_audit(_spec("honest_sum"))
    assert rec["epsilon_claimed"] == pytest.approx(1.0)
    assert 0.3 < rec["plain"]["epsilon_lower_bound"] <= 1.0
    assert rec["halved"]["epsilon_lower_bound"] > 1.0
    assert rec["halved"]["noise_calls"] == 2 * 1000        # the patch reached every run
    assert _verdict(rec) == I.POWER


def test_planted_bug_is_caught():
    rec = run_audit(_spec("buggy_sum"))
    assert rec["plain"]["epsilon_lower_bound"] > 1.0
    assert _verdict(rec) == I.VIOLATION


def test_an_attack_without_power_is_reported_as_no_power():
    rec = run_audit(_spec("blurred_sum", samples=300))
    assert rec["halved"]["epsilon_lower_bound"] <= 1.0
    assert _verdict(rec) == I.NO_POWER
    assert I.verdict("ε-DP", 0.0, 0.0, 1.0) == I.NO_POWER != I.POWER    # never a pass


def test_not_dp_variant_violation_is_shown_under_replace_one():
    rec = run_audit(_spec("exact_sum", samples=200, design="line_sums", n=20, relation=REPLACE_ONE))
    assert rec["n_D"] == rec["n_Dp"] == 20
    assert rec["plain"]["epsilon_lower_bound"] > 3.0                   # perfectly separated outputs
    assert _verdict(rec, I.NOT_DP) == I.NOT_DP_SHOWN
    assert I.verdict(I.NOT_DP, 0.1, 5.0, 1.0) == I.NOT_DP_NOT_SHOWN


def test_record_is_reproducible_and_evaluable_again():
    a, b = run_audit(_spec("honest_sum", samples=40)), run_audit(_spec("honest_sum", samples=40))
    for rec in (a, b):
        for mode in ("plain", "halved"):
            rec[mode].pop("wall_time_s")
    assert a == b
    again = evaluate(a["plain"]["samples_D"], a["plain"]["samples_Dp"], 0.0, 0.95, a["seed"])
    assert again.epsilon_lower_bound == a["plain"]["epsilon_lower_bound"]
    assert len(a["plain"]["samples_D"]) == len(a["plain"]["samples_Dp"]) == 40
    assert a["n_Dp"] == a["n_D"] + 1 and np.allclose(a["Dp"][-1], [1.0, 1.0])


def test_spec_errors_are_one_clear_line():
    with pytest.raises(DPClustError, match="lacks"):
        run_audit({"algorithm": "x"})
    with pytest.raises(DPClustError, match="unknown audit design"):
        run_audit(_spec("honest_sum", design="nope"))
    with pytest.raises(DPClustError, match="no privacy budget"):
        run_audit(_spec("honest_sum", epsilon=None))


def test_cli_writes_the_record(tmp_path, repo):
    spec = {"algorithm": "balcan2017.kvariates", "function": "dpclust.balcan2017.kvariates:kvariates",
            "private": True, "settings": {}, "design": "corner_outlier", "n": 1, "k": 1, "relation": ADD_REMOVE,
            "epsilon": 1.0, "delta": 0.0, "samples": 20, "confidence": 0.95, "seed": 3}
    out = tmp_path / "a.json"
    proc = subprocess.run([sys.executable, "-m", "dpclust.pipeline", "audit", "--spec", json.dumps(spec),
                           "--code-hash", "abc", "--out", str(out)], capture_output=True, text=True, cwd=repo,
                          env={"PYTHONPATH": str(repo / "src"),
                               "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")})
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(out.read_text())
    assert rec["kind"] == "audit" and rec["code_hash"] == "abc" and rec["samples"] == 20
    assert rec["guarantee"] is None and I.guarantee_label(rec["guarantee"]) == I.UNDECLARED
    bad = subprocess.run([sys.executable, "-m", "dpclust.pipeline", "audit", "--spec", "{}", "--out", str(out)],
                         capture_output=True, text=True, cwd=repo,
                         env={"PYTHONPATH": str(repo / "src"),
                              "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")})
    assert bad.returncode == 2 and "lacks" in bad.stderr
