"""Load a module of dpclust as it was at an earlier commit, beside the current one, so a speed-up is
measured as a ratio against the previous implementation in one run (same process, same data).

    from previous import load_previous
    old = load_previous("dpclust.su2016.gupt", "HEAD~1")

The old source is read with `git show <commit>:src/<module path>.py` and executed as a submodule of
the current package (relative imports resolve to today's dpclust), which is right for a module
whose own code is what changed.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_previous(module: str, commit: str):
    path = "src/" + module.replace(".", "/") + ".py"
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{path}"], check=True,
                            capture_output=True, text=True).stdout
    name = f"{module}__at_{commit.replace('~', '_').replace('^', '_')}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = module.rsplit(".", 1)[0]
    sys.modules[name] = mod
    exec(compile(source, f"{commit}:{path}", "exec"), mod.__dict__)
    return mod
