"""What a run record reports and what may be published of it.

* A run without a DP guarantee (not DP as published/configured, non-private) reports no ε: its
  `epsilon_spent`/`delta_spent` are JSON null, the record says why, the leaderboard's ε columns are
  blank for it, and the checks reading ε skip it.
* The runner checks the ledger's total under sequential composition against the budget, not only
  the `epsilon_spent` an algorithm reports (parallel blocks are one ledger row: not summed twice).
* `records.released_only` (written beside each run job's file as `X.released.json`) drops n, the
  data's hash, the δ resolved from n and the wall times, unless the guarantee declares n public.
* δ = "n^-1.5" is resolved from `public_n` when a run sets it.
"""
from __future__ import annotations

import json
import math
import sys
import types

import numpy as np
import pandas as pd
import pytest

from dpclust.accountant import Accountant
from dpclust.api import ClusteringResult
from dpclust.blocks.public_size import PUBLIC_N
from dpclust.data import write_processed
from dpclust.pipeline import records as R
from dpclust.pipeline.records import ledger_total
from dpclust.pipeline.run_job import PrivacyBudgetViolation, run_spec
from dpclust.settings import (
    APPROXIMATE,
    NON_PRIVATE,
    PURE,
    Guarantee,
    Settings,
    declared,
    guarantee_of,
    not_dp,
)

MODULE = "dpclust_release_fakes"
N = 60
NOT_DP_NOTE = "its starts are data records"


# ---------------------------------------------------------------------------------------------
# toy algorithms (registered as the module `dpclust_release_fakes`, as tests/audits/fake_algorithms.py)
# ---------------------------------------------------------------------------------------------
def _centres(X, k):
    return np.asarray(X[:k], dtype=float)


def _honest(X, k, epsilon, delta, label="noisy centres"):
    acc = Accountant(epsilon, delta)
    acc.spend(epsilon, delta, label=label)
    return ClusteringResult.from_accountant(_centres(X, k), acc, iterations=1, delta_seen=delta)


@declared(Settings(), guarantee=PURE)
def honest(X, k, epsilon, delta, rng, settings):
    return _honest(X, k, epsilon, 0.0)


@declared(Settings(), guarantee=APPROXIMATE)
def honest_approx(X, k, epsilon, delta, rng, settings):
    return _honest(X, k, epsilon, delta)


@declared(Settings(), guarantee=not_dp(NOT_DP_NOTE))
def not_dp_nominal(X, k, epsilon, delta, rng, settings):
    """Not DP as published; reports its nominal ε while its own ledger sums to 17ε/12 (as Balcan et
    al.'s authors' variant does): nothing of it is reported, nothing fails."""
    return ClusteringResult(_centres(X, k), epsilon_spent=float(epsilon), iterations=1,
                            ledger=[["stage a", epsilon, 0.0], ["stage b", 5 * epsilon / 12, 0.0]])


@declared(Settings(), guarantee=NON_PRIVATE)
def reference(X, k, epsilon, delta, rng, settings):
    return ClusteringResult(_centres(X, k) * 0.999, 0.0, 0.0, 1)


@declared(Settings(), guarantee=PURE)
def overspending_ledger(X, k, epsilon, delta, rng, settings):
    """Planted bug: reports `epsilon_spent` = its budget, but its ledger adds up to 1.5 ε."""
    return ClusteringResult(_centres(X, k), epsilon_spent=float(epsilon), iterations=1,
                            ledger=[["counts", 0.75 * epsilon, 0.0], ["sums", 0.75 * epsilon, 0.0]])


@declared(Settings(), guarantee=APPROXIMATE)
def overspending_delta(X, k, epsilon, delta, rng, settings):
    """Planted bug: its ledger spends twice its δ, it reports δ."""
    return ClusteringResult(_centres(X, k), epsilon_spent=float(epsilon), delta_spent=float(delta), iterations=1,
                            ledger=[["gaussian", epsilon, 2 * delta]])


@declared(Settings(), guarantee=PURE)
def parallel_cells(X, k, epsilon, delta, rng, settings):
    """Honest: ε/4 on the whole data, then ε/2 in each of four disjoint cells (parallel composition,
    one ledger row), then ten charges of ε/20 that add up with rounding error."""
    acc = Accountant(epsilon)
    acc.spend(epsilon / 4, label="whole data")
    with acc.parallel("cells") as block:
        for _ in range(4):
            block.branch().spend(epsilon / 4, label="one cell")
    for _ in range(10):
        acc.spend(epsilon / 20, label="tenth")
    return ClusteringResult.from_accountant(_centres(X, k), acc, iterations=1)


@declared(Settings(public_n=PUBLIC_N),
          guarantee=Guarantee("(ε, δ)-DP", relation="add/remove one record, n public (it sets δ = n^-1.5)"))
def sized(X, k, epsilon, delta, rng, settings):
    return _honest(X, k, epsilon, delta)


@declared(Settings(), guarantee=Guarantee("ε-DP", relation="add/remove one record (n not released)"))
def size_hidden(X, k, epsilon, delta, rng, settings):
    return _honest(X, k, epsilon, 0.0)


FAKES = (honest, honest_approx, not_dp_nominal, reference, overspending_ledger, overspending_delta,
         parallel_cells, sized, size_hidden)


def _register() -> None:
    module = types.ModuleType(MODULE)
    for fn in FAKES:
        setattr(module, fn.__name__, fn)
    sys.modules[MODULE] = module


_register()


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("release") / "toy.h5"
    X = np.random.default_rng(3).uniform(0.0, 1.0, size=(N, 2))
    write_processed(path, X, None, {"name": "toy", "source": "test"})
    return str(path)


def _spec(fn, *, epsilon=1.0, delta=0.0, settings=None, k=2, seeds=(0, 2), group="kmeans") -> dict:
    complete = fn.settings.complete(settings or {})
    guarantee = guarantee_of(fn, complete)
    private = guarantee.kind != "non-private"
    return {"dataset": "toy", "dataset_entry": {}, "transform": "minmax_01", "algorithm": f"test.{fn.__name__}",
            "function": f"{MODULE}:{fn.__name__}", "private": private, "settings": complete,
            "guarantee": guarantee.as_dict(), "k": k, "epsilon": epsilon if private else None,
            "delta": delta if private else 0.0, "seeds": list(seeds), "init_sets": None, "base_seed": 1,
            "store_centers": True, "paper": "test", "item": "release", "group": group}


def _run(fn, data_path, **kw) -> dict:
    return run_spec(_spec(fn, **kw), data_path)


# ---------------------------------------------------------------------------------------------
# 1. no ε for a run without a DP guarantee
# ---------------------------------------------------------------------------------------------
def test_a_not_dp_run_records_null_epsilon_and_says_why(data_path, tmp_path):
    rec = _run(not_dp_nominal, data_path, delta="n^-1.5")
    assert rec["status"] == "ok" and rec["guarantee"]["kind"] == "not DP as published"
    for run in rec["runs"]:
        assert run["diagnostics"]["epsilon_spent"] is None and run["diagnostics"]["delta_spent"] is None
        assert math.fsum(row[1] for row in run["diagnostics"]["ledger"]) == pytest.approx(17 / 12)  # kept
    note = rec["epsilon_spent_note"]
    assert note.startswith("not DP as published") and NOT_DP_NOTE in note and "ledger" in note
    from dpclust.pipeline.run_job import write_json_atomic

    write_json_atomic(rec, tmp_path / "rec.json")
    assert '"epsilon_spent":null' in (tmp_path / "rec.json").read_text() and '"delta_spent":null' in (
        tmp_path / "rec.json").read_text()                                       # JSON null, not 0 or NaN
    nonprivate = _run(reference, data_path, group="reference_kmeans")
    assert all(r["diagnostics"]["epsilon_spent"] is None for r in nonprivate["runs"])
    assert nonprivate["epsilon_spent_note"].startswith("non-private")
    dp = _run(honest_approx, data_path, delta=1e-6)
    assert "epsilon_spent_note" not in dp
    assert [r["diagnostics"]["epsilon_spent"] for r in dp["runs"]] == [1.0, 1.0]
    assert [r["diagnostics"]["delta_spent"] for r in dp["runs"]] == [1e-6, 1e-6]


LEADERBOARD_ITEM = {"title": "Leaderboard", "names": {},
                    "table": {"objectives": {"kmeans": "kmeans", "reference_kmeans": "kmeans"}}}


def test_the_leaderboard_shows_blank_epsilon_for_a_not_dp_method(data_path, tmp_path):
    from dpclust.pipeline.items.leaderboard import table

    recs = [R.flatten(_run(fn, data_path, group=group, delta=1e-6))
            for fn, group in ((reference, "reference_kmeans"), (not_dp_nominal, "kmeans"), (honest, "kmeans"))]
    board = table.aggregate(recs, LEADERBOARD_ITEM, None)
    rows = board.set_index("algorithm")
    for alg in ("test.not_dp_nominal", "test.reference"):
        assert rows.loc[alg, ["eps_spent_mean", "eps_spent_max", "delta_spent_max"]].isna().all(), alg
    assert rows.loc["test.honest", "eps_spent_mean"] == 1.0 and rows.loc["test.honest", "eps_spent_max"] == 1.0
    # an older record holding a nominal number for a not-DP method is blank too
    old = [dict(r, runs=[dict(run, epsilon_spent=1.0) for run in r["runs"]]) for r in recs]
    old_rows = table.aggregate(old, LEADERBOARD_ITEM, None).set_index("algorithm")
    assert math.isnan(old_rows.loc["test.not_dp_nominal", "eps_spent_mean"])
    [check] = table.checks(board, {"claims": {}})
    assert check.holds is True and "not counted" in check.detail

    table.render(board, LEADERBOARD_ITEM, tmp_path / "board")
    lines = (tmp_path / "board.md").read_text().splitlines()
    header = [c.strip() for c in next(line for line in lines if "ε spent (mean)" in line).strip("|").split("|")]
    column = header.index("ε spent (mean)")
    cells = {}
    for line in lines:
        parts = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(parts) == len(header) and parts[header.index("algorithm")].startswith("test."):
            cells[parts[header.index("algorithm")]] = parts[column]
    assert cells["test.not_dp_nominal"] == "" and cells["test.reference"] == "" and cells["test.honest"] == "1"


def test_checks_and_tidy_tables_skip_a_null_epsilon(data_path):
    from dpclust.pipeline.aggregate import runs_frame
    from dpclust.pipeline.cells import tidy

    recs = [R.flatten(_run(fn, data_path, group=group))
            for fn, group in ((reference, "reference_kmeans"), (not_dp_nominal, "kmeans"), (honest, "kmeans"))]
    frame = runs_frame(recs)
    spent = pd.to_numeric(frame["epsilon_spent"], errors="coerce")
    assert spent[frame["algorithm"] != "test.honest"].isna().all() and (spent[frame["algorithm"] == "test.honest"]
                                                                         == 1.0).all()
    t = tidy(recs, {})
    eps_rows = t[t["metric"] == "epsilon_spent"].set_index("algorithm")
    assert eps_rows.loc["test.honest", "mean"] == 1.0 and eps_rows.loc["test.honest", "n"] == 2
    assert np.isnan(eps_rows.loc["test.not_dp_nominal", "mean"]) and eps_rows.loc["test.not_dp_nominal", "n"] == 0


# ---------------------------------------------------------------------------------------------
# 2. the ledger's total against the budget
# ---------------------------------------------------------------------------------------------
def test_a_ledger_above_the_budget_fails_the_run_although_epsilon_spent_is_the_budget(data_path):
    with pytest.raises(PrivacyBudgetViolation) as err:
        _run(overspending_ledger, data_path, epsilon=2.0)
    message = str(err.value)
    assert message.startswith("test.overspending_ledger: its ledger adds up to (epsilon 3.0")
    assert "budget (epsilon 2.0" in message and "reported spending (epsilon 2.0" in message
    assert "\n" not in message
    with pytest.raises(PrivacyBudgetViolation, match=r"test\.overspending_delta: its ledger adds up to "
                                                      r"\(epsilon 1\.0, delta 2e-06\).*delta 1e-06"):
        _run(overspending_delta, data_path, delta=1e-6)


def test_parallel_blocks_and_float_sums_are_not_an_overspend(data_path):
    rec = _run(parallel_cells, data_path, epsilon=0.3)
    ledger = rec["runs"][0]["diagnostics"]["ledger"]
    assert len(ledger) == 12 and "parallel over 4 parts" in ledger[1][0]   # the block: one row, its maximum
    assert ledger_total(ledger)[0] == pytest.approx(0.3, rel=1e-12)
    assert rec["runs"][0]["diagnostics"]["epsilon_spent"] == pytest.approx(0.3, rel=1e-12)


def test_ledger_total_reads_every_row_format_and_refuses_nonsense():
    from dpclust.accountant import Charge

    assert ledger_total([["a", 0.5, 1e-7], {"epsilon": 0.25, "delta": 0.0}, Charge("c", 0.25, 0.0)]) == (1.0, 1e-7)
    assert ledger_total([]) == (0.0, 0.0)
    for bad in (["a", -1.0, 0.0], ["a", float("nan"), 0.0], "row", ["a", "x", 0.0]):
        with pytest.raises(ValueError):
            ledger_total([bad])


# ---------------------------------------------------------------------------------------------
# 3. what may be published
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("relation, public", [
    ("add/remove one record", False),
    ("add/remove one record (n not released)", False),
    ("add/remove one record (n not released); the Lloyd steps' 1-medians use replace-one of their capped samples",
     False),
    ("", False),
    ("add/remove one record, N public", True),
    ("add/remove one record (n public: it sets the number of blocks m)", True),
    ("replace-one record (n public): ℓ = n^0.4 blocks", True),
    ("replace one record", True),
])
def test_n_public_reads_the_guarantees_relation(relation, public):
    assert R.n_public({"kind": "ε-DP", "relation": relation}) is public
    assert R.n_public(None) is False


def test_released_only_drops_n_hash_delta_and_wall_times_unless_n_is_public(data_path):
    hidden = _run(size_hidden, data_path, delta="n^-1.5")
    assert hidden["n"] == N and hidden["dataset_sha256"] and hidden["delta"] == pytest.approx(N ** -1.5)
    out = R.released_only(hidden)
    for key in ("n", "dataset_sha256", "delta"):
        assert key not in out, key
    assert out["delta_spec"] == "n^-1.5" and out["d"] == 2 and out["epsilon"] == 1.0 and out["guarantee"]
    assert all(set(run) == {"seed", "init_seed", "released"} for run in out["runs"])
    assert [run["released"]["centers"] for run in out["runs"]] == [run["released"]["centers"]
                                                                   for run in hidden["runs"]]
    assert "n" in hidden and "wall_time_s" in hidden["runs"][0]            # the record itself is unchanged
    # a δ given as a number does not read n: kept
    assert R.released_only(_run(size_hidden, data_path, delta=1e-6))["delta"] == 1e-6
    # a guarantee with n public keeps n and the δ resolved from it, never the hash or the wall times
    public = R.released_only(_run(sized, data_path, delta="n^-1.5"))
    assert public["n"] == N and public["delta"] == pytest.approx(N ** -1.5) and "dataset_sha256" not in public
    assert all("wall_time_s" not in run and "diagnostics" not in run for run in public["runs"])
    # an older record without the δ spec: its δ may have read n, so it is dropped where n is not public
    assert "delta" not in R.released_only({k: v for k, v in hidden.items() if k != "delta_spec"})


def test_a_run_job_writes_the_released_view_beside_its_file(data_path, tmp_path, capsys):
    from dpclust.pipeline.cli import main
    from dpclust.pipeline.integrity import intact, load_records

    cell_keys = ("dataset", "dataset_entry", "k", "epsilon", "seeds")
    shared = {k: v for k, v in _spec(size_hidden, delta="n^-1.5").items() if k not in cell_keys}
    batch = {"spec": shared, "entries": {"toy": {}}, "cells": [["toy", 2, 1.0, 0, 2], ["toy", 3, 0.5, 0, 1]]}
    (tmp_path / "processed").mkdir()
    (tmp_path / "processed" / "toy.h5").symlink_to(data_path)
    out = tmp_path / "runs" / "size_hidden.json"
    out.parent.mkdir()
    code = main(["run", "--spec", json.dumps(batch), "--data-dir", str(tmp_path), "--code-hash", "c1",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    view = out.with_name("size_hidden.released.json")
    assert sorted(p.name for p in out.parent.iterdir()) == ["size_hidden.json", "size_hidden.released.json"]
    assert intact(view) == (True, "") and intact(out) == (True, "")
    full, released = json.loads(out.read_text()), json.loads(view.read_text())
    assert released["view"] == "released" and "view" not in full
    assert released["records"] == [R.released_only(r) for r in full["records"]]
    for rec in released["records"]:
        assert not {"n", "dataset_sha256", "delta"} & set(rec) and rec["code_hash"] == "c1"
        assert all(set(run) == {"seed", "init_seed", "released"} for run in rec["runs"])
    assert [r["n"] for r in full["records"]] == [N, N]
    assert len(load_records([view])) == 2                                 # reads as records (runs flattened)
    assert R.is_released_view(view) and not R.is_released_view(out)       # what a lister of record files skips


# ---------------------------------------------------------------------------------------------
# 4. δ from public_n
# ---------------------------------------------------------------------------------------------
def test_delta_of_n_is_resolved_from_public_n_when_set(data_path):
    from dpclust.pipeline.resolve import delta_reads_n, delta_size, resolve_delta

    rec = _run(sized, data_path, delta="n^-1.5", settings={"public_n": 1000})
    assert rec["delta"] == pytest.approx(1000 ** -1.5) and rec["n"] == N
    assert rec["runs"][0]["diagnostics"]["info"]["delta_seen"] == pytest.approx(1000 ** -1.5)  # what the run got
    assert rec["runs"][0]["diagnostics"]["delta_spent"] == pytest.approx(1000 ** -1.5)
    assert _run(sized, data_path, delta="n^-1.5")["delta"] == pytest.approx(N ** -1.5)          # unset: the data's n
    assert _run(sized, data_path, delta="0.5/n", settings={"public_n": 200})["delta"] == pytest.approx(0.5 / 200)
    assert delta_size({"public_n": 7}, 100) == 7 and delta_size({"public_n": None}, 100) == 100
    assert delta_size({}, 100) == 100 and resolve_delta("n^-1.5", delta_size({"public_n": 100}, 5)) == 1e-3
    assert delta_reads_n("n^-1.5") and delta_reads_n("0.1/n") and not delta_reads_n(1e-6) and not delta_reads_n("1e-6")
    # the δ resolved from a public N is public: the released view keeps it even if n were not public
    rec_hidden_n = dict(rec, guarantee={"kind": "(ε, δ)-DP", "relation": "add/remove one record"})
    out = R.released_only(rec_hidden_n)
    assert "n" not in out and out["delta"] == pytest.approx(1000 ** -1.5)


def test_an_audit_resolves_delta_of_n_from_public_n_else_from_the_designs_n():
    from dpclust.pipeline.audit_job import audit_delta

    spec = {"delta": "n^-1.5", "n": 100, "settings": {"public_n": 10_000}}
    assert audit_delta(spec) == pytest.approx(1e-6)
    assert audit_delta(dict(spec, settings={})) == pytest.approx(1e-3)
    assert audit_delta(dict(spec, delta=1e-5)) == 1e-5
