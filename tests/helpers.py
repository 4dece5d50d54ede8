"""Small helpers shared by test files."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the project as a user's checkout holds it, without its venv, data or results
PROJECT_FILES = ("Snakefile", "config", "workflow", "src", "profiles", "pyproject.toml")
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def copy_project(dst: Path) -> Path:
    """A copy of the project in `dst`, for a test that runs the workflow there."""
    for name in PROJECT_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dst / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(src, dst / name)
    return dst


def project_env(work: Path) -> dict:
    """The environment of a Snakemake run of the copy in `work`: its own sources, no dataset mirror."""
    env = dict(os.environ, PYTHONPATH=str(work / "src"))
    env.pop("DPCLUST_DATA_MIRROR", None)
    return env


def timeless(obj):
    """A record (or any JSON value) without its wall times, the only values a re-run may change."""
    if isinstance(obj, dict):
        return {k: timeless(v) for k, v in obj.items() if k != "wall_time_s"}
    if isinstance(obj, list):
        return [timeless(v) for v in obj]
    return obj
