"""Run one block of seeds of one (dataset, algorithm, k, ε) cell and build its run record.

Seeds: run `s` uses the mechanism generator `default_rng(derive_seed(base, "run", dataset,
algorithm, k, ε, s))` and the shared-initialisation seed `derive_seed(base, "init", dataset, k,
s mod init_sets)` (passed as `settings["init_seed"]`; with `init_sets`, the seeds of the whole pool,
j = 0 .. init_sets-1, are passed as `settings["init_pool_seeds"]`). Nothing depends on the job
layout, so the same run gives the same bytes whatever the block size.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .api import DPClustError, validate_inputs
from .metrics import all_costs
from .resolve import REPO_ROOT, function_module, import_object, resolve_delta

#: Relative slack when checking that an algorithm spent no more than its budget.
SPEND_TOLERANCE = 1e-9
RECORD_SCHEMA = 1


class PrivacyBudgetViolation(RuntimeError):
    """An algorithm reported spending more than its budget: a privacy bug."""


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from any hashable parts, stable across processes and platforms."""
    words = [zlib.crc32(repr(p).encode()) for p in parts]
    return int(np.random.SeedSequence(words).generate_state(2, dtype=np.uint64)[0] >> np.uint64(1))


@dataclass
class RunRequest:
    dataset: str
    algorithm: str
    k: int
    epsilon: float | None
    seeds: list[int]
    data_path: str
    delta: Any = 0.0
    transform: str = "raw"
    init_sets: int | None = None
    params: dict = field(default_factory=dict)
    base_seed: int = 0
    store_centers: bool = True
    paper: str = ""
    item: str = ""
    group: str = ""
    registry_path: str | None = None


def resolve_settings(entry: dict, params: dict, algorithm: str) -> dict:
    defaults = dict(entry.get("settings") or {})
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise DPClustError(f"{algorithm} has no setting(s) {unknown}; its settings are {sorted(defaults)}")
    defaults.update(params)
    return defaults


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
def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _versions() -> dict:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("numpy", "scipy", "h5py", "scikit-learn"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def run_block(req: RunRequest, algorithms: dict) -> dict:
    """Run the request's seeds and return the run record (see docs/ARCHITECTURE.md)."""
    from .codehash import code_hash
    from .data import DatasetUnavailable, apply_transform, load_processed, load_registry

    if req.algorithm not in algorithms:
        raise DPClustError(f"unknown algorithm {req.algorithm!r}; known: {', '.join(sorted(algorithms))}")
    entry = algorithms[req.algorithm]
    private = entry.get("private", True)
    if private and req.epsilon is None:
        raise DPClustError(f"{req.algorithm} is private and needs --epsilon > 0")
    if req.epsilon is not None and not (np.isfinite(req.epsilon) and req.epsilon > 0):
        raise DPClustError(f"epsilon must be a finite number > 0, got {req.epsilon!r}")
    settings = resolve_settings(entry, req.params, req.algorithm)
    function = import_object(entry["function"])
    record: dict[str, Any] = {
        "schema": RECORD_SCHEMA,
        "paper": req.paper, "item": req.item, "group": req.group,
        "dataset": req.dataset, "algorithm": req.algorithm, "function": entry["function"],
        "k": req.k, "epsilon": req.epsilon, "transform": req.transform,
        "seeds": list(req.seeds), "base_seed": req.base_seed, "init_sets": req.init_sets,
        "dpclust_version": __version__, "git_commit": _git_commit(),
        "code_hash": code_hash(function_module(entry["function"])),
        "versions": _versions(),
    }
    try:
        data = load_processed(req.data_path)
    except DatasetUnavailable as exc:
        record.update(status="data_unavailable", reason=str(exc), delta=None, settings=settings, runs=[])
        return _jsonable(record)
    registry_entry = load_registry(req.registry_path).dataset(req.dataset)
    X, bounds = apply_transform(req.transform, data.X, registry_entry)
    delta = resolve_delta(req.delta, X.shape[0])
    X = validate_inputs(X, req.k, req.epsilon, delta)
    settings = dict(settings, bounds=[float(bounds[0]), float(bounds[1])])
    record.update(status="ok", reason="", delta=delta, bounds=settings["bounds"],
                  dataset_sha256=str(data.attrs.get("sha256", "")), n=int(X.shape[0]), d=int(X.shape[1]))
    runs = []
    pool = [derive_seed(req.base_seed, "init", req.dataset, req.k, j) for j in range(req.init_sets or 0)]
    for seed in req.seeds:
        init_seed = pool[seed % len(pool)] if pool else derive_seed(req.base_seed, "init", req.dataset, req.k, seed)
        rng = np.random.default_rng(derive_seed(req.base_seed, "run", req.dataset, req.algorithm, req.k,
                                                req.epsilon, seed))
        run_settings = dict(settings, init_seed=init_seed)
        if pool:
            run_settings["init_pool_seeds"] = pool
        start = time.perf_counter()
        result = function(X, req.k, req.epsilon, delta, rng, run_settings)
        wall = time.perf_counter() - start
        _check_spend(req, result, delta, private)
        centers = np.asarray(result.centers, dtype=float)
        if centers.shape != (req.k, X.shape[1]) or not np.isfinite(centers).all():
            raise DPClustError(f"{req.algorithm} returned centres of shape {centers.shape} "
                               f"(expected {(req.k, X.shape[1])}) or non-finite values")
        run = {"seed": seed, "init_seed": init_seed, "epsilon_spent": result.epsilon_spent,
               "delta_spent": result.delta_spent, "ledger": result.ledger,
               "iterations": result.iterations, **all_costs(X, centers), "info": result.info,
               "wall_time_s": wall}
        if req.store_centers:
            run["centers"] = centers
        runs.append(run)
    record["settings"] = {k: v for k, v in settings.items()}
    record["runs"] = runs
    return _jsonable(record)


def _check_spend(req: RunRequest, result, delta: float, private: bool) -> None:
    budget = req.epsilon if private else 0.0
    if result.epsilon_spent > (budget or 0.0) * (1 + SPEND_TOLERANCE) + 1e-15:
        raise PrivacyBudgetViolation(f"{req.algorithm} spent epsilon {result.epsilon_spent!r} > budget {budget!r}")
    if result.delta_spent > delta * (1 + SPEND_TOLERANCE) + 1e-300:
        raise PrivacyBudgetViolation(f"{req.algorithm} spent delta {result.delta_spent!r} > budget {delta!r}")


def write_json_atomic(obj: dict, path: str | Path) -> None:
    """Write JSON (sorted keys, no timestamps) via a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, sort_keys=True, separators=(",", ":"), allow_nan=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
