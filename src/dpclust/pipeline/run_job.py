"""Run one block of seeds of one (dataset, algorithm, k, ε) cell from its spec and build its record
(`run_spec`); run a batch of such blocks on data loaded once (`run_batch`, the workflow's `run` job).

A run spec (planned by `dpclust.pipeline.planning`, passed by the workflow as a param, or built by the CLI)
holds everything a run depends on: the algorithm's function, privacy and complete settings, the
dataset's name and registry entry, the transform, k, ε, δ, the seeds, `init_sets`, `base_seed`
and whether centres are stored. The runner reads no config.

Seeds: run `s` uses the mechanism generator `default_rng(derive_seed(base, "run", dataset,
algorithm, k, ε, s))` and the shared-initialisation seed `derive_seed(base, "init", dataset, k,
s mod init_sets)` (passed as `settings["init_seed"]`; with `init_sets`, the seeds of the whole pool,
j = 0 .. init_sets-1, are passed as `settings["init_pool_seeds"]`). Nothing depends on the job
layout, so the same run gives the same bytes whatever the block size or batch.

Statuses: `ok`; `data_unavailable` (the dataset could not be had: no runs); `refused` (the
algorithm declined the block at a documented limit of its public inputs, `dpclust.api.Refused`,
e.g. EUGkM's grid memory guard: no runs, the reason kept). Neither is a failed job.

Budget: δ given as an expression of n ("n^-1.5") is resolved from the run's public size
(setting `public_n`) when set, else from the data's size (`dpclust.pipeline.resolve.delta_size`).
After each run the runner checks what the algorithm reported spending (`epsilon_spent`,
`delta_spent`) and, for an algorithm that reports an ε, the total of its ledger under sequential
composition (`ledger_total`), against the run's budget: either above it fails the run
(`PrivacyBudgetViolation`). Only a DP guarantee (ε-DP, (ε, δ)-DP; or a private algorithm that
declares none) reports an ε: a non-private or not-DP run records `epsilon_spent` and `delta_spent`
as null, and the record's `epsilon_spent_note` says why (`epsilon_not_reported`).

Files: `write_json_atomic` writes a run job's file and, beside it, its publishable view
(`dpclust.pipeline.records.released_only`, `X.json` → `X.released.json`).
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
import time
import zlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from dpclust import __version__
from dpclust.api import DPClustError, Refused, validate_inputs
from dpclust.mechanisms import GRID_BITS
from dpclust.metrics import all_costs
from dpclust.pipeline.records import DIAGNOSTICS_NOTE, ledger_total, make_run, released_file, released_path
from dpclust.pipeline.records import SCHEMA as RECORD_SCHEMA
from dpclust.pipeline.resolve import REPO_ROOT, delta_size, import_object, resolve_delta
from dpclust.settings import APPROXIMATE, PURE

#: Relative slack when checking that an algorithm spent no more than its budget.
SPEND_TOLERANCE = 1e-9
#: Keys every run spec has.
SPEC_KEYS = ("dataset", "dataset_entry", "transform", "algorithm", "function", "private", "settings", "k",
             "epsilon", "delta", "seeds", "init_sets", "base_seed", "store_centers")


#: Guarantee kinds that report an ε spent (`dpclust.settings.Guarantee.is_dp`).
DP_KINDS = (PURE.kind, APPROXIMATE.kind)


class PrivacyBudgetViolation(RuntimeError):
    """An algorithm reported spending more than its budget, or its ledger adds up to more: a privacy bug."""


def epsilon_not_reported(guarantee: dict | None, private: bool) -> str:
    """Why the runs of a record report no ε spent, or "" when they report one: only a DP guarantee
    (or a private algorithm that declares none: "unknown", never ranked as DP) reports an ε."""
    kind = (guarantee or {}).get("kind") or ("" if private else "non-private")
    if not kind or kind in DP_KINDS:
        return ""
    if kind == "non-private":
        return "non-private: no privacy budget, so no ε spent is reported (epsilon_spent and delta_spent are null)"
    note = (guarantee or {}).get("note") or ""
    return (f"{kind}{': ' + note if note else ''}; no ε spent is reported (epsilon_spent and delta_spent are null): "
            "an ε would read as a guarantee. The runs' diagnostics keep the algorithm's own ledger, its nominal "
            "accounting, which guarantees nothing")


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from any hashable parts, stable across processes and platforms."""
    words = [zlib.crc32(repr(p).encode()) for p in parts]
    return int(np.random.SeedSequence(words).generate_state(2, dtype=np.uint64)[0] >> np.uint64(1))


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, float) and not np.isfinite(obj):
        return None if np.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


@lru_cache(maxsize=1)
def git_commit() -> str:
    """The checkout's HEAD commit (records and invocation logs name it), or "unknown"."""
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _versions() -> dict:

    out = {"python": platform.python_version()}
    for pkg in ("numpy", "scipy", "h5py", "scikit-learn"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def check_spec(spec: dict) -> dict:
    missing = [key for key in SPEC_KEYS if key not in spec]
    if missing:
        raise DPClustError(f"run spec lacks {missing}; plan it with dpclust.pipeline.planning or "
                           "`python -m dpclust.pipeline run`")
    eps = spec["epsilon"]
    if spec["private"] and eps is None:
        raise DPClustError(f"{spec['algorithm']} is private and needs --epsilon > 0")
    if eps is not None and not (isinstance(eps, (int, float)) and np.isfinite(eps) and eps > 0):
        raise DPClustError(f"epsilon must be a finite number > 0, got {eps!r}")
    start, count = spec["seeds"]
    if count < 1 or start < 0:
        raise DPClustError(f"seeds must be a start >= 0 and a count >= 1, got {spec['seeds']!r}")
    return spec


def batch_cells(batch: dict) -> list[dict]:
    """The block specs of a run batch (`dpclust.pipeline.run_plan.RunBatch.spec_json`): the shared spec with
    each cell's dataset (and its registry entry), k, ε and seeds."""
    if not isinstance(batch, dict) or not {"spec", "entries", "cells"} <= set(batch):
        raise DPClustError("a run batch is {'spec': {...}, 'entries': {dataset: entry}, "
                           "'cells': [[dataset, k, epsilon, seed_start, seed_count], ...]}")
    return [dict(batch["spec"], dataset=dataset, dataset_entry=batch["entries"][dataset], k=k, epsilon=eps,
                 seeds=[start, count]) for dataset, k, eps, start, count in batch["cells"]]


def run_batch(batch: dict, data_paths: dict, data_sha256: dict | None = None,
              checkpoint: BlockCheckpoint | None = None, references: list[dict] | None = None) -> dict:
    """Run every block of a run batch, one after another, each dataset loaded once; the batch's file
    holds their records in order: `{"schema": 2, "records": [...]}` (`dpclust.pipeline.records.load_records`).
    `data_paths` and `data_sha256` map each dataset to its processed file and planned content id;
    `references` are the records of the runs a group's `reference_runs` reads (`ReferenceRuns`).
    With a `checkpoint`, each finished block's record is kept there and a block kept by an earlier,
    killed attempt at the same batch is not run again (same spec, data and code: same record)."""
    specs = [check_spec(dict(spec)) for spec in batch_cells(batch)]
    loaded: dict = {}
    records = []
    index_of_references = ReferenceRuns(references or [])
    for index, spec in enumerate(specs):
        name = spec["dataset"]
        record = checkpoint.get(index) if checkpoint is not None else None
        if record is None:
            record = run_spec(spec, data_paths[name], (data_sha256 or {}).get(name),
                              _loaded=loaded.setdefault(name, {}), references=index_of_references)
            if checkpoint is not None:
                checkpoint.put(index, record)
        records.append(record)
    return {"schema": RECORD_SCHEMA, "records": records}


class BlockCheckpoint:
    """Finished blocks of one run batch, kept beside its output (`.<name>.blocks/`) while the batch
    runs, so that a killed run job resumes at its first unfinished block instead of its first block.

    Keyed by everything the records depend on (the batch spec, the planned data ids, the code hash
    the workflow planned with, dpclust's version): a directory kept for any other key is discarded.
    The caller removes it (`discard`) once the batch's output is written.
    """

    def __init__(self, out_path, batch: dict, data_sha256: dict | None, code_hash: str):

        out_path = Path(out_path)
        self.dir = out_path.parent / f".{out_path.name}.blocks"
        self.key = hashlib.sha256(json.dumps(
            {"batch": batch, "data": data_sha256 or {}, "code": code_hash, "version": __version__},
            sort_keys=True, default=str).encode()).hexdigest()
        key_file = self.dir / "key"
        if self.dir.exists() and (not key_file.is_file() or key_file.read_text(encoding="utf-8") != self.key):
            self.discard()
        if not self.dir.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            from dpclust.fileio import write_text_atomic

            write_text_atomic(self.key, key_file)

    def get(self, index: int) -> dict | None:

        try:
            return json.loads((self.dir / f"{index}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, index: int, record: dict) -> None:
        from dpclust.fileio import write_json_atomic as _write

        _write(record, self.dir / f"{index}.json")   # a kept block: no publishable view

    def discard(self) -> None:

        shutil.rmtree(self.dir, ignore_errors=True)


def _load(data_path: str, data_sha256: str | None, transform: str, entry: dict, loaded: dict):
    """(processed data, transformed X, bounds), or (the DatasetUnavailable raised, None, None); kept
    in `loaded` for the other blocks of the batch on this dataset."""
    from dpclust.data.store import DatasetUnavailable, load_processed
    from dpclust.data.transforms import apply_transform

    if "data" not in loaded:
        try:
            loaded["data"] = load_processed(data_path, expect_sha256=data_sha256 or None)
        except DatasetUnavailable as exc:
            loaded["data"] = exc
    data = loaded["data"]
    if isinstance(data, DatasetUnavailable):
        return data, None, None
    if "X" not in loaded:  # the blocks of one batch share the transform and the registry entry
        X, bounds = apply_transform(transform, data.X, entry)
        X.flags.writeable = False  # shared by the batch's runs: an algorithm must not change its input
        loaded["X"] = X, bounds
    return (data, *loaded["X"])


def run_spec(spec: dict, data_path: str, data_sha256: str | None = None, *, _loaded: dict | None = None,
             references: ReferenceRuns | None = None) -> dict:
    """Run the spec's seeds on the processed file `data_path` and return the run record (see
    docs/ARCHITECTURE.md). `data_sha256`, when given, is the content the workflow planned with;
    `references`, the recorded runs a spec's `reference_runs` names (`ReferenceRuns`)."""
    from dpclust.data.store import DatasetUnavailable

    spec = check_spec(dict(spec))
    start, count = spec["seeds"]
    seeds = list(range(start, start + count))
    algorithm, k, epsilon = spec["algorithm"], int(spec["k"]), spec["epsilon"]
    settings = dict(spec["settings"])
    record: dict[str, Any] = {
        "schema": RECORD_SCHEMA,
        "paper": spec.get("paper", ""), "item": spec.get("item", ""), "group": spec.get("group", ""),
        "dataset": spec["dataset"], "algorithm": algorithm, "function": spec["function"],
        "private": bool(spec["private"]), "k": k, "epsilon": epsilon, "transform": spec["transform"],
        "seeds": seeds, "base_seed": spec["base_seed"], "init_sets": spec["init_sets"],
        "dpclust_version": __version__, "git_commit": git_commit(), "versions": _versions(),
        "diagnostics_note": DIAGNOSTICS_NOTE,
        # releases lie on a grid of 2^-GRID_BITS of the noise scale; each run's diagnostics say the δ
        # floating-point sampling adds (the guarantee: dpclust.mechanisms.FLOATING_POINT_GUARANTEE)
        "floating_point": {"grid_bits": GRID_BITS, "guarantee": "dpclust.mechanisms.FLOATING_POINT_GUARANTEE"},
    }
    entry = spec["dataset_entry"] or {}
    if entry.get("origin") == "unverified":
        # the registry marks the data as of unproven origin (dpclust.data.registry.origin_unverified;
        # read here from the entry, not imported, so registry edits do not re-run every run job):
        # every record on it says so, and only those records get the field, so the records of
        # every other dataset keep their exact bytes
        record["dataset_origin"] = {"origin": "unverified", "note": str(entry.get("origin_note") or "")}
    if "sweep" in spec:
        record["sweep"] = spec["sweep"]
    if "guarantee" in spec:
        record["guarantee"] = spec["guarantee"]
    not_reported = epsilon_not_reported(spec.get("guarantee"), bool(spec["private"]))
    if not_reported:
        record["epsilon_spent_note"] = not_reported
    record["delta_spec"] = spec["delta"]
    data, X, bounds = _load(data_path, data_sha256, spec["transform"], spec["dataset_entry"],
                            {} if _loaded is None else _loaded)
    if isinstance(data, DatasetUnavailable):
        record.update(status="data_unavailable", reason=str(data), delta=None, settings=settings, runs=[])
        return _jsonable(record)
    function = import_object(spec["function"])
    delta = resolve_delta(spec["delta"], delta_size(settings, X.shape[0]))
    X = validate_inputs(X, k, epsilon, delta)
    settings = dict(settings, bounds=[float(bounds[0]), float(bounds[1])])
    record.update(status="ok", reason="", delta=delta, bounds=settings["bounds"],
                  dataset_sha256=str(data.attrs.get("sha256", "")), n=int(X.shape[0]), d=int(X.shape[1]))
    try:
        runs = _runs(spec, function, X, k, epsilon, delta, settings, seeds, reports=not not_reported,
                     references=references)
    except Refused as exc:   # a documented limit of the public inputs (api.Refused): no run, not a failure
        record.update(status="refused", reason=str(exc), settings=settings, runs=[])
        return _jsonable(record)
    record["settings"] = settings
    record["runs"] = runs
    return _jsonable(record)


def _runs(spec: dict, function, X, k: int, epsilon, delta: float, settings: dict, seeds: list[int],
          reports: bool = True, references: ReferenceRuns | None = None) -> list[dict]:
    """The block's runs, one per seed (see `run_spec`); `reports`: whether they report an ε spent
    (`epsilon_not_reported`), and so whether their ledger is checked against the budget; with a
    spec's `reference_runs`, each run gets the recorded runs of the same seed (`ReferenceRuns.of`)."""
    algorithm = spec["algorithm"]
    runs = []
    dataset, init_sets = spec["dataset"], spec["init_sets"]
    pool = [derive_seed(spec["base_seed"], "init", dataset, k, j) for j in range(init_sets or 0)]
    for seed in seeds:
        init_seed = pool[seed % len(pool)] if pool else derive_seed(spec["base_seed"], "init", dataset, k, seed)
        rng = np.random.default_rng(derive_seed(spec["base_seed"], "run", dataset, algorithm, k, epsilon, seed))
        run_settings = dict(settings, init_seed=init_seed)
        if pool:
            run_settings["init_pool_seeds"] = pool
        if spec.get("reference_runs"):
            run_settings["reference_runs"] = (references or ReferenceRuns([])).of(
                spec["reference_runs"], dataset, k, epsilon, seed, init_seed)
        t0 = time.perf_counter()
        result = function(X, k, epsilon, delta, rng, run_settings)
        wall = time.perf_counter() - t0
        _check_spend(algorithm, bool(spec["private"]), epsilon, result, delta)
        if reports:
            _check_ledger(algorithm, bool(spec["private"]), epsilon, result, delta)
        centers = np.asarray(result.centers, dtype=float)
        if centers.shape != (k, X.shape[1]) or not np.isfinite(centers).all():
            raise DPClustError(f"{algorithm} returned centres of shape {centers.shape} "
                               f"(expected {(k, X.shape[1])}) or non-finite values")
        diagnostics = {"epsilon_spent": result.epsilon_spent if reports else None,
                       "delta_spent": result.delta_spent if reports else None, "ledger": result.ledger,
                       "iterations": result.iterations, **all_costs(X, centers),
                       "floating_point_delta": result.floating_point_delta, "info": result.info}
        runs.append(make_run(seed, init_seed, wall, centers, diagnostics, spec["store_centers"]))
    return runs


def reference_records(paths) -> list[dict]:
    """The records of the run files a group's `reference_runs` reads (a batch file or one record each)."""
    out: list[dict] = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DPClustError(f"reference record file {path} cannot be read ({exc}); run the job that writes "
                               "it first (the workflow does)") from None
        out.extend(data["records"] if "records" in data else [data])
    return out


class ReferenceRuns:
    """The recorded runs a run group's `reference_runs` reads (records of other algorithms of the
    same item, planned inputs of its run jobs: `dpclust.pipeline.run_plan.link_reference_runs`),
    indexed by (algorithm, dataset, k, ε, seed)."""

    def __init__(self, records: list[dict]):
        self.runs: dict[tuple, dict] = {}
        for record in records:
            if record.get("status") != "ok":
                continue
            for run in record["runs"]:
                key = (record["algorithm"], record["dataset"], int(record["k"]), record["epsilon"], int(run["seed"]))
                self.runs[key] = {"settings": record["settings"], "iterations": run["diagnostics"]["iterations"],
                                  "info": run["diagnostics"]["info"], "init_seed": run["init_seed"]}

    def of(self, declared: dict, dataset: str, k: int, epsilon, seed: int, init_seed: int) -> dict:
        """{label: {"settings", "iterations", "info"}} of the recorded runs `declared["runs"]` (label →
        algorithm) at this run's (dataset, k, ε, seed); each must exist and share its initial centroids."""
        out = {}
        for label, algorithm in sorted(declared["runs"].items()):
            run = self.runs.get((algorithm, dataset, int(k), epsilon, int(seed)))
            if run is None:
                raise DPClustError(f"no recorded run of {algorithm} at ({dataset}, k={k}, epsilon={epsilon}, "
                                   f"seed {seed}) among the reference records given (--reference-records); "
                                   "the workflow plans them as inputs (reference_runs of the run group)")
            if run["init_seed"] != init_seed:
                raise DPClustError(f"the recorded run of {algorithm} at seed {seed} started from other initial "
                                   "centroids (init_seed differs): it was planned with another base_seed or init_sets")
            out[label] = {key: run[key] for key in ("settings", "iterations", "info")}
        return out


def _check_spend(algorithm: str, private: bool, epsilon, result, delta: float) -> None:
    budget = epsilon if private else 0.0
    if result.epsilon_spent > (budget or 0.0) * (1 + SPEND_TOLERANCE) + 1e-15:
        raise PrivacyBudgetViolation(f"{algorithm} spent epsilon {result.epsilon_spent!r} > budget {budget!r}")
    if result.delta_spent > delta * (1 + SPEND_TOLERANCE) + 1e-300:
        raise PrivacyBudgetViolation(f"{algorithm} spent delta {result.delta_spent!r} > budget {delta!r}")


def _check_ledger(algorithm: str, private: bool, epsilon, result, delta: float) -> None:
    """The run fails if its ledger adds up to more than its budget, whatever it reported as spent."""
    budget = float(epsilon) if private and epsilon is not None else 0.0
    try:
        eps_total, delta_total = ledger_total(result.ledger)
    except ValueError as err:
        raise PrivacyBudgetViolation(f"{algorithm}: {err}") from None
    if (eps_total > budget * (1 + SPEND_TOLERANCE) + 1e-15
            or delta_total > delta * (1 + SPEND_TOLERANCE) + 1e-300):
        raise PrivacyBudgetViolation(
            f"{algorithm}: its ledger adds up to (epsilon {eps_total!r}, delta {delta_total!r}) under sequential "
            f"composition ({len(result.ledger or [])} charges), above its budget (epsilon {budget!r}, delta "
            f"{delta!r}); it reported spending (epsilon {result.epsilon_spent!r}, delta {result.delta_spent!r})")


def write_json_atomic(obj: dict, path) -> None:
    """Write a run job's file (a batch's `{"schema", "records"}` or one record; sorted keys, no
    timestamps) atomically, with the umask's file mode, and beside it its publishable view
    (`dpclust.pipeline.records.released_file`, at `released_path(path)`: `X.json` → `X.released.json`),
    written first: a record file is never newer than its view."""
    from dpclust.fileio import write_json_atomic as _write

    _write(released_file(obj), released_path(path))
    _write(obj, path)
