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
    # run again into the same OUT (a look killed half-way): every written cell is kept, none runs again,
    # and a cell whose file is gone runs again
    before[0].unlink()
    again = subprocess.run(proc.args, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert again.returncode == proc.returncode, again.stderr[-2000:]
    assert f"1 cells run, {len(compared) - 1} kept from an earlier invocation" in again.stdout
    assert json.loads((out / "report.json").read_text())["cells"]["compared"] == compared


def test_a_look_over_several_data_sets_runs_each_cell_on_its_own_data(tmp_path):
    """One look, cells on data sets of different d: every record ran on its cell's own processed file.
    (Until 2026-12-03 one data cache served the whole look, so every cell after the first ran on the
    first cell's data.) A kept cell is checked the same way, so a look run before the fix runs again."""
    from dpclust.data.store import processed_info

    out, data = tmp_path / "out", tmp_path / "data"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--preset", "test", "--algorithm", "su2016.dplloyd",
                           "--cell", "su_synth_k2_d2 ", "--cell", "su_synth_k3_d4 ", "--seeds", "3",
                           "--data-dir", str(data)], capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    seen = {}
    for side in ("before", "after"):
        for path in sorted((out / side / "runs").glob("[0-9]*[0-9].json")):
            record = json.loads(path.read_text())
            info = processed_info(data / "processed" / f"{record['dataset']}.h5")
            assert (record["dataset_sha256"], record["n"], record["d"]) == (info["sha256"], info["n"], info["d"])
            seen[record["dataset"]] = record["d"]
    assert seen == {"su_synth_k2_d2": 2, "su_synth_k3_d4": 4}
    # the same look on two processes (--jobs 2) writes the same runs, wall times aside
    parallel = subprocess.run([*proc.args[:2], str(tmp_path / "out2"), *proc.args[3:], "--jobs", "2"],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert parallel.returncode == proc.returncode, parallel.stderr[-2000:]

    def runs(root):
        return {p.relative_to(root).as_posix(): [{k: v for k, v in r.items() if k != "wall_time_s"}
                                                 for r in json.loads(p.read_text())["runs"]]
                for p in sorted(root.glob("*/runs/[0-9]*[0-9].json"))}

    assert runs(tmp_path / "out2") == runs(out) and runs(out)
    # a kept cell that ran on other data (as before the fix) is not kept: it runs again
    first, second = sorted((out / "before" / "runs").glob("[0-9]*[0-9].json"))
    other = json.loads(second.read_text())
    record = json.loads(first.read_text())
    record.update(dataset_sha256=other["dataset_sha256"], d=other["d"])
    first.write_text(json.dumps(record))
    again = subprocess.run(proc.args, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert again.returncode == proc.returncode, again.stderr[-2000:]
    assert "1 cells run, 1 kept from an earlier invocation" in again.stdout


def test_a_process_started_with_the_legacy_site_folder_releases_raw_floats_and_logs_its_releases(tmp_path):
    """benchmarks/legacy_release_run.sh's hook (benchmarks/legacy_releases/sitecustomize.py): every Python
    process of the run, Snakemake's jobs included, releases fl(value + noise) and says how many it made."""
    code = ("import numpy as np; from dpclust.mechanisms import laplace_mechanism, grid_spacing, laplace_scale;"
            "x = laplace_mechanism(np.zeros(4), 1.0, 1.0, np.random.default_rng(1));"
            "g = grid_spacing(laplace_scale(1.0, 1.0));"
            "print(int(np.all(np.round(x / g) * g == x)))")
    log = tmp_path / "releases.tsv"
    site = REPO / "benchmarks" / "legacy_releases"

    def on_grid(**extra) -> str:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([*extra.values(), str(REPO / "src")]))
        env.pop("DPCLUST_LEGACY_RELEASES", None)
        if extra:
            env["DPCLUST_LEGACY_RELEASES"] = str(log)
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                              check=True).stdout.strip()

    assert on_grid() == "1"                   # today's release: every value on the grid of the noise scale
    assert on_grid(site=str(site)) == "0"     # the legacy one: the raw sum, off the grid
    pid, releases = log.read_text().split("\t")
    assert int(pid) > 0 and int(releases) == 1


def test_list_prices_each_matching_cell_and_runs_nothing(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--preset", "test", "--algorithm", "su2016.dplloyd",
                           "--seeds", "7", "--list"], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    cells = [line.split("\t") for line in lines[:-1]]
    assert cells and all(label.split()[2] == "su2016.dplloyd" for label, _, _ in cells)
    # each cell: price a run, and 2 × 7 runs of it; the total is their sum
    per_cell = [float(cost.split()[0]) for _, _, cost in cells]
    prices = [float(price.split()[0]) for _, price, _ in cells]   # rounded to the ms: a cheap run may be 0
    assert all(p >= 0 for p in prices) and any(p > 0 for p in prices)
    assert lines[-1].startswith(f"{len(cells)} cells, 7 paired seeds each: ")
    assert abs(float(lines[-1].split(": ")[1].split()[0]) - sum(per_cell)) <= len(cells)
    assert not out.exists()


def test_cells_from_a_file_selects_exactly_the_labelled_cells_and_refuses_an_unknown_label(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))

    def listed(*extra) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "out"), "--preset", "test",
                               "--algorithm", "su2016.dplloyd", "--seeds", "2", "--list", *extra],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=300)

    labels = [line.split("\t")[0] for line in listed().stdout.strip().splitlines()[:-1]]
    assert len(labels) >= 3
    chosen = tmp_path / "labels.txt"
    chosen.write_text(f"{labels[0]}\n\n{labels[2]}\n", encoding="utf-8")
    picked = listed("--cells-from", str(chosen))
    assert picked.returncode == 0, picked.stderr[-2000:]
    assert [line.split("\t")[0] for line in picked.stdout.strip().splitlines()[:-1]] == [labels[0], labels[2]]
    chosen.write_text(f"{labels[0]}\nno such cell\n", encoding="utf-8")
    refused = listed("--cells-from", str(chosen))
    assert refused.returncode == 2 and "'no such cell'" in refused.stderr and "--cells-from" in refused.stderr


def test_a_cpu_cap_keeps_the_cheapest_cells_that_fit_and_lists_the_others(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))   # the script imports the harness as `equivalence`
    from dpclust.pipeline import run_prices

    from .conftest import load_benchmark

    script = load_benchmark("grid_release_equivalence")
    prices = {"a": 2.0, "b": 1.0, "c": 1.0, "d": 5.0}          # CPU-s a run, by cell dataset
    monkeypatch.setattr(run_prices, "price_s", lambda job: prices[job])

    def key(ds):
        return ("su2016", "fig1", "g", ds, "su2016.dplloyd", 3, 1.0, "")

    cells = {key(ds): ds for ds in prices}
    # 10 paired seeds: 20 runs a cell, so b and c cost 20 CPU-s each, a 40, d 100
    kept, left = script.under_cap(cells, 10, 80 / 3600)
    assert sorted(kept.values()) == ["a", "b", "c"]
    assert len(left) == 1 and " d " in left[0]
    kept, left = script.under_cap(cells, 10, 79 / 3600)         # a no longer fits after b and c
    assert sorted(kept.values()) == ["b", "c"] and len(left) == 2
    assert script.under_cap(cells, 10, None) == (cells, [])
