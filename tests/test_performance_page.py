"""benchmarks/performance_page.py: docs/PERFORMANCE.md is generated from the benchmarks' own output
(benchmarks/results/), and the workflow logs what each local run cost for it."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dpclust.pipeline import status

from .conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def page():
    return load_benchmark("performance_page")


def _estimate(**kw) -> dict:
    est = {"commit": "abc1234", "preset": "full", "total_cpu_hours": 4.5, "papers_cpu_hours": 2.9,
           "leaderboard_cpu_hours": 1.4, "by_part_cpu_hours": {"su2016": 2.9, "leaderboard": 1.4, "baselines": 0.2},
           "top_algorithms_cpu_hours": {"su2016.eugkm": 1.1}, "top_groups": [
               {"group": "su2016/fig1/su2016.eugkm/s1/15", "cpu_hours": 0.4, "runs": 30}],
           "skipped_datasets": ["image"], "what": "run jobs only"}
    return dict(est, **kw)


def test_the_page_shows_the_estimate_against_its_targets_and_the_measured_runs(page, tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "estimate_full_protocol.json").write_text(json.dumps(_estimate()))
    log = status.record_invocation(tmp_path / "logs", time.time() - 1800, "quick", "0123456789abcdef",
                                   tmp_path / "no-summary.csv", now=time.time())
    page.add_run(log, tmp_path)
    text = page.render(tmp_path)
    assert "commit abc1234" in text and "| total | 4.50 | ≤ 4.0 | no |" in text
    assert "| the five papers | 2.90 | ≤ 3.0 | yes |" in text and "| the leaderboard | 1.40 | ≤ 1.0 | no |" in text
    assert "su2016/fig1/su2016.eugkm/s1/15" in text and "Not timed (data unavailable offline): image." in text
    assert "| quick | 0123456 |" in text and "| 30.0 min |" in text


def test_the_workflow_logs_what_a_run_cost(tmp_path):
    started = time.time() - 60
    out = status.record_invocation(tmp_path, started, "test", "c0ffee", None, now=started + 60)
    got = json.loads(out.read_text())
    assert got["preset"] == "test" and got["commit"] == "c0ffee" and got["wall_s"] == 60.0
    assert got["cpu_s"] > 0 and got["peak_bytes"] > 0 and got["finished_utc"].endswith("Z")


def test_a_file_that_is_not_an_invocation_log_is_refused(page, tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"preset": "quick"}))
    with pytest.raises(SystemExit, match="not a workflow invocation log"):
        page.add_run(bad, tmp_path)


def test_the_committed_page_is_the_generated_one(page):
    """docs/PERFORMANCE.md is exactly what the script makes of benchmarks/results/ (never hand-edited)."""
    if not (REPO / "benchmarks" / "results" / "estimate_full_protocol.json").exists():
        pytest.skip("no estimate committed yet")
    assert (REPO / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8") == page.render()
