"""The previous implementation, beside the current one, so a speed-up is measured as a ratio in one
run (same data, same machine state).

* `load_previous(module, commit)`: one module of dpclust as it was at `commit`, executed as a
  submodule of today's package (its relative imports resolve to today's dpclust): right when that
  module's own code is what changed.
* `previous_src(commit)`: the whole `src/` tree at `commit`, exported to a temporary directory, for
  a child process (`PYTHONPATH=<it>`) when the change spans modules.
"""
from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True).stdout


def load_previous(module: str, commit: str):
    path = "src/" + module.replace(".", "/") + ".py"
    source = _git("show", f"{commit}:{path}").decode()
    name = f"{module}__at_{commit.replace('~', '_').replace('^', '_')}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = module.rsplit(".", 1)[0]
    sys.modules[name] = mod
    exec(compile(source, f"{commit}:{path}", "exec"), mod.__dict__)
    return mod


def previous_src(commit: str) -> str:
    out = Path(tempfile.mkdtemp(prefix="dpclust-previous-"))
    with tarfile.open(fileobj=io.BytesIO(_git("archive", commit, "src")), mode="r:") as tar:
        if hasattr(tarfile, "data_filter"):      # Python ≥ 3.11.4
            tar.extractall(out, filter="data")
        else:
            tar.extractall(out)
    return str(out / "src")
