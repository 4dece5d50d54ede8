"""Seeded synthetic datasets. Every parameter is a named setting of the registry entry
(config/datasets.yaml, commented STATED / EXT / MISSING-REC); nothing is a silent constant.

Generators (``entry["generator"]``):

* ``sphere_mixture`` (balcan_synth): k centres ``center_radius · u`` with u uniform on the unit
  sphere, each point = its centre + ``noise_radius · v`` with v uniform on the unit sphere
  (the style of Balcan et al.'s demo.m: ``10*normc(randn(d,k))`` + ``normc(randn(d,n))``); equal
  sizes, the first n mod k clusters one point larger. Points in cluster blocks.
* ``nguyen_blocks`` (nguyen_synth): the generator described for Nguyen et al.'s our_reader.cpp:
  centre coordinates ``center_sd · N(0,1)``, point = centre + ``noise_sd · N(0,1)`` per
  coordinate, clipped to ``clip``; point i belongs to centre ``min(i // (n // k), k - 1)``.
  numpy's ``default_rng(seed)`` replaces the C++ ``mt19937(500)`` + ``normal_distribution``
  stream: same distribution and seed value, different numbers (the C++ stream is not replicated).
* ``separated_gaussians`` (su_synth_k{K}_d{D}, synth3d): k centres uniform in ``center_box``^d by
  rejection sampling so that every pair is at least ``min_separation`` apart; isotropic
  ``sigma`` noise; equal sizes; clipped to ``clip``.
* ``chunked_mixture`` (higgs_like, benchmarks only): k centres ``center_sd · N(0,1)``, each point a
  uniformly chosen centre + ``noise_sd · N(0,1)``, clipped; produced ``chunk_rows`` rows at a
  time (chunk c draws from the c-th child of ``SeedSequence(seed)``), written straight to HDF5.

``seed`` may be an int or a list of ints (``default_rng([2016, K, D])``). Labels (the generating
component) are stored as ``y``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from dpclust.api import DPClustError

MAX_CENTRE_TRIES = 100_000


def _seed(settings: Mapping[str, Any]):
    s = settings["seed"]
    return [int(v) for v in s] if isinstance(s, (list, tuple)) else int(s)


def _equal_labels(n: int, k: int) -> np.ndarray:
    sizes = np.full(k, n // k)
    sizes[: n % k] += 1
    return np.repeat(np.arange(k), sizes)


def _unit_rows(rng: np.random.Generator, rows: int, d: int) -> np.ndarray:
    v = rng.standard_normal((rows, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _clip(X: np.ndarray, clip) -> np.ndarray:
    if clip is not None:
        np.clip(X, float(clip[0]), float(clip[1]), out=X)
    return X


def sphere_mixture(s: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    n, d, k = int(s["n"]), int(s["d"]), int(s["k"])
    if s.get("sizes", "equal") != "equal":
        raise DPClustError(f"sphere_mixture supports sizes: equal, got {s.get('sizes')!r}")
    rng = np.random.default_rng(_seed(s))
    centres = float(s["center_radius"]) * _unit_rows(rng, k, d)
    labels = _equal_labels(n, k)
    X = centres[labels] + float(s["noise_radius"]) * _unit_rows(rng, n, d)
    return X, labels


def nguyen_blocks(s: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    n, d, k = int(s["n"]), int(s["d"]), int(s["k"])
    if s.get("block_rule", "floor") != "floor":
        raise DPClustError(f"nguyen_blocks supports block_rule: floor, got {s.get('block_rule')!r}")
    rng = np.random.default_rng(_seed(s))
    centres = float(s["center_sd"]) * rng.standard_normal((k, d))
    labels = np.minimum(np.arange(n) // max(n // k, 1), k - 1)
    X = centres[labels] + float(s["noise_sd"]) * rng.standard_normal((n, d))
    return _clip(X, s.get("clip")), labels


def separated_centres(rng: np.random.Generator, k: int, d: int, box, min_sep: float) -> np.ndarray:
    """k points uniform in box^d, pairwise >= min_sep apart (sequential rejection sampling)."""
    lo, hi = float(box[0]), float(box[1])
    centres = np.empty((0, d))
    tries = 0
    while centres.shape[0] < k:
        # draw candidates in batches (vectorised), accept them one at a time
        for c in rng.uniform(lo, hi, size=(256, d)):
            tries += 1
            if centres.shape[0] == 0 or np.min(np.linalg.norm(centres - c, axis=1)) >= min_sep:
                centres = np.vstack([centres, c])
                if centres.shape[0] == k:
                    break
        if tries > MAX_CENTRE_TRIES:
            raise DPClustError(f"could not place {k} centres {min_sep} apart in [{lo}, {hi}]^{d} "
                               f"after {MAX_CENTRE_TRIES} draws; lower min_separation or widen center_box")
    return centres


def separated_gaussians(s: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    n, d, k = int(s["n"]), int(s["d"]), int(s["k"])
    if s.get("sizes", "equal") != "equal":
        raise DPClustError(f"separated_gaussians supports sizes: equal, got {s.get('sizes')!r}")
    rng = np.random.default_rng(_seed(s))
    centres = separated_centres(rng, k, d, s["center_box"], float(s["min_separation"]))
    labels = _equal_labels(n, k)
    X = centres[labels] + float(s["sigma"]) * rng.standard_normal((n, d))
    return _clip(X, s.get("clip")), labels


def chunked_mixture_chunks(s: Mapping[str, Any]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    n, d, k = int(s["n"]), int(s["d"]), int(s["k"])
    chunk = int(s["chunk_rows"])
    n_chunks = -(-n // chunk)
    seeds = np.random.SeedSequence(_seed(s)).spawn(n_chunks + 1)
    centres = float(s["center_sd"]) * np.random.default_rng(seeds[0]).standard_normal((k, d))
    for c in range(n_chunks):
        rows = min(chunk, n - c * chunk)
        rng = np.random.default_rng(seeds[c + 1])
        labels = rng.integers(0, k, size=rows)
        X = centres[labels] + float(s["noise_sd"]) * rng.standard_normal((rows, d))
        yield _clip(X, s.get("clip")), labels


GENERATORS = {
    "sphere_mixture": sphere_mixture,
    "nguyen_blocks": nguyen_blocks,
    "separated_gaussians": separated_gaussians,
}
CHUNKED_GENERATORS = {"chunked_mixture": chunked_mixture_chunks}


def generate_chunks(entry: Mapping[str, Any]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(X, y) row chunks of a synthetic registry entry (one chunk unless the generator is chunked)."""
    gen = entry.get("generator")
    settings = entry.get("settings") or {}
    if gen in CHUNKED_GENERATORS:
        return CHUNKED_GENERATORS[gen](settings)
    if gen in GENERATORS:
        return iter([GENERATORS[gen](settings)])
    raise DPClustError(f"unknown generator {gen!r}; valid: {', '.join(sorted([*GENERATORS, *CHUNKED_GENERATORS]))}")


def generate(entry: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The whole synthetic dataset in memory (not for higgs_like at full size)."""
    chunks = list(generate_chunks(entry))
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])
