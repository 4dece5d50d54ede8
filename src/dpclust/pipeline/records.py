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

A record on a dataset the registry marks `origin: unverified` (a candidate file whose link to the
paper's data is unproven) has `dataset_origin: {"origin": "unverified", "note": <why>}`; no other
record has the field. It is public provenance, kept in the publishable view.

A run of an algorithm without a DP guarantee (non-private, or "not DP as published/configured")
reports no ε: its `epsilon_spent` and `delta_spent` are null and the record's `epsilon_spent_note`
says why (its ledger, the algorithm's own accounting, stays in the diagnostics; it is no guarantee).

`released_only` is the publishable view of a record (`released_path`: written beside each run
job's file as `<name>.released.json`): no diagnostics, no wall times, no content hash of the data,
and n and an n-dependent δ only where the guarantee declares n public (`n_public`).

`load_records` reads record files (a batch's or a single record's); `flatten` gives each run as
one flat dict (diagnostics, released, seed, init_seed, wall time), which is how the items read
them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

from dpclust.pipeline.resolve import delta_reads_n

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


#: Record fields never published: the content hash of the exact data (a perfect membership test).
UNRELEASED = ("dataset_sha256",)
#: Run fields never published: the diagnostics (exact functions of the data) and the wall time (it
#: depends on the data: its size, the algorithm's data-dependent work).
UNRELEASED_RUN = ("diagnostics", "wall_time_s")


def n_public(guarantee: dict | None) -> bool:
    """Whether a guarantee declares the dataset size n public: its neighbouring relation says "n
    public" ("add/remove one record, N public", "replace-one record (n public)") or is replace-one
    (neighbours of the same size), and never says "n not released" (Cohen-Addad et al.'s; their
    relation names replace-one only for an inner step). A record without a guarantee: not public."""
    text = str((guarantee or {}).get("relation") or "").lower().strip()
    if "n not released" in text:
        return False
    return "n public" in text or text.startswith("replac")


def _delta_public(record: dict, size_public: bool) -> bool:
    """Whether the record's resolved δ may be published: when n is public, when its spec is a number
    (it does not read n), or when it was resolved from the run's public size (setting `public_n`)."""
    if size_public:
        return True
    if "delta_spec" not in record:   # a record written before the spec was kept: it may have read n
        return False
    return not delta_reads_n(record["delta_spec"]) or (record.get("settings") or {}).get("public_n") is not None


def released_only(record: dict) -> dict:
    """What may be published of a record: the spec it ran, its guarantee and each run's released
    output; not the runs' diagnostics or wall times, the data's content hash, and n (and the δ
    resolved from n) only when the guarantee declares n public (`n_public`); the declared δ spec
    (`delta_spec`, e.g. "n^-1.5") is kept."""
    size_public = n_public(record.get("guarantee"))
    drop = set(UNRELEASED) | {"runs"}
    if not size_public:
        drop.add("n")
    if not _delta_public(record, size_public):
        drop.add("delta")
    out = {k: v for k, v in record.items() if k not in drop}
    out["runs"] = [{k: v for k, v in run.items() if k not in UNRELEASED_RUN} for run in record.get("runs") or []]
    return out


def released_file(obj: dict) -> dict:
    """The publishable view (`released_only`) of a record file: a batch's `{"schema", "records"}` or
    one record; marked `"view": "released"`."""
    if "records" in obj:
        rest = {k: v for k, v in obj.items() if k != "records"}
        return {**rest, "view": "released", "records": [released_only(r) for r in obj["records"]]}
    return {**released_only(obj), "view": "released"}


#: How the name of a record file's publishable view ends (`released_path`).
RELEASED_SUFFIX = ".released.json"


def released_path(path: str | Path) -> Path:
    """Where the publishable view of the record file `path` is written: `X.json` → `X.released.json`."""
    path = Path(path)
    return path.with_name(f"{path.stem}.released{path.suffix}")


def is_released_view(path: str | Path) -> bool:
    """Whether `path` is a publishable view (`released_path`) rather than a run job's record file:
    whoever lists the record files of a results tree (e.g. `rglob("*.json")`) must leave these out,
    or every record is read twice."""
    return Path(path).name.endswith(RELEASED_SUFFIX)


def load_records(paths: Iterable[str | Path]) -> list[dict]:
    """Run records from files, runs flattened."""
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
        out.extend(flatten(record) for record in (data["records"] if "records" in data else [data]))
    return out


def _ledger_row(row) -> tuple[float, float]:
    """(ε, δ) of one ledger row: `[label, ε, δ]` (`ClusteringResult.from_accountant`), a mapping with
    `epsilon`/`delta`, or an `accountant.Charge`."""
    if isinstance(row, dict):
        eps, dlt = row.get("epsilon"), row.get("delta", 0.0)
    elif isinstance(row, (list, tuple)) and len(row) >= 3:
        eps, dlt = row[1], row[2]
    elif hasattr(row, "epsilon"):
        eps, dlt = row.epsilon, getattr(row, "delta", 0.0)
    else:
        raise ValueError(f"unreadable ledger row {row!r}: expected [label, epsilon, delta]")
    try:
        eps, dlt = float(eps), float(dlt or 0.0)
    except (TypeError, ValueError):
        raise ValueError(f"unreadable ledger row {row!r}: epsilon and delta must be numbers") from None
    if not (math.isfinite(eps) and eps >= 0 and math.isfinite(dlt) and dlt >= 0):
        raise ValueError(f"ledger row {row!r}: epsilon and delta must be finite and >= 0")
    return eps, dlt


def ledger_total(ledger) -> tuple[float, float]:
    """The (ε, δ) a ledger adds up to under sequential composition: the sum of its rows.

    That is the accountant's own total: the ledger an algorithm returns is its top-level
    accountant's (`ClusteringResult.from_accountant`), where a parallel block (`Accountant.parallel`)
    is one row holding the block's cost, the maximum over its branches (the branches' charges are
    not copied), and a `sub_budget` one row holding the reservation (the child's charges are not
    copied either). Summing every row therefore never counts a parallel branch or a child twice."""
    rows = [_ledger_row(row) for row in ledger or []]
    return math.fsum(e for e, _ in rows), math.fsum(d for _, d in rows)
