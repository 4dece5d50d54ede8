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
    timed_eps = {json.loads(k.split("|", 1)[1])[-1] for k in cache}
    assert len(timed_eps) > 1                          # more than one ε per sample key was timed
