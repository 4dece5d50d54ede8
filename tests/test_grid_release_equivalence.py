"""benchmarks/grid_release_equivalence.py: the grid release against the legacy one, paired by seed at one
commit, through the equivalence harness."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "grid_release_equivalence.py"


def _costs(path: Path) -> list[float]:
    return [run["diagnostics"]["cost_kmeans"] for run in json.loads(path.read_text())["runs"]]


def test_each_cell_runs_its_seeds_with_the_legacy_release_and_the_grid_and_the_harness_compares_them(tmp_path, mirror):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--mirror", str(mirror), "--preset", "test",
                           "--algorithm", "su2016.dplloyd", "--algorithm", "baselines.kmeanspp", "--cell", "s1",
                           "--seeds", "4", "--data-dir", str(tmp_path / "data"), "--markdown", str(tmp_path / "r.md")],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "paired by seed" in proc.stdout and (tmp_path / "r.md").exists()
    report = json.loads((out / "report.json").read_text())
    compared = report["cells"]["compared"]
    # DPLloyd releases noisy sums and counts through the grid: its cells ran; k-means++ releases nothing
    assert compared and all("su2016.dplloyd" in c["label"] for c in compared)
    assert "without a grid release" in proc.stdout and "0 without" not in proc.stdout
    before, after = sorted((out / "before" / "runs").glob("*.json")), sorted((out / "after" / "runs").glob("*.json"))
    assert [p.name for p in before] == [p.name for p in after]
    b, a = _costs(before[0]), _costs(after[0])
    assert len(b) == len(a) == 4 and b != a                              # the release's last bits differ
    assert all(abs(x - y) <= 0.05 * abs(x) for x, y in zip(b, a))        # the same noise draws, paired
