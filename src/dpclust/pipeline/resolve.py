"""Small run-time helpers shared by the runner and the planner.

Kept apart from `dpclust.pipeline.planning` on purpose: the run jobs' code hash covers the runner's import
closure, so editing how jobs are *planned* must not re-run the experiments.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

from dpclust.api import DPClustError

REPO_ROOT = Path(__file__).resolve().parents[3]


def delta_reads_n(delta) -> bool:
    """Whether a δ spec is an expression of n ('n^-1.5', 'c/n'), i.e. its value is a function of the
    dataset size (a number is not)."""
    if isinstance(delta, (int, float)) or delta is None:
        return False
    text = str(delta).replace(" ", "")
    return text.startswith("n^") or text.endswith("/n")


def delta_size(settings, n: int) -> int:
    """The n a δ expression of n is resolved from: the run's public size ``settings["public_n"]`` when
    set (the public N of the guarantees "n public", `dpclust.blocks.public_size`: the same on both
    neighbours, so δ is too), else the data's own size `n`."""
    given = (settings or {}).get("public_n")
    return int(n) if given is None else int(given)


def resolve_delta(delta, n: int) -> float:
    """δ from a number or an expression of n: 'n^-1.5', '1/n', '0.1/n'. Give `n` as
    `delta_size(settings, n_data)`, so that a run with a public size resolves δ from it."""
    if isinstance(delta, (int, float)):
        value = float(delta)
    else:
        text = str(delta).replace(" ", "")
        try:
            if text.startswith("n^"):
                value = float(n) ** float(text[2:])
            elif text.endswith("/n"):
                value = float(text[:-2]) / n
            else:
                value = float(text)
        except ValueError:
            raise DPClustError(f"cannot read delta {delta!r}: use a number, 'n^-1.5' or 'c/n'") from None
    if not (math.isfinite(value) and 0 <= value < 1):
        raise DPClustError(f"delta must be in [0, 1), got {delta!r} = {value!r}")
    return value


def import_object(spec: str, default_module: str | None = None):
    """'pkg.mod:name' (or 'name' looked up in `default_module`) → the object."""
    module_name, _, attr = spec.rpartition(":")
    if not module_name:
        if not default_module:
            raise DPClustError(f"{spec!r} needs the form 'package.module:function'")
        module_name, attr = default_module, spec
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise DPClustError(f"cannot import {module_name!r} for {spec!r}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise DPClustError(f"{module_name!r} has no {attr!r} (needed for {spec!r})") from None


def function_module(spec: str, default_module: str | None = None) -> str:
    module_name, _, _ = spec.rpartition(":")
    return module_name or default_module or ""


def sensitivity_declarations(spec) -> list[dict]:
    """An item's `sensitivity` (dpclust.pipeline.sensitivity), one declaration or a list, as a list: read
    by the planner (the variant groups a figure leaves out) and by the checks step."""
    return [] if not spec else list(spec) if isinstance(spec, list) else [spec]
