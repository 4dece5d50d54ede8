"""The final summary a person reads at the end of a run: claim totals, unavailable data and what the
invocation cost (dpclust.pipeline.status)."""
from __future__ import annotations

import json
import subprocess
import sys
import time

from dpclust.pipeline import status

BURN = ("import numpy as np, time\nx = np.ones(375_000_000)\nt = time.process_time()\n"
        "while time.process_time() - t < 1.2: x.sum()\n")


MEASURE = f"""
import resource, subprocess, sys
from dpclust.pipeline import status
before = status.invocation_cost()
subprocess.run([sys.executable, "-c", {BURN!r}], check=True)   # a job: 1.2 s of CPU, 3 GB resident
after = status.invocation_cost()
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(before[0], after[0], after[1], own)
"""


def test_the_cost_counts_the_jobs_this_process_ran_and_waited_for():
    out = subprocess.run([sys.executable, "-c", MEASURE], check=True, capture_output=True, text=True)
    cpu_before, cpu_after, peak, own_peak = map(float, out.stdout.split())
    assert cpu_after - cpu_before >= 1.0
    # the largest process is the job (3 GB), not the one waiting for it (which, started from a test
    # worker, carries that worker's peak: Linux keeps the peak across exec)
    assert own_peak < 3.0e9 <= peak


def test_the_cost_line_reads_as_wall_cpu_and_largest_process(monkeypatch):
    for cpu, text in [(12.34, "12.3 CPU-seconds"), (600.0, "10.0 CPU-minutes"), (9000.0, "2.50 CPU-hours")]:
        monkeypatch.setattr(status, "invocation_cost", lambda cpu=cpu: (cpu, 2_400_000_000))
        line = status.cost_line(time.time() - 3 * 3600)
        assert line == (f"this invocation: 3 h 00 min wall, {text} (user + system of Snakemake and its jobs), "
                        "largest process 2.40 GB")
    assert status.cost_line(time.time() - 42).startswith("this invocation: 42 s wall")


def test_a_cluster_run_names_where_the_jobs_cpu_is():
    line = status.cost_line(time.time() - 90, local=False)
    assert line.startswith("this invocation: 1.5 min wall") and "sacct" in line and "CPU-" not in line


def test_the_final_summary_has_the_claim_totals_the_missing_data_and_the_cost(tmp_path):
    summary = tmp_path / "summary.csv"
    summary.write_text("paper,item,claim,result,kind\np,i,a,holds,paper\np,i,b,holds,\np,i,c,not decidable,paper\n"
                       "audit,audit,d,does not hold,audit\n")
    (tmp_path / "processed").mkdir()
    (tmp_path / "processed" / "higgs.json").write_text(json.dumps({"available": False, "reason": "offline"}))
    (tmp_path / "processed" / "iris.json").write_text(json.dumps({"available": True}))
    text = status.final_summary(["iris", "higgs"], tmp_path, summary, cost="this invocation: 1.0 min wall")
    assert "the papers' claims: 3 checked: holds 2, not decidable 1 (and 1 checks of our own" in text
    ours = tmp_path / "ours.csv"       # a run of the pseudo-papers only (a part: papers=[baselines])
    ours.write_text("paper,item,claim,result,kind\nbaselines,table,a,not evaluable,sanity\n")
    assert status.claim_totals(ours) == "the papers' claims: none checked (and 1 checks of our own: bookkeeping, " \
        "sanity, audit, leaderboard)"
    assert "1 dataset(s) unavailable" in text and "higgs" in text and "iris" not in text
    assert text.splitlines()[2] == "  this invocation: 1.0 min wall"
    assert status.claim_totals(tmp_path / "absent.csv") == "no claim summary written"


def test_the_report_tallies_the_papers_claims_only(tmp_path):
    summary = tmp_path / "summary.csv"
    summary.write_text("paper,item,claim,result,kind\nsu2016,i,a,holds,paper\nsu2016,i,b,does not hold,\n"
                       "audit,audit,c,holds,audit\n")
    text = status.report_tallies(summary)
    assert text == "* **su2016**: 2 claims: holds 1, does not hold 1"
    assert status.report_tallies(tmp_path / "absent.csv") == ""
