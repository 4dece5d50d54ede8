"""benchmarks/cluster_costs.py: it measures planned run blocks as the workflow runs them, and writes
or updates the cost table that sizes SLURM requests (dpclust.pipeline.cluster_resources)."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from dpclust.pipeline import cluster_resources

from .conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "cluster_costs.py"


@pytest.fixture(scope="module")
def costs():
    return load_benchmark("cluster_costs")


def _raw(**over) -> dict:
    row = dict(preset="full", paper="p", item="fig", group="g", dataset="skin", algorithm="a.alg", k="10",
               epsilon="2", seeds="1", wall_s="12.0", cpu_s="11.0", peak_mb="1900.0", status="ok", data="real")
    row.update(over)
    return row


TABLE = """\
# Measured cost of dpclust run jobs (test table)
# 3 jobs of the quick preset(s), each one process with one BLAS thread, two at a time, on a 2-core machine.
# cost: wall seconds (no CPU time recorded; on a loaded machine these err long).
# base_s 1.000  (process start-up: the smallest cost measured)
# base_mb 50  (the smallest peak RSS measured)
paper	algorithm	dataset	k	jobs	seeds_max	cost_max_s	sec_per_seed	peak_mb	data
p	a.alg	skin	10	1	1	30.00	29	700	real
p	a.alg	skin	5	1	1	20.00	19	650	real
q	b.alg	iris	3	1	2	3.00	1	90	real
"""


def test_update_keeps_the_larger_cost_and_peak_adds_rows_and_leaves_the_rest(costs, tmp_path):
    rows = costs.read_raw([_write_raw(tmp_path / "more.tsv", [
        _raw(k="10", cpu_s="11.0", peak_mb="1900"),       # faster than the table's row, but more memory
        _raw(k="10", cpu_s="41.0", peak_mb="800"),        # slower
        _raw(k="50", cpu_s="61.0", peak_mb="2100"),       # a k never measured
    ])])
    text = costs.updated_table(TABLE, rows, note="eps = 2")
    path = tmp_path / "costs.tsv"
    path.write_text(text)
    table = cluster_resources.load_costs(path)
    assert (table.base_s, table.base_mb) == (1.0, 50.0)          # the table's start-up, not the new jobs'
    by_key = {(r.paper, r.algorithm, r.dataset, r.k): r for r in table.rows}
    assert by_key[("p", "a.alg", "skin", 10)].peak_mb == 1900 and by_key[("p", "a.alg", "skin", 10)].sec_per_seed == 40
    assert by_key[("p", "a.alg", "skin", 50)].peak_mb == 2100 and by_key[("p", "a.alg", "skin", 50)].sec_per_seed == 60
    assert by_key[("p", "a.alg", "skin", 5)] == cluster_resources.CostRow("p", "a.alg", "skin", 5, 19.0, 650.0)
    assert by_key[("q", "b.alg", "iris", 3)] == cluster_resources.CostRow("q", "b.alg", "iris", 3, 1.0, 90.0)
    body = list(csv.DictReader([line for line in text.splitlines() if not line.startswith("#")], delimiter="\t"))
    assert {r["k"]: r["jobs"] for r in body if r["algorithm"] == "a.alg"} == {"10": "3", "5": "1", "50": "1"}
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert header[:-1] == TABLE.splitlines()[:5]                # the old header, then what was merged
    assert "+ 3 jobs of the full preset(s) merged in" in header[-1] and "eps = 2" in header[-1]


def test_update_refuses_a_file_that_is_not_a_cost_table(costs):
    with pytest.raises(SystemExit, match="base_s"):
        costs.updated_table("# nothing\nx\ty\n", [dict(_raw(), cost_s=1.0)])


def test_a_new_table_reads_back(costs, tmp_path):
    rows = costs.read_raw([_write_raw(tmp_path / "raw.tsv", [
        _raw(k="5", cpu_s="2.0", seeds="1"), _raw(k="5", cpu_s="9.0", seeds="4", epsilon="0.1")])])
    path = tmp_path / "costs.tsv"
    path.write_text(costs.summary_table(rows))
    table = cluster_resources.load_costs(path)
    assert table.base_s == 2.0
    assert table.rows == (cluster_resources.CostRow("p", "a.alg", "skin", 5, 7.0 / 4, 1900.0),)


@pytest.mark.slow
def test_measure_runs_the_planned_blocks_as_the_workflow_does(tmp_path, mirror):
    """`measure` runs `python -m dpclust.pipeline run --spec` on planned blocks (here two blocks of the test
    preset, one seed each, at one ε) and records a row per block with status ok; blocks on a
    dataset that is unavailable here (no stand-in) are skipped, saying so."""
    from dpclust.data import fetch_source, load_registry, prepare_dataset
    from dpclust.data.processed import write_unavailable

    reg = load_registry(REPO / "config" / "datasets.yaml")
    for source in reg.sources_for("iris"):
        fetch_source(source, raw_dir=tmp_path / "raw", mirror=str(mirror), registry=reg)
    prepare_dataset("iris", raw_dir=tmp_path / "raw", out_path=tmp_path / "processed" / "iris.h5", registry=reg)
    write_unavailable(tmp_path / "processed" / "cifar10_in3c.h5", "cifar10_in3c", "not in this test's mirror")
    raw = tmp_path / "raw.tsv"
    out = subprocess.run([sys.executable, str(SCRIPT), "measure", "--preset", "test", "--match",
                          "balcan2017/fig2/private_(raw|cifar)/[^/]+/balcan2017.sulq", "--epsilon", "1",
                          "--max-seeds", "1", "--data-dir", str(tmp_path / "processed"), "--raw", str(raw)],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "skipped (no data here and no stand-in): cifar10_in3c" in out.stderr
    with open(raw, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) == 2 and {r["k"] for r in rows} == {"2", "4"}
    assert all(r["status"] == "ok" and r["epsilon"] == "1.0" and r["seeds"] == "1" and float(r["cpu_s"]) > 0
               for r in rows), rows
    # the table from these rows covers those blocks: --unmeasured leaves nothing to measure
    table = tmp_path / "costs.tsv"
    assert subprocess.run([sys.executable, str(SCRIPT), "summarize", str(raw), "--out", str(table)],
                          capture_output=True, text=True, cwd=REPO).returncode == 0
    again = subprocess.run([sys.executable, str(SCRIPT), "measure", "--preset", "test", "--match",
                            "balcan2017/fig2/private_raw/[^/]+/balcan2017[.](sulq|balcan)[.]json", "--unmeasured",
                            "--table", str(table), "--data-dir", str(tmp_path / "processed"),
                            "--raw", str(tmp_path / "again.tsv"), "--max-seeds", "1"],
                           capture_output=True, text=True, timeout=300, cwd=REPO)
    assert again.returncode == 0, again.stderr[-2000:]
    with open(tmp_path / "again.tsv", newline="") as fh:
        measured = {(r["algorithm"], r["k"]) for r in csv.DictReader(fh, delimiter="\t")}
    assert measured and all(alg == "balcan2017.balcan" for alg, _ in measured), measured   # sulq: in the table


def _write_raw(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, list(rows[0]), delimiter="\t")
        writer.writeheader()
        writer.writerows(rows)
    return path
