"""Run records: what a run released, kept apart from what we measured about it.

A run record (written by `dpclust.pipeline.run_job`; a run job's file holds the records of its batch,
`{"schema": 2, "records": [...]}`) describes a block of runs of one (dataset, algorithm, k, ε)
cell: the spec it ran (settings, budget, seeds, dataset content id) and the algorithm's guarantee
(`guarantee`: ε-DP, (ε, δ)-DP, non-private or "not DP as published", with the neighbouring
relation). Each run has two sections:

* ``released``: the mechanism's output, the only part covered by the privacy guarantee
  (``centers``, when the experiment stores them);
* ``diagnostics``: NON-PRIVATE measurements for the figures: exact costs (k-means, NICV,
  k-median), the budget actually spent and its ledger, iterations, and the algorithm's own `info`
  (traces, exact counts, per-stage values). These are exact functions of the data: never publish
  them as the output of a private algorithm.

`load_records` reads record files (a batch's or a single record's); `flatten` gives each run as
one flat dict (diagnostics, released, seed, init_seed, wall time), which is how the items read
them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

SCHEMA = 2
DIAGNOSTICS_NOTE = ("diagnostics are non-private exact functions of the data (costs, counts, traces, the "
                    "budget spent); only `released` is covered by the guarantee")


def make_run(seed: int, init_seed: int, wall_time_s: float, centers, diagnostics: dict,
             store_centers: bool) -> dict:
    return {"seed": seed, "init_seed": init_seed, "wall_time_s": wall_time_s,
            "released": {"centers": centers} if store_centers else {}, "diagnostics": diagnostics}


def flatten_run(run: dict) -> dict:
    """One flat dict per run: diagnostics, released output, seed, init_seed, wall time."""
    if "diagnostics" not in run and "released" not in run:
        return dict(run)  # already flat
    out = dict(run.get("diagnostics") or {})
    out.update(run.get("released") or {})
    for key in ("seed", "init_seed", "wall_time_s"):
        if key in run:
            out[key] = run[key]
    return out


def flatten(record: dict) -> dict:
    """The record with every run flattened (see `flatten_run`)."""
    return dict(record, runs=[flatten_run(r) for r in record.get("runs") or []])


def released_only(record: dict) -> dict:
    """What may be published of a record: everything but the runs' diagnostics."""
    out = {k: v for k, v in record.items() if k != "runs"}
    out["runs"] = [{k: v for k, v in run.items() if k != "diagnostics"} for run in record.get("runs") or []]
    return out


def load_records(paths: Iterable[str | Path]) -> list[dict]:
    """Run records from files, runs flattened."""
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
        out.extend(flatten(record) for record in (data["records"] if "records" in data else [data]))
    return out
