"""`python -m dpclust.pipeline run`: determinism, run records, and one clear error per bad input."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpclust.data import prepare_dataset, write_processed
from dpclust.pipeline.cli import main
from dpclust.pipeline.records import flatten_run

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config"


@pytest.fixture(scope="module")
def iris_h5(prepared_from_mirror):
    return prepared_from_mirror("iris")


def _run(args, capsys):
    code = main(["run", "--config-dir", str(CONFIG), *args])
    return code, capsys.readouterr().err


BASE = ["--dataset", "iris", "--algorithm", "baselines.lloyd", "--k", "3", "--epsilon", "none",
        "--transform", "minmax_01"]


def test_record_is_deterministic_apart_from_timing(iris_h5, tmp_path, capsys):
    outs = []
    for name in ("a.json", "b.json"):
        code, err = _run([*BASE, "--data", str(iris_h5), "--seed", "4", "--repetitions", "3",
                          "--out", str(tmp_path / name)], capsys)
        assert code == 0, err
        rec = json.loads((tmp_path / name).read_text())
        for run in rec["runs"]:
            run.pop("wall_time_s")
        outs.append(rec)
    assert outs[0] == outs[1]
    rec = outs[0]
    assert rec["status"] == "ok" and rec["seeds"] == [4, 5, 6] and rec["n"] == 150 and rec["d"] == 4
    for key in ("settings", "git_commit", "versions", "dpclust_version", "bounds"):
        assert key in rec
    assert set(rec["runs"][0]) == {"seed", "init_seed", "released", "diagnostics"}  # wall_time_s popped above
    assert set(rec["runs"][0]["released"]) == {"centers"}  # what the mechanism outputs, nothing else
    run = flatten_run(rec["runs"][0])
    # non-private: no ε is reported (null, not 0), and the record says why
    assert run["epsilon_spent"] is None and run["delta_spent"] is None
    assert rec["epsilon_spent_note"].startswith("non-private")
    assert len(run["centers"]) == 3 and run["iterations"] >= 1
    assert run["nicv"] == pytest.approx(run["cost_kmeans"] / 150)


def test_block_layout_does_not_change_results(iris_h5, tmp_path, capsys):
    _run([*BASE, "--data", str(iris_h5), "--seed", "0", "--repetitions", "4",
          "--out", str(tmp_path / "all.json")], capsys)
    _run([*BASE, "--data", str(iris_h5), "--seed", "2", "--repetitions", "2",
          "--out", str(tmp_path / "tail.json")], capsys)
    full = json.loads((tmp_path / "all.json").read_text())["runs"][2:]
    tail = json.loads((tmp_path / "tail.json").read_text())["runs"]
    assert [r["released"]["centers"] for r in full] == [r["released"]["centers"] for r in tail]


@pytest.mark.parametrize("change, message", [
    ({"--k": "151"}, "exceeds the number of points"),
    ({"--k": "0"}, "at least 1"),
    ({"--epsilon": "0"}, "epsilon"),
    ({"--epsilon": "-1"}, "epsilon"),
    ({"--delta": "1"}, "delta"),
    ({"--delta": "-0.1"}, "delta"),
    ({"--dataset": "irs"}, "irs"),
    ({"--algorithm": "baselines.nope"}, "unknown algorithm"),
    ({"--transform": "zscore"}, "zscore"),
])
def test_bad_input_is_one_clear_error_and_no_output(iris_h5, tmp_path, capsys, change, message):
    args = dict(zip(BASE[::2], BASE[1::2]))
    args.update(change)
    flat = [x for kv in args.items() for x in kv]
    out = tmp_path / "out.json"
    code, err = _run([*flat, "--data", str(iris_h5), "--out", str(out)], capsys)
    assert code == 2
    assert message in err and err.count("\n") == 1
    assert not out.exists() and not list(tmp_path.glob(".tmp-*"))


def test_nan_in_data_is_rejected(tmp_path, capsys):
    X = np.random.default_rng(0).random((20, 4))
    X[3, 1] = np.nan
    path = tmp_path / "iris.h5"
    with pytest.raises(Exception, match="(?i)nan"):
        write_processed(path, X, None, {"name": "iris", "source": "test", "sha256": "", "parser_version": 0})
    assert not path.exists()


def test_help_explains_everything():
    out = subprocess.run([sys.executable, "-m", "dpclust.pipeline", "run", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for word in ("--dataset", "--algorithm", "--epsilon", "--delta", "--seed", "--param", "--out", "run record"):
        assert word in out.stdout


def _unavailable_h5(tmp_path):
    from dpclust.data.processed import write_unavailable

    path = tmp_path / "iris.h5"
    write_unavailable(path, "iris", "source unreachable offline")
    return path


def test_unavailable_dataset_writes_the_record_and_exits_3(tmp_path, capsys):
    """A run that could not be done is an error for a user (exit 3, one line on stderr), but its
    record is still written: figures draw a 'data unavailable' panel from it."""
    out = tmp_path / "out.json"
    code, err = _run([*BASE, "--data", str(_unavailable_h5(tmp_path)), "--out", str(out)], capsys)
    assert code == 3
    assert err.count("\n") == 1 and "data_unavailable" in err and "source unreachable offline" in err
    assert "--allow-unavailable" in err
    rec = json.loads(out.read_text())
    assert rec["status"] == "data_unavailable" and rec["runs"] == [] and "unreachable" in rec["reason"]


def test_allow_unavailable_exits_0_with_the_same_record(tmp_path, capsys):
    """What the Snakemake workflow passes: the job succeeds and the record says data_unavailable."""
    out = tmp_path / "out.json"
    code, err = _run([*BASE, "--data", str(_unavailable_h5(tmp_path)), "--out", str(out),
                      "--allow-unavailable"], capsys)
    assert code == 0 and err == ""
    assert json.loads(out.read_text())["status"] == "data_unavailable"


def test_a_refused_run_is_recorded_with_its_reason_and_is_not_a_failure(iris_h5, tmp_path, capsys):
    """An algorithm that declines a run at a documented limit of its inputs (`dpclust.api.Refused`:
    EUGkM's grid above `max_grid_cells`) gets a `refused` record with the reason and no runs; the
    job succeeds (exit 0) and says so in one line; nothing was spent."""
    out = tmp_path / "refused.json"
    code, err = _run(["--dataset", "iris", "--algorithm", "su2016.eugkm", "--k", "3", "--epsilon", "1",
                      "--transform", "minmax_01", "--param", "max_grid_cells=10", "--data", str(iris_h5),
                      "--out", str(out)], capsys)
    assert code == 0 and err.startswith("refused: su2016.eugkm on 'iris'") and err.count("\n") == 1
    rec = json.loads(out.read_text())
    assert rec["status"] == "refused" and rec["runs"] == [] and "exceeds max_grid_cells = 10" in rec["reason"]
    assert rec["settings"]["max_grid_cells"] == 10


def test_exit_code_of_the_process(tmp_path):
    """`python -m dpclust.pipeline run` itself exits non-zero (3) when the run could not be done."""
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "dpclust.pipeline", "run", "--config-dir", str(CONFIG), *BASE,
                           "--data", str(_unavailable_h5(tmp_path)), "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("error: run not done (data_unavailable)") and proc.stderr.count("\n") == 1
    assert out.exists()


def test_a_batch_of_two_datasets_gives_each_block_the_record_it_gets_alone(tmp_path, mirror, capsys):
    """A run job (`dpclust.pipeline.run_plan.RunBatch`) may read several datasets (a family batch): each block
    reads its own dataset, and gets exactly the record it gets when run alone (wall times aside);
    an unavailable dataset gives its blocks `data_unavailable` records and exit 3 unless allowed."""
    from dpclust.data import fetch_source, load_registry
    from dpclust.pipeline.configuration import load_config, run_spec_for
    from dpclust.pipeline.run_job import run_spec

    reg = load_registry(CONFIG / "datasets.yaml")
    for name in ("iris", "s1"):
        for source in reg.sources_for(name):
            fetch_source(source, raw_dir=tmp_path / "raw", mirror=str(mirror), registry=reg)
        prepare_dataset(name, raw_dir=tmp_path / "raw", out_path=tmp_path / "processed" / f"{name}.h5", registry=reg)
    config = load_config(CONFIG)
    cells = [("iris", 3, 1.0, 0, 2), ("s1", 15, 1.0, 0, 2), ("iris", 4, 0.5, 2, 3)]
    specs = [run_spec_for(config, d, "su2016.dplloyd", k, eps, seeds=(start, count), transform="minmax_pm1")
             for d, k, eps, start, count in cells]
    shared = {key: v for key, v in specs[0].items() if key not in ("dataset", "dataset_entry", "k", "epsilon", "seeds")}
    batch = {"spec": shared, "entries": {s["dataset"]: s["dataset_entry"] for s in specs},
             "cells": [list(c) for c in cells]}
    out = tmp_path / "batch.json"
    code, err = _run(["--spec", json.dumps(batch), "--data-dir", str(tmp_path), "--out", str(out)], capsys)
    assert code == 0, err

    def without_wall(rec):
        return dict(rec, runs=[{k: v for k, v in r.items() if k != "wall_time_s"} for r in rec["runs"]])

    records = json.loads(out.read_text())["records"]
    assert [(r["dataset"], r["k"], r["seeds"]) for r in records] == [("iris", 3, [0, 1]), ("s1", 15, [0, 1]),
                                                                    ("iris", 4, [2, 3, 4])]
    for rec, spec in zip(records, specs):
        alone = json.loads(json.dumps(run_spec(spec, str(tmp_path / "processed" / f"{spec['dataset']}.h5"))))
        assert without_wall({k: v for k, v in rec.items() if k != "code_hash"}) == without_wall(alone)

    from dpclust.data.processed import write_unavailable

    write_unavailable(tmp_path / "processed" / "s1.h5", "s1", "withdrawn")
    code, err = _run(["--spec", json.dumps(batch), "--data-dir", str(tmp_path), "--out", str(out)], capsys)
    statuses = [r["status"] for r in json.loads(out.read_text())["records"]]
    assert code == 3 and "s1" in err and statuses == ["ok", "data_unavailable", "ok"]
    code, _ = _run(["--spec", json.dumps(batch), "--data-dir", str(tmp_path), "--out", str(out),
                    "--allow-unavailable"], capsys)
    assert code == 0


def test_a_killed_batch_resumes_at_its_first_unfinished_block(iris_h5, tmp_path, capsys, monkeypatch):
    """A run job killed mid-batch keeps its finished blocks (`.<out>.blocks/`), and the next attempt
    runs only the rest; the output equals an uninterrupted run's (wall times aside) and the kept
    blocks are removed. Kept blocks of another batch spec or code hash are never used."""
    import dpclust.pipeline.run_job as runner
    from dpclust.pipeline.configuration import load_config, run_spec_for

    (tmp_path / "processed").mkdir()
    (tmp_path / "processed" / "iris.h5").symlink_to(iris_h5)
    config = load_config(CONFIG)
    cells = [("iris", 3, 1.0, 0, 2), ("iris", 3, 0.5, 0, 2), ("iris", 4, 1.0, 0, 2), ("iris", 4, 0.5, 0, 2)]
    specs = [run_spec_for(config, d, "su2016.dplloyd", k, eps, seeds=(start, count), transform="minmax_pm1")
             for d, k, eps, start, count in cells]
    shared = {key: v for key, v in specs[0].items() if key not in ("dataset", "dataset_entry", "k", "epsilon", "seeds")}
    batch = {"spec": shared, "entries": {"iris": specs[0]["dataset_entry"]}, "cells": [list(c) for c in cells]}

    def records(path):
        return [dict(r, runs=[{k: v for k, v in run.items() if k != "wall_time_s"} for run in r["runs"]])
                for r in json.loads(path.read_text())["records"]]

    args = ["--spec", json.dumps(batch), "--data-dir", str(tmp_path), "--code-hash", "c1"]
    whole = tmp_path / "whole.json"
    assert _run([*args, "--out", str(whole)], capsys)[0] == 0
    assert not (tmp_path / ".whole.json.blocks").exists()

    real, calls = runner.run_spec, []

    def killed_at_third(spec, *a, **kw):
        calls.append((spec["k"], spec["epsilon"]))
        if len(calls) == 3:
            raise KeyboardInterrupt("killed")
        return real(spec, *a, **kw)

    out = tmp_path / "resumed.json"
    monkeypatch.setattr(runner, "run_spec", killed_at_third)
    with pytest.raises(KeyboardInterrupt):
        _run([*args, "--out", str(out)], capsys)
    kept = tmp_path / ".resumed.json.blocks"
    assert not out.exists() and sorted(p.name for p in kept.glob("*.json")) == ["0.json", "1.json"]

    calls.clear()
    monkeypatch.setattr(runner, "run_spec", lambda spec, *a, **kw: calls.append((spec["k"], spec["epsilon"]))
                        or real(spec, *a, **kw))
    assert _run([*args, "--out", str(out)], capsys)[0] == 0
    assert calls == [(4, 1.0), (4, 0.5)]                         # only the blocks the killed attempt had not finished
    assert records(out) == records(whole) and not kept.exists()

    # blocks kept for another code hash (or spec) are discarded, not used
    calls.clear()
    monkeypatch.setattr(runner, "run_spec", killed_at_third)
    with pytest.raises(KeyboardInterrupt):
        _run([*args, "--out", str(out)], capsys)
    calls.clear()
    monkeypatch.setattr(runner, "run_spec", lambda spec, *a, **kw: calls.append(spec["k"]) or real(spec, *a, **kw))
    other = ["--spec", json.dumps(batch), "--data-dir", str(tmp_path), "--code-hash", "c2"]
    assert _run([*other, "--out", str(out)], capsys)[0] == 0
    assert calls == [3, 3, 4, 4] and not kept.exists()
