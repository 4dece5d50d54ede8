"""The final summary a person reads at the end of a run: claim totals, unavailable data and what the
invocation cost (dpclust.status)."""
from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time

from dpclust import status

BURN = "import numpy as np, time\nx = np.ones(80_000_000)\nt = time.process_time()\nwhile time.process_time() - t < 1.2: x.sum()\n"


def _cost(text: str) -> tuple[float, float]:
    m = re.search(r"([\d.]+) CPU-(seconds|minutes|hours) .* largest process ([\d.]+) GB", text)
    assert m, text
    cpu = float(m.group(1)) * {"seconds": 1, "minutes": 60, "hours": 3600}[m.group(2)]
    return cpu, float(m.group(3))


def test_the_cost_line_counts_the_jobs_this_process_ran_and_waited_for():
    started = time.time()
    cpu_before, _ = _cost(status.cost_line(started))
    subprocess.run([sys.executable, "-c", BURN], check=True)    # a job: 1.2 s of CPU, 640 MB resident
    line = status.cost_line(started - 3 * 3600)
    cpu_after, peak_gb = _cost(line)
    assert cpu_after - cpu_before >= 1.0, line
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 < 0.6e9   # so the peak is the job's
    assert peak_gb >= 0.64, line
    assert "3 h 00 min wall" in line


def test_a_cluster_run_names_where_the_jobs_cpu_is():
    line = status.cost_line(time.time() - 90, local=False)
    assert line.startswith("this invocation: 1.5 min wall") and "sacct" in line and "CPU-" not in line


def test_the_final_summary_has_the_claim_totals_the_missing_data_and_the_cost(tmp_path):
    summary = tmp_path / "summary.csv"
    summary.write_text("paper,item,claim,result\np,i,a,holds\np,i,b,holds\np,i,c,not decidable\n")
    (tmp_path / "processed").mkdir()
    (tmp_path / "processed" / "higgs.json").write_text(json.dumps({"available": False, "reason": "offline"}))
    (tmp_path / "processed" / "iris.json").write_text(json.dumps({"available": True}))
    text = status.final_summary(["iris", "higgs"], tmp_path, summary, cost="this invocation: 1.0 min wall")
    assert "3 claim checks: 2 holds, 1 not decidable" in text
    assert "1 dataset(s) unavailable" in text and "higgs" in text and "iris" not in text
    assert text.splitlines()[2] == "  this invocation: 1.0 min wall"
    assert status.claim_totals(tmp_path / "absent.csv") == "no claim summary written"
