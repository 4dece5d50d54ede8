"""SLURM bundles and requests of run jobs (dpclust.cluster_resources), on the test preset's plan."""
from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from dpclust import cluster_resources
from dpclust.workflow import load_config, plan

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs():
    return plan(load_config(REPO / "config", overrides={"preset": "test"})).runs


@pytest.mark.parametrize("size", [1, 7, 30])
def test_bundles_hold_at_most_size_jobs_of_one_dataset(runs, size):
    bundles = cluster_resources.bundle_ids(runs, size)
    assert set(bundles) == {j.path for j in runs}
    members = defaultdict(list)
    for job in runs:
        members[bundles[job.path]].append(job)
    assert all(len(jobs) <= size for jobs in members.values())
    assert all(len({j.dataset for j in jobs}) == 1 for jobs in members.values())
    per_dataset = Counter(j.dataset for j in runs)
    assert len(members) == sum(math.ceil(n / size) for n in per_dataset.values())
    # fixed by the plan: the same jobs in any order give the same bundles
    assert cluster_resources.bundle_ids(list(reversed(runs)), size) == bundles


def test_bundle_size_must_be_positive(runs):
    with pytest.raises(ValueError):
        cluster_resources.bundle_ids(runs, 0)


def test_requests_grow_with_seeds_and_attempts(runs):
    measured = [j for j in runs if cluster_resources.estimate(j).basis.startswith("measured")]
    assert measured
    job = max(measured, key=lambda j: cluster_resources.estimate(j).seconds)
    est = cluster_resources.estimate(job)
    assert cluster_resources.runtime_min(job, 2) == 2 * cluster_resources.runtime_min(job, 1)
    assert cluster_resources.mem_mb(job, 2) == 2 * cluster_resources.mem_mb(job, 1)
    more = dataclasses.replace(job, seed_count=job.seed_count * 10)
    assert cluster_resources.estimate(more).seconds > est.seconds
