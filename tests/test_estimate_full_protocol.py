"""benchmarks/estimate_full_protocol.py: which ε it times per sample key, how it interpolates a block's
cost between them, and one small estimate end to end."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "estimate_full_protocol.py"


@pytest.fixture(scope="module")
def estimate():
    return load_benchmark("estimate_full_protocol")


def test_the_smallest_middle_and_largest_epsilon_are_timed(estimate):
    grid = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
    assert estimate._epsilon_points(grid, 3) == [0.05, 0.5, 2.0]
    assert estimate._epsilon_points(grid, 2) == [0.05, 2.0]
    assert estimate._epsilon_points(grid, 1) == [0.5]                  # the middle one, as before
    assert estimate._epsilon_points(grid, 10) == grid                  # never more than there are
    assert estimate._epsilon_points([1.0], 3) == [1.0]
    assert estimate._epsilon_points([None], 3) == [None]               # a non-private block
    blocks = [0.1, 0.1, 0.1, 0.1, 0.5, 1.0, 2.0]                      # one ε per block: the middle block's
    assert estimate._epsilon_points(blocks, 1) == [0.1]
    assert estimate._epsilon_points(blocks, 3) == [0.1, 2.0]


def test_a_block_costs_what_its_sampled_neighbours_say_linearly_in_log_epsilon(estimate):
    timed = {0.1: 1.0, 1.0: 3.0, 10.0: 30.0}
    assert estimate._interpolate(0.1, timed) == pytest.approx(1.0)
    assert estimate._interpolate(1.0, timed) == pytest.approx(3.0)
    assert estimate._interpolate(10 ** -0.5, timed) == pytest.approx(2.0)      # halfway in log ε
    assert estimate._interpolate(10 ** 0.5, timed) == pytest.approx(16.5)
    assert estimate._interpolate(0.01, timed) == pytest.approx(1.0)            # outside: the nearest end
    assert estimate._interpolate(None, {None: 4.0}) == 4.0
    assert estimate._interpolate(0.3, {1.0: 2.5}) == 2.5                       # one sample: used as is


@pytest.mark.slow
def test_one_paper_is_estimated_from_timings_at_each_sampled_epsilon(tmp_path, mirror):
    out = tmp_path / "groups.json"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--mirror", str(mirror), "--preset", "test",
                           "--paper", "su2016", "--budget-s", "0", "--data-dir", str(tmp_path / "data"),
                           "--json", str(out), "--cache", str(tmp_path / "cache.json")],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "preset test (su2016):" in proc.stdout
    rows = json.loads(out.read_text())
    assert rows and {r["group"][0] for r in rows} == {"su2016"}
    assert all(r["cpu_s"] > 0 for r in rows if not r["skipped"])
    cache = json.loads((tmp_path / "cache.json").read_text())
    timed_eps = {json.loads(k.split("|", 2)[2])[-1] for k in cache}   # "cpu2|<code>|<key>"
    assert len(timed_eps) > 1                          # more than one ε per sample key was timed


@pytest.mark.slow
def test_groups_that_read_recorded_runs_are_timed_with_them(tmp_path, mirror):
    """Lu & Shen's baselines take their budget from recorded runs of Algorithm 1 (`reference_runs`):
    the estimate records those runs first, so the baselines are timed as the workflow runs them."""
    out = tmp_path / "groups.json"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--mirror", str(mirror), "--preset", "test",
                           "--paper", "lushen2020", "--budget-s", "0", "--epsilon-points", "1",
                           "--data-dir", str(tmp_path / "data"), "--json", str(out)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(out.read_text())
    timed = {r["group"][2] for r in rows if not r["skipped"] and r["cpu_s"] > 0}
    assert {"lushen2020.su", "lushen2020.privgene"} <= timed


def test_the_whole_protocol_estimate_is_written_with_its_parts(estimate, tmp_path):
    rows = [{"group": ["su2016", "fig1", "su2016.eugkm", "s1", 15], "cpu_s": 3600.0, "seeds": 10},
            {"group": ["balcan2017", "fig2", "balcan2017.balcan", "s1", 4], "cpu_s": 1800.0, "seeds": 5},
            {"group": ["leaderboard", "table", "su2016.eugkm", "iris", 3], "cpu_s": 7200.0, "seeds": 20},
            {"group": ["baselines", "table", "baselines.lloyd", "image", 3], "cpu_s": 0.0, "seeds": 3,
             "skipped": True},
            {"group": ["baselines", "table", "baselines.lloyd", "iris", 3], "cpu_s": 360.0, "seeds": 3}]
    got = estimate.write_summary(tmp_path / "r" / "e.json", "full", rows, 10, 4, top=2)
    assert json.loads((tmp_path / "r" / "e.json").read_text()) == got
    assert got["total_cpu_hours"] == 3.6 and got["papers_cpu_hours"] == 1.5
    assert got["leaderboard_cpu_hours"] == 2.0 and got["by_part_cpu_hours"]["baselines"] == 0.1
    assert got["by_item_cpu_hours"] == {"su2016/fig1": 1.0, "balcan2017/fig2": 0.5, "leaderboard/table": 2.0,
                                        "baselines/table": 0.1}
    assert got["top_algorithms_cpu_hours"] == {"su2016.eugkm": 3.0, "balcan2017.balcan": 0.5}
    assert [g["group"] for g in got["top_groups"]] == ["leaderboard/table/su2016.eugkm/iris/3",
                                                         "su2016/fig1/su2016.eugkm/s1/15"]
    assert got["commit"] and got["skipped_datasets"] == ["image"]
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps(rows))
    again = tmp_path / "again.json"
    assert estimate.main(["--summarize", str(groups), "--summary", str(again)]) == 0
    assert {k: v for k, v in json.loads(again.read_text()).items() if k not in ("timing_samples", "timed_now")} \
        == {k: v for k, v in estimate.write_summary(tmp_path / "x.json", "full", rows).items()
            if k not in ("timing_samples", "timed_now")}


def test_the_committed_estimate_names_its_commit_and_parts():
    """benchmarks/results/estimate_full_protocol.json is what the last whole-protocol estimate printed."""
    path = REPO / "benchmarks" / "results" / "estimate_full_protocol.json"
    if not path.exists():
        pytest.skip("no whole-protocol estimate committed yet")
    got = json.loads(path.read_text())
    assert {"commit", "total_cpu_hours", "papers_cpu_hours", "leaderboard_cpu_hours"} <= set(got)
    assert got["total_cpu_hours"] == pytest.approx(sum(got["by_part_cpu_hours"].values()), abs=0.01)
