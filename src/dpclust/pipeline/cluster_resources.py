"""What one `run` job asks a cluster scheduler for: wall time and memory, from measured costs.

`profiles/slurm/costs.tsv` (written by `benchmarks/cluster_costs.py`) holds, per (paper, algorithm,
dataset, k), the measured seconds per seed and the peak memory of real `python -m dpclust.pipeline run`
processes. For a planned block J of a run job (`dpclust.pipeline.run_plan.RunJob`: s seeds, k clusters,
n x d data):

    seconds(J) = base_s + s * sec_per_seed(row) * max(1, k / k_row) * max(1, nd(J) / nd(row))
    peak_mb(J) = max(peak_mb(row), base_mb + DATA_COPIES * data_mb(J))   (second term: other data only)

where `row` is the first that exists of
  1. the same paper, algorithm and dataset, at the smallest measured k >= k (else the largest k);
  2. the same algorithm and dataset measured for another paper (same rule for k);
  3. the same algorithm (this paper's rows first) on the smallest dataset it was measured on that is
     at least as large in n and in d, else on the largest (n and d from config/datasets.yaml, so a
     dataset unavailable where the table was measured is sized too);
and a job of an algorithm never measured gets DEFAULT_SECONDS and DEFAULT_PEAK_MB. Seconds per seed
are the largest over the row's jobs (every epsilon), so the estimate errs long.

The request (`runtime_min`, `mem_mb`) adds what a job costs inside a bundle (a SLURM job running
several run jobs one after another through Snakemake: one Snakemake start-up per job and the memory
of two Snakemake processes beside the run), a safety factor, and grows with each retry:

    runtime = ceil((BUNDLE_OVERHEAD_S + TIME_SAFETY * seconds) / 60) * attempt       [minutes]
    mem_mb  = ceil((MEM_SAFETY * peak_mb + SNAKEMAKE_MB) / 100) * 100 * attempt

A run job (a `RunBatch`: blocks run one after another in one process) costs one base_s, the sum of
its blocks' seconds above it, and the largest of their peaks (`estimate_batch`). A bundle of jobs
that run one after another asks for the sum of their runtimes and the largest of
their memories (Snakemake's group resources with one core per bundle: profiles/slurm/config.yaml).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from dpclust.pipeline.resolve import REPO_ROOT

COSTS_TSV = REPO_ROOT / "profiles" / "slurm" / "costs.tsv"

TIME_SAFETY = 2.0  # measured on a loaded 2-core machine already; cluster cores may be slower
MEM_SAFETY = 1.5  # peak RSS varies with epsilon and k between jobs of one row
BUNDLE_OVERHEAD_S = 20.0  # Snakemake start-up per job inside a bundle (measured 6-16 s: docs below)
SNAKEMAKE_MB = 300  # two Snakemake processes beside each run in a bundle (measured 135 MB each)
DATA_COPIES = 3.0  # peak RSS above start-up per MB of float64 data (measured up to 3.0: MNIST Lloyd)
DEFAULT_SECONDS = 3600.0  # an algorithm with no measurement at all
DEFAULT_PEAK_MB = 4000.0


@dataclass(frozen=True)
class Estimate:
    seconds: float  # expected wall time of the run itself
    peak_mb: float  # expected peak resident memory of the run process
    basis: str  # which measurement it comes from (for humans and tests)

    def runtime_min(self, attempt: int = 1) -> int:
        return int(math.ceil((BUNDLE_OVERHEAD_S + TIME_SAFETY * self.seconds) / 60.0)) * max(1, attempt)

    def mem_mb(self, attempt: int = 1) -> int:
        return int(math.ceil((MEM_SAFETY * self.peak_mb + SNAKEMAKE_MB) / 100.0)) * 100 * max(1, attempt)


@dataclass(frozen=True)
class CostRow:
    paper: str
    algorithm: str
    dataset: str
    k: int
    sec_per_seed: float
    peak_mb: float


@dataclass(frozen=True)
class CostTable:
    base_s: float
    base_mb: float
    rows: tuple[CostRow, ...]

    def __post_init__(self):
        by_algorithm: dict[str, list[CostRow]] = {}
        for r in self.rows:
            by_algorithm.setdefault(r.algorithm, []).append(r)
        object.__setattr__(self, "_by_algorithm", by_algorithm)

    def select(self, paper: str | None, algorithm: str, dataset: str | None) -> list[CostRow]:
        return [r for r in self._by_algorithm.get(algorithm, ())
                if (paper is None or r.paper == paper) and (dataset is None or r.dataset == dataset)]


@lru_cache(maxsize=4)
def load_costs(path: str | Path = COSTS_TSV) -> CostTable:
    """The measured cost table; `# base_s X` and `# base_mb Y` header comments give the start-up cost.
    Without the file (e.g. a copy of the workflow without `profiles/`), every job gets the default
    request: requests only matter on a cluster, and never change a result."""
    base = {"base_s": 1.0, "base_mb": 60.0}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        parts = line.lstrip("# ").split()
        if line.startswith("#") and len(parts) >= 2 and parts[0] in base:
            base[parts[0]] = float(parts[1])
    body = [line for line in lines if line.strip() and not line.startswith("#")]
    rows = tuple(
        CostRow(r["paper"], r["algorithm"], r["dataset"], int(r["k"]), float(r["sec_per_seed"]), float(r["peak_mb"]))
        for r in csv.DictReader(body, delimiter="\t"))
    return CostTable(base["base_s"], base["base_mb"], rows)


@lru_cache(maxsize=1)
def _registry():
    from dpclust.data import load_registry

    return load_registry()


@cache
def _shape(dataset: str) -> tuple[float, float]:
    """(n, d) of a registry dataset; (0, 0) for an unknown one (e.g. a user's)."""
    try:
        entry = _registry().dataset(dataset)
        return float(entry["n"]), float(entry["d"])
    except Exception:  # noqa: BLE001 - an unknown dataset (e.g. a user's) is treated as measured size
        return 0.0, 0.0


def _nd(dataset: str) -> float:
    n, d = _shape(dataset)
    return n * d


def _scale_from(measured: set[str], dataset: str) -> str:
    """The measured dataset a job on `dataset` is scaled from: the smallest (n x d) of those at least
    as large in both n and d (cost grows with each: a larger one errs long, never short), else the
    largest (then scaled up by n x d). An unknown dataset (no registry entry) gets the largest."""
    n, d = _shape(dataset)
    covering = [m for m in measured if n > 0 and _shape(m)[0] >= n and _shape(m)[1] >= d]
    if covering:
        return min(covering, key=lambda m: (_nd(m), m))
    return max(measured, key=lambda m: (_nd(m), m))


def _at_k(rows: list[CostRow], k: int) -> tuple[CostRow, float]:
    """The row at the smallest measured k >= k (factor 1), else the largest k (factor k / k_row)."""
    above = [r for r in rows if r.k >= k]
    if above:
        kk = min(r.k for r in above)
        same = [r for r in above if r.k == kk]
        return max(same, key=lambda r: r.sec_per_seed), 1.0
    kk = max(r.k for r in rows)
    same = [r for r in rows if r.k == kk]
    return max(same, key=lambda r: r.sec_per_seed), k / kk


def estimate(job, table: CostTable | None = None) -> Estimate:
    """Expected seconds and peak MB of one planned run job (a `dpclust.pipeline.run_plan.RunJob`)."""
    table = table or load_costs()
    k, seeds = int(job.k), int(job.seed_count)
    for paper, basis in ((job.paper, "measured"), (None, "measured for another paper")):
        rows = table.select(paper, job.algorithm, job.dataset)
        if rows:
            row, k_factor = _at_k(rows, k)
            seconds = table.base_s + seeds * row.sec_per_seed * k_factor
            return Estimate(seconds, row.peak_mb, f"{basis}: {row.paper} {row.algorithm} {row.dataset} k={row.k}")
    for paper in (job.paper, None):
        rows = table.select(paper, job.algorithm, None)
        if rows:
            source = _scale_from({r.dataset for r in rows}, job.dataset)
            row, k_factor = _at_k([r for r in rows if r.dataset == source], k)
            nd_job, nd_row = _nd(job.dataset), _nd(source)
            size_factor = max(1.0, nd_job / nd_row) if nd_row > 0 else 1.0
            seconds = table.base_s + seeds * row.sec_per_seed * k_factor * size_factor
            data_mb = 8.0 * nd_job / 2**20
            peak = max(row.peak_mb, table.base_mb + DATA_COPIES * data_mb)
            return Estimate(seconds, peak, f"scaled by n*d from {row.paper} {row.algorithm} {source} k={row.k}")
    return Estimate(DEFAULT_SECONDS, DEFAULT_PEAK_MB, "default (algorithm never measured)")


def run_seconds(job, table: CostTable | None = None) -> float:
    """Expected seconds of one run (one seed) of a planned block, start-up excluded: what an adaptive
    look prices its runs at (dpclust.pipeline.replication and racing). From the committed table, not
    from the recorded run times, so that a cap stops the same looks on an idle or a loaded machine."""
    table = table or load_costs()
    return round((estimate(job, table).seconds - table.base_s) / max(int(job.seed_count), 1), 3)


def estimate_batch(batch, table: CostTable | None = None) -> Estimate:
    """Expected seconds and peak MB of one `run` job (a `dpclust.pipeline.run_plan.RunBatch`, whose blocks run
    one after another in one process): one start-up, the blocks' run times added, their largest peak."""
    table = table or load_costs()
    parts = [estimate(job, table) for job in batch.cells]
    seconds = table.base_s + sum(p.seconds - table.base_s for p in parts)
    worst = max(parts, key=lambda p: p.peak_mb)
    return Estimate(seconds, worst.peak_mb, worst.basis)


_ESTIMATES: dict[tuple, Estimate] = {}


def _estimate_cached(job) -> Estimate:
    """The estimate of a RunBatch (or of one block, a RunJob), computed once per planned job."""
    batch = hasattr(job, "cells")
    key = (job.path,) if batch else (job.path, job.cell)
    if key not in _ESTIMATES:
        _ESTIMATES[key] = estimate_batch(job) if batch else estimate(job)
    return _ESTIMATES[key]


def runtime_min(job, attempt: int = 1) -> int:
    """SLURM `runtime` (minutes) of one run job (a RunBatch); a bundle asks for the sum over its jobs."""
    return _estimate_cached(job).runtime_min(attempt)


def mem_mb(job, attempt: int = 1) -> int:
    """SLURM memory (MB) of one run job (a RunBatch); a bundle asks for the largest over its jobs."""
    return _estimate_cached(job).mem_mb(attempt)


def bundle_ids(jobs, size: int) -> dict[str, str]:
    """The bundle (Snakemake group id) of each run job (batch), by its output path: `runs_<dataset>_<i>`.

    Jobs of one dataset, in order of their paths, are cut into bundles of at most `size`. Bundles are
    fixed here, from the plan, rather than left to Snakemake's `--group-components` alone: Snakemake
    (9.27) forms groups again after every checkpoint (here: every prepared dataset) and then merges
    groups it had already merged, so bundles grew past their size (a "bundle" of 280 run jobs) and
    asked SLURM for the runtime of a few of their jobs only (snakemake/snakemake#1628, #2151).
    With one id per bundle, each id holding at most `size` jobs, `--group-components runs=size`
    merges exactly one bundle's jobs, however often it runs. One dataset per bundle: a bundle's
    jobs enter the workflow together, when that dataset's checkpoint completes.
    """
    if size < 1:
        raise ValueError(f"bundle size must be positive, not {size}")
    by_dataset: dict[str, list[str]] = {}
    for job in jobs:
        by_dataset.setdefault(job.dataset, []).append(job.path)
    out: dict[str, str] = {}
    for dataset, paths in by_dataset.items():
        for i, path in enumerate(sorted(set(paths))):
            out[path] = f"runs_{dataset}_{i // size}"
    return out
