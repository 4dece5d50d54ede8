"""What one run costs, for the adaptive looks' CPU caps: a committed price table, not the clock.

A replication look (dpclust.pipeline.replication) or a racing look (dpclust.pipeline.racing) runs only
while the CPU it adds stays within its declared cap. Priced by the runs' recorded times, that decision
(and so a verdict) would depend on how loaded the machine was: the same runs record longer times on
a busy machine, and a claim could be left "not decidable" on one run and decided on another. Priced
by this table it is a function of the commit alone.

`benchmarks/results/run_prices.tsv` (written by `benchmarks/estimate_full_protocol.py --prices`) holds
the CPU seconds of one run per timing sample: (algorithm function, dataset, transform, k, settings)
at the ε points the estimator timed (start-up and data loading excluded; see that script; a dataset
no mirror holds is timed on a stand-in of its n × d, so a look costs the same with or without it:
the table's header says which datasets it covers and how). A block's
price per run is interpolated between the sampled ε linearly in log ε, as the estimator does. A
block the table does not cover (a new setting, a dataset the table's machine could not have) is
priced by the SLURM cost table instead (`cluster_resources.run_seconds`, which errs long), so a cap
may stop it sooner, never later; regenerate the table to price it.
"""
from __future__ import annotations

import csv
import hashlib
import json
import math
from functools import cache
from pathlib import Path

from dpclust.pipeline.resolve import REPO_ROOT

PRICES_TSV = REPO_ROOT / "benchmarks" / "results" / "run_prices.tsv"
COLUMNS = ("function", "dataset", "transform", "k", "settings", "epsilon", "cpu_s_per_run")


def settings_id(settings: dict) -> str:
    """A short, stable name of a block's settings (the table's `settings` column)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def sample_key(spec: dict) -> tuple[str, str, str, int, str]:
    """What a run's price depends on besides ε: (function, dataset, transform, k, settings id)."""
    return (str(spec["function"]), str(spec["dataset"]), str(spec["transform"]), int(spec["k"]),
            settings_id(spec["settings"]))


@cache
def load_prices(path: str | Path = PRICES_TSV) -> dict[tuple, dict]:
    """sample key -> {ε (None: a non-private run): CPU seconds per run}; {} when there is no table."""
    path = Path(path)
    if not path.exists():
        return {}
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    out: dict[tuple, dict] = {}
    for row in csv.DictReader(lines, delimiter="\t"):
        key = (row["function"], row["dataset"], row["transform"], int(row["k"]), row["settings"])
        eps = float(row["epsilon"]) if row["epsilon"] else None
        out.setdefault(key, {})[eps] = float(row["cpu_s_per_run"])
    return out


def interpolate(epsilon: float | None, timed: dict) -> float:
    """Seconds per run at `epsilon` from the sampled ε (`timed`: ε -> s/run), linear in log ε between
    the sampled neighbours, clamped at the ends; a single sample (or a non-private run) as is."""
    points = sorted(e for e in timed if e is not None)
    if epsilon is None or not points:
        return float(timed.get(None, next(iter(timed.values()))))
    if len(points) == 1:
        return float(timed[points[0]])
    e = min(max(float(epsilon), points[0]), points[-1])
    for lo, hi in zip(points, points[1:]):
        if e <= hi:
            w = (math.log(e) - math.log(lo)) / (math.log(hi) - math.log(lo))
            return float(timed[lo] + w * (timed[hi] - timed[lo]))
    return float(timed[points[-1]])


def priced_blocks(plan) -> list:
    """The planned blocks whose price a cap reads: every replication look's, and the raced groups'
    DP blocks of a race with a CPU cap (`dpclust.pipeline.run_plan.Plan`)."""
    blocks = [job for item in plan.replicated for jobs in item.rounds for job in jobs]
    blocks += [job for item in plan.race_owners if (item.race or {}).get("cpu_hours") is not None
               for job in item.runs if job.group in item.race["groups"] and job.epsilon is not None]
    return blocks


def price_s(job, path: str | Path = PRICES_TSV) -> float:
    """CPU seconds of one run of a planned block (`dpclust.pipeline.run_plan.RunJob`), rounded to the
    millisecond so that a price reads the same wherever it is computed."""
    timed = load_prices(str(path)).get(sample_key(job.spec))
    if timed:
        return round(interpolate(job.epsilon, timed), 3)
    from dpclust.pipeline.cluster_resources import run_seconds

    return run_seconds(job)
