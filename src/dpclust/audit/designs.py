"""Neighbouring designs and output statistics of the privacy audit.

A *design* is a pair of tiny neighbouring datasets in the public box [0, 1]^d (d = 2, but d = 100
for ``high_dim_corner``) built to stress one way a clustering algorithm can leak a record, and the
scalar statistic of the released centres that an attacker would look at. Every design is a
deterministic function of its parameters (`n`, the size of D, and `k`) and of the neighbouring relation:

* ``add/remove one record``: D' = D ∪ {target} (|D'| = n + 1);
* ``replace one record (n public)``: D' = D with its last record replaced by the target
  (|D'| = |D| = n), for guarantees that treat n as public (quantities that depend on n: DPLloyd-TOPS's
  iteration count, EUGkM's grid, GkM's blocks, PGkM's rounds).

The designs (`DESIGNS`):

``corner_outlier`` (default n = 1, k = 1: one record of two is the difference)
    D: n records uniform in [0, 0.05]^2 (the opposite corner); the target is the corner (1, 1), the
    record with the largest effect on any sum or distance. Statistic: the distance from the corner to
    the nearest released centre.
``verbatim_record`` (default n = 3, k = 3: the target is among the initial records with
    probability 3/4)
    D: n records uniform in [0.1, 0.3]^2; the target is a distinctive interior
    record far from them, (0.618034, 0.707107). An algorithm that starts from data records
    (``init: random_points``) and keeps a centre whose noisy count is too small releases the target
    exactly, an event of probability 0 under D. Statistic: the distance from the target to the
    nearest centre (0 = released verbatim).
``lone_point`` (default n = 20, k = 2)
    The cell / node flip: D: n records uniform in [0.05, 0.35]^2; the target (0.8125, 0.8125) lies
    alone in an otherwise empty region, so it turns one grid cell / tree node from empty to
    non-empty at every dyadic resolution of 1/2 or finer. Statistic: the distance from the target to the
    nearest centre.
``line_sums`` (default n = 20, k = 1)
    Exact sums: D: n records on the diagonal {x = y} (x uniform in [0.2, 0.5]); the target
    (0.9, 0.1) lies off it. Any cluster mean or sum of records of D lies exactly on the diagonal,
    so an algorithm that releases an exact sum (even divided by a noisy count) releases a centre
    exactly on it under D and off it under D'. Statistic: the largest distance of a released
    centre from the diagonal.
``high_dim_corner`` (default n = 1, k = 1; d = 100: Balcan et al.'s authors' calibration)
    D: n records at the centre of [0, 1]^100; the target is the corner (1, …, 1). Statistic: the
    largest number of coordinates of a released centre strictly inside the box (0, 1), i.e. not
    clipped to its faces. It reads the per-coordinate noise scale of a released noisy mean. The
    authors' code (`balcan2017.balcan_authors`, `dpclust.balcan2017.algorithm._authors_recovery`)
    releases clip(x̄_S + Lap(Λ/(ε_s·|S|))) in every coordinate: Λ = √d·h, the L2 radius, stands in
    for the L1 sensitivity d·h = √d·Λ of the cluster sum (the noise is √d = 10 times too small),
    and |S| is the EXACT count. At n = 1 the cluster holds 1 record under D and 2 under D': the
    scale halves, and the number of unclipped coordinates, ≈ d·|S|·h·ε_s/Λ = |S|·ε_s·√d, doubles
    (≈ 1.65 vs 3.3 at the authors' last stage, ε_s = ε/6). With noise calibrated to the L1
    sensitivity, √d times as large, it would be ≈ |S|·ε_s (0.17 vs 0.33); with a noisy count the
    scale would not tell |S|. The bound needs the two together (at ε_s = ε/6 and 2,000 samples: 1.9
    for the authors' release, 0.19 with the L1 sensitivity, 0 with a noisy count;
    tests/audits/test_audit_high_dim_design.py). Why not the √d factor alone (a statistic on the
    shift of the released mean, n large): per-coordinate Laplace noise spreads a record's privacy
    loss over the d coordinates, ≈ Gaussian with μ ≈ ε_s·√d·h/Λ = ε_s, far from the worst case
    √d·ε_s (which needs all d coordinates on one side, probability 2^-d); at ε_s = ε/6, or even
    ε/2, no threshold event on a few thousand samples exceeds ε. For the same reason a DP release
    at d = 100 (the paper's calibration, `balcan2017.balcan`: μ ≈ ε_s/√d) shows nothing here even
    with the noise halved: on this design the paper's algorithm has no power.

The statistic never depends on the samples, only on the design (`audit.audit`'s contract).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpclust.api import DPClustError

#: The public box of every design, [0, 1]^d; d = DIMENSION unless the design says otherwise.
BOUNDS = (0.0, 1.0)
DIMENSION = 2
#: d of the high-dimensional design (Balcan et al.'s authors' calibration: the noise is √d times too small).
HIGH_DIMENSION = 100

ADD_REMOVE = "add/remove one record"
REPLACE_ONE = "replace one record (n public)"
RELATIONS = (ADD_REMOVE, REPLACE_ONE)


def relation_kind(text: str | None) -> str:
    """One of `RELATIONS` for a guarantee's relation text (anything naming a replacement is
    replace-one; everything else, including "", is add/remove one record)."""
    return REPLACE_ONE if text and "replac" in str(text).lower() else ADD_REMOVE


# ---------------------------------------------------------------------------------------------
# statistics of the released centres (k, d), d = the target's length
# ---------------------------------------------------------------------------------------------
def nearest_distance(centers: np.ndarray, target: np.ndarray) -> float:
    """Distance from the target record to the nearest released centre."""
    c = np.asarray(centers, dtype=float).reshape(-1, np.size(target))
    return float(np.sqrt(((c - target) ** 2).sum(axis=1)).min())


def diagonal_offset(centers: np.ndarray, target: np.ndarray) -> float:
    """Largest distance of a released centre from the diagonal {x = y} (which holds D)."""
    c = np.asarray(centers, dtype=float).reshape(-1, DIMENSION)
    return float(np.abs(c[:, 0] - c[:, 1]).max() / math.sqrt(2.0))


def interior_coordinates(centers: np.ndarray, target: np.ndarray) -> float:
    """Largest number of coordinates of a released centre strictly inside the box (BOUNDS), i.e. not
    clipped onto a face: how many coordinates a released noisy mean's noise leaves inside."""
    c = np.asarray(centers, dtype=float).reshape(-1, np.size(target))
    return float(((c > BOUNDS[0]) & (c < BOUNDS[1])).sum(axis=1).max())


STATISTICS: dict[str, tuple[Callable[[np.ndarray, np.ndarray], float], str]] = {
    "nearest_distance": (nearest_distance, "distance from the target record to the nearest centre"),
    "diagonal_offset": (diagonal_offset, "largest distance of a centre from the diagonal x = y"),
    "interior_coordinates": (interior_coordinates, "largest number of coordinates of a centre strictly inside "
                                                   "the box (not clipped)"),
}


# ---------------------------------------------------------------------------------------------
# designs
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Design:
    """A neighbouring design: base records (n of them, from `base(n)`), a target record, the
    statistic, default n and k, and a one-line description for the table; the records have
    `dimension` coordinates (the target's length)."""

    name: str
    title: str
    description: str
    target: tuple[float, ...]
    statistic: str
    n: int
    k: int
    base: Callable[[int], np.ndarray]

    @property
    def dimension(self) -> int:
        return len(self.target)

    def datasets(self, n: int | None = None, relation: str = ADD_REMOVE) -> tuple[np.ndarray, np.ndarray]:
        """(D, D') under `relation` (see module docstring)."""
        n = self.n if n is None else int(n)
        if n < 1:
            raise DPClustError(f"design {self.name}: n must be >= 1, got {n}")
        D = self.base(n)
        t = np.asarray(self.target, dtype=float)[None, :]
        if relation == ADD_REMOVE:
            Dp = np.vstack([D, t])
        elif relation == REPLACE_ONE:
            Dp = np.vstack([D[:-1], t])
        else:
            raise DPClustError(f"unknown neighbouring relation {relation!r}; known: {list(RELATIONS)}")
        return D, Dp

    def stat(self, centers: np.ndarray) -> float:
        return STATISTICS[self.statistic][0](centers, np.asarray(self.target, dtype=float))


def _uniform_square(lo: float, hi: float, seed: int) -> Callable[[int], np.ndarray]:
    def base(n: int) -> np.ndarray:
        return np.random.default_rng(seed).uniform(lo, hi, size=(n, DIMENSION))
    return base


def _box_centre(d: int) -> Callable[[int], np.ndarray]:
    def base(n: int) -> np.ndarray:
        return np.full((n, d), 0.5 * (BOUNDS[0] + BOUNDS[1]))
    return base


def _diagonal(lo: float, hi: float, seed: int) -> Callable[[int], np.ndarray]:
    def base(n: int) -> np.ndarray:
        x = np.random.default_rng(seed).uniform(lo, hi, size=n)
        return np.stack([x, x], axis=1)   # exactly x = y: every sum of these records is on the diagonal
    return base


DESIGNS: dict[str, Design] = {
    "corner_outlier": Design(
        "corner_outlier", "corner outlier",
        "D: n records uniform in [0, 0.05]^2 (the opposite corner); D': an outlier in the corner (1, 1)",
        (1.0, 1.0), "nearest_distance", n=1, k=1, base=_uniform_square(0.0, 0.05, 1)),
    "verbatim_record": Design(
        "verbatim_record", "verbatim record",
        "D: n records uniform in [0.1, 0.3]^2; D': a distinctive record (0.618034, 0.707107) that an "
        "algorithm keeping a data record as a centre can release as is",
        (0.618034, 0.707107), "nearest_distance", n=3, k=3, base=_uniform_square(0.1, 0.3, 2)),
    "lone_point": Design(
        "lone_point", "cell/node flip",
        "D: n records uniform in [0.05, 0.35]^2; D': a lone record (0.8125, 0.8125) in an otherwise empty "
        "region, which turns one grid cell / tree node from empty to non-empty",
        (0.8125, 0.8125), "nearest_distance", n=20, k=2, base=_uniform_square(0.05, 0.35, 3)),
    "line_sums": Design(
        "line_sums", "exact sums",
        "D: n records on the diagonal x = y; D': a record (0.9, 0.1) off it (an exact sum or mean of D's "
        "records lies exactly on the diagonal)",
        (0.9, 0.1), "diagonal_offset", n=20, k=1, base=_diagonal(0.2, 0.5, 4)),
    "high_dim_corner": Design(
        "high_dim_corner", f"corner outlier, d = {HIGH_DIMENSION}",
        f"D: n records at the centre of [0, 1]^{HIGH_DIMENSION}; D': the corner (1, ..., 1) added. Statistic: "
        "coordinates of the released centre not clipped to the box (a noisy mean's per-coordinate noise "
        "scale; at n = 1 an exact count halves it on D')",
        (1.0,) * HIGH_DIMENSION, "interior_coordinates", n=1, k=1, base=_box_centre(HIGH_DIMENSION)),
}


def design(name: str) -> Design:
    if name not in DESIGNS:
        raise DPClustError(f"unknown audit design {name!r}; known: {', '.join(DESIGNS)}")
    return DESIGNS[name]
