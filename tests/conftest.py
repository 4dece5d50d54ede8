"""Shared fixtures: repository paths and the local dataset mirror (../shared/datasets)."""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_datasets_dir() -> Path:
    """The read-only mirror beside the repository (CI clones main next to ../shared)."""
    env = os.environ.get("DPCLUST_TEST_MIRROR")
    path = Path(env) if env else REPO.parent / "shared" / "datasets"
    return path


def load_benchmark(name: str):
    """A script of benchmarks/ imported as a module (its functions tested without running main)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_collection_modifyitems(config, items):
    """Run the SLURM cluster test (marker `slurm`) last: it installs the SLURM client, and every
    later `snakemake` call would probe the cluster (tests/test_slurm_cluster.py). Start the
    end-to-end workflow files (marker `workflow`) first: scripts/test.sh hands files to the workers in
    this order (`--dist loadfile --no-loadscope-reorder`), and tests/test_workflow_e2e.py, one copy's
    life in order, is the suite's longest file: a late start would make it the suite's tail."""
    items.sort(key=lambda item: (item.get_closest_marker("slurm") is not None,
                                 item.get_closest_marker("workflow") is None))  # stable otherwise


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture
def cfg_dir(tmp_path) -> Path:
    """A copy of the whole config/ to edit (a test module may give a smaller one of its own)."""
    d = tmp_path / "config"
    shutil.copytree(REPO / "config", d)
    return d


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = shared_datasets_dir()
    if not (path / "MANIFEST.md").exists():
        pytest.fail(f"dataset mirror not found at {path}: clone the repo beside ../shared or set DPCLUST_TEST_MIRROR")
    return path


@pytest.fixture(scope="session")
def prepared_from_mirror(tmp_path_factory, mirror):
    """A function: registry dataset name -> its processed .h5, fetched from the mirror and prepared
    once per session (in a fresh temporary directory)."""
    from dpclust.data import fetch_source, load_registry, prepare_dataset

    registry = load_registry(REPO / "config" / "datasets.yaml")
    done: dict[str, Path] = {}

    def prepare(name: str) -> Path:
        if name not in done:
            d = tmp_path_factory.mktemp(f"data-{name}")
            for source in registry.sources_for(name):
                fetch_source(source, raw_dir=d / "raw", mirror=str(mirror), registry=registry)
            prepare_dataset(name, raw_dir=d / "raw", out_path=d / f"{name}.h5", registry=registry)
            done[name] = d / f"{name}.h5"
        return done[name]

    return prepare


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def blobs(rng) -> np.ndarray:
    """Three well separated 2-D Gaussian blobs in [0, 1]^2 (300 points)."""
    centers = np.array([[0.2, 0.2], [0.8, 0.2], [0.5, 0.8]])
    X = np.concatenate([c + 0.03 * rng.standard_normal((100, 2)) for c in centers])
    return np.clip(X, 0.0, 1.0)
