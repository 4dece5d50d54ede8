"""SLURM bundles and requests of run jobs (dpclust.pipeline.cluster_resources), on the test preset's plan."""
from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from dpclust.pipeline import cluster_resources
from dpclust.pipeline.configuration import load_config
from dpclust.pipeline.planning import plan

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def the_plan():
    return plan(load_config(REPO / "config", overrides={"preset": "test"}))


@pytest.fixture(scope="module")
def runs(the_plan):
    return the_plan.runs


@pytest.mark.parametrize("size", [1, 7, 30])
def test_bundles_hold_at_most_size_jobs_of_one_dataset(the_plan, size):
    runs = the_plan.batches  # the run jobs
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


def test_a_run_job_asks_for_its_blocks_in_series(the_plan):
    """A batch runs its blocks one after another in one process: one start-up, the sum of their
    run times, the largest of their memories."""
    table = cluster_resources.load_costs()
    batch = max(the_plan.batches, key=lambda b: len(b.cells))
    assert len(batch.cells) > 1
    parts = [cluster_resources.estimate(job, table) for job in batch.cells]
    est = cluster_resources.estimate_batch(batch, table)
    assert est.seconds == pytest.approx(table.base_s + sum(p.seconds - table.base_s for p in parts))
    assert est.peak_mb == max(p.peak_mb for p in parts)
    assert cluster_resources.runtime_min(batch) == est.runtime_min()


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


def _table(*rows):
    return cluster_resources.CostTable(1.0, 60.0, tuple(
        cluster_resources.CostRow("p", "alg", dataset, k, sec, 100.0) for dataset, k, sec in rows))


def test_an_unmeasured_dataset_is_scaled_from_the_smallest_measured_one_that_covers_it(runs):
    """Rule 3: a job on a dataset the algorithm was never measured on takes the smallest measured
    dataset at least as large in n and in d (so it errs long), not the largest: iris (150 x 4) is
    not charged MNIST's cost. Larger than every measured one: the largest, scaled up by n x d."""
    shape = cluster_resources._shape
    assert shape("iris") == (150.0, 4.0)
    table = _table(("s1", 15, 0.5), ("adult_num", 5, 2.0), ("mnist70k", 10, 90.0))
    job = dataclasses.replace(runs[0], paper="p", algorithm="alg", k=3, seed_count=10)

    def est(dataset):
        return cluster_resources.estimate(dataclasses.replace(job, dataset=dataset), table)

    covering = [m for m in ("s1", "adult_num", "mnist70k")
                if shape(m)[0] >= shape("iris")[0] and shape(m)[1] >= shape("iris")[1]]
    source = min(covering, key=cluster_resources._nd)
    assert source == "adult_num"                    # s1 has d = 2 < 4; MNIST covers it but is larger
    assert est("iris").basis.endswith(f"{source} k=5")
    assert est("iris").seconds == pytest.approx(1.0 + 10 * 2.0)
    # a dataset larger (in n x d) than every measured one: the largest, scaled up by n x d
    factor = cluster_resources._nd("higgs") / cluster_resources._nd("mnist70k")
    assert factor > 1
    assert est("higgs").basis.endswith("mnist70k k=10")
    assert est("higgs").seconds == pytest.approx(1.0 + 10 * 90.0 * factor)
    # an unknown dataset (a user's): the largest, unscaled
    assert est("not_in_the_registry").basis.endswith("mnist70k k=10")
    assert est("not_in_the_registry").seconds == pytest.approx(1.0 + 10 * 90.0)
