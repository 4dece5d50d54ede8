"""Algorithm 1 (private partition) and Algorithm 2 (candidate set): structure, statistics, budget."""
import math

import numpy as np
import pytest

from dpclust.accountant import Accountant, BudgetExceeded
from dpclust.balcan2017.candidates import candidate_set, jl_project, projection_dimension, repetitions
from dpclust.balcan2017.partition import activation_probability, max_levels, private_partition, threshold


def test_activation_probability_is_laplace_threshold_probability(rng):
    gamma, b = 5.0, 2.0
    m = np.array([0, 2, 5, 7, 12])
    draws = m[:, None] + rng.laplace(0.0, b, size=(m.size, 200_000))
    empirical = (draws > gamma).mean(axis=1)
    np.testing.assert_allclose(empirical, activation_probability(m, gamma, b), atol=0.005)
    # Alg. 1's printed f(m) with ε' = 1/b
    eps = 1 / b
    paper = np.where(m <= gamma, 0.5 * np.exp(-eps * (gamma - m)), 1 - 0.5 * np.exp(eps * (gamma - m)))
    np.testing.assert_allclose(activation_probability(m, gamma, b), paper)


def test_threshold_stated_and_default():
    assert threshold(0.1, 1000, 0.1, 20.0) == pytest.approx(200 * math.log(1000 / 0.1))
    assert threshold(0.1, 1000, 0.1, 1.0) == pytest.approx(10 * math.log(1000 / 0.1))


def test_partition_geometry_and_budget(rng):
    Y = np.concatenate([rng.normal(-0.5, 0.05, (2000, 2)), rng.normal(0.5, 0.05, (2000, 2))])
    acc = Accountant(1.0)
    out = private_partition(Y, 1.0, 0.1, [-2.0, -2.0], 4.0, rng, acc, gamma_factor=0.2, level_rule="paper")
    C, depth, side = out["centers"], out["depth"], out["side"]
    assert C.shape[0] == depth.size == side.size and C.shape[1] == 2
    assert depth[0] == 0 and np.allclose(C[0], 0.0)                   # the root cube's centre
    np.testing.assert_allclose(side, 4.0 / 2.0 ** depth)              # 2^p-ary even splits
    assert out["levels_run"] <= max_levels(Y.shape[0])
    assert depth.max() >= 2                                           # dense clusters get split
    # ε' = ε/(2 ln n) per level that ran, never more than ε
    assert acc.spent_epsilon == pytest.approx(out["levels_run"] * 1.0 / (2 * math.log(Y.shape[0])))
    assert acc.spent_epsilon <= 1.0
    # every centre of depth a >= 1 lies inside its parent cube centred on a depth a-1 centre
    for a in range(1, depth.max() + 1):
        child, parent = C[depth == a], C[depth == a - 1]
        d = np.abs(child[:, None, :] - parent[None, :, :]).max(axis=2)
        assert (d.min(axis=1) <= 4.0 / 2.0 ** a + 1e-12).all()


def test_empty_cubes_are_activated_with_probability_f0():
    """Without this, activation would reveal emptiness: E[#active empty children] = (2^p − 1)·f(0)."""
    p, eps = 3, 1.0
    Y = np.full((5, p), 0.1)                          # every point in the same level-1 child
    gamma_factor = 0.5
    n_act, reps = [], 400
    for s in range(reps):
        r = np.random.default_rng(s)
        out = private_partition(Y, eps, 0.5, np.zeros(p), 1.0, r, Accountant(10.0), gamma_factor=gamma_factor,
                                level_rule="exact", n_param=8)
        lvl1 = out["centers"][out["depth"] == 1]
        n_act.append(int((np.abs(lvl1 - 0.25).max(axis=1) > 1e-12).sum()))  # active cubes other than the occupied one
    eps_level = eps / max_levels(8)
    f0 = float(activation_probability(0.0, threshold(eps_level, 8, 0.5, gamma_factor), 1 / eps_level))
    expected = (2 ** p - 1) * f0
    sd = math.sqrt((2 ** p - 1) * f0 * (1 - f0) / reps)
    assert abs(np.mean(n_act) - expected) < 5 * sd


def test_partition_refuses_to_overspend(rng):
    Y = rng.normal(size=(100, 2))
    with pytest.raises(BudgetExceeded):
        private_partition(Y, 1.0, 0.1, [-5, -5], 10.0, rng, Accountant(0.05), gamma_factor=1.0)


def test_candidate_set_budget_and_radius(rng):
    Y = rng.normal(scale=0.3, size=(3000, 3))
    acc = Accountant(2.0)
    settings = {"candidate_repetitions": "k", "initial_cube_half_side": 2.0, "gamma_factor": 1.0, "level_rule": "paper"}
    out = candidate_set(Y, 4, 1.0, 0.1, 1.0, rng, acc, settings)
    assert out["repetitions"] == 4
    assert acc.spent_epsilon <= 1.0 + 1e-12
    assert (np.linalg.norm(out["centers"], axis=1) <= 1.0 + 1e-12).all()   # projected onto B(0, Λ)
    assert repetitions("theory", 4, 3000, 0.1) == math.ceil(27 * 4 * math.log(3000 / 0.1))


def test_projection_dimension_and_clipping(rng):
    assert projection_dimension(70_000, 784, "half_log_n", 5) == 5      # floor(ln(70000)/2)
    assert projection_dimension(100_000, 100, "half_log_n", 5) == 5
    assert projection_dimension(10_000, 3, "half_log_n", 5) == 0        # no projection when d <= 5
    X = rng.uniform(-1, 1, size=(500, 50))
    Y, G, R = jl_project(X, 5, math.sqrt(50), 1.0, rng)
    assert Y.shape == (500, 5) and R == math.sqrt(50)
    assert (np.linalg.norm(Y, axis=1) <= R + 1e-9).all()


def test_partition_refuses_dimensions_that_overflow_cube_codes(rng):
    """p = 8 ln n (the theory's rule) gives 2^p children per cube: int64 cube codes would wrap around
    silently (merging distinct cubes); a clear error instead."""
    Y = rng.uniform(-0.5, 0.5, size=(50, 63))
    with pytest.raises(ValueError, match="64-bit cube codes"):
        private_partition(Y, 1.0, 0.1, np.full(63, -1.0), 2.0, rng, Accountant(1.0))


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 9, 12])
def test_child_keys_equal_the_integer_product(p):
    """The compiled child keys are the integers of numpy's product form over the live rows, also for
    points exactly on a cube's mid-plane (y − lower = half)."""
    from dpclust.balcan2017.partition import child_keys

    rng = np.random.default_rng(p)
    n = 2000
    lower = rng.integers(-4, 4, size=(50, p)) / 4.0
    parent = rng.integers(0, 50, size=n).astype(np.int64)
    half = 0.25
    Y = lower[parent] + rng.integers(0, 3, size=(n, p)) * (half / 2)   # 0, half/2, half (ties)
    Y[: n // 2] = lower[parent[: n // 2]] + rng.uniform(0, 2 * half, size=(n // 2, p))
    weights = np.int64(1) << np.arange(p, dtype=np.int64)
    expected = parent * (1 << p) + ((Y - lower[parent]) >= half).astype(np.int64) @ weights
    got = child_keys(Y, np.arange(n), parent, lower, half)
    assert got.dtype == np.int64 and np.array_equal(got, expected)
    live = np.flatnonzero(rng.random(n) < 0.5)                             # a subset of the rows
    assert np.array_equal(child_keys(Y, live, parent[live], lower, half), expected[live])


def test_the_compiled_cube_test_and_child_search_are_numpys():
    """The first level's cube test and each level's move to the active children select what numpy's
    `all(...)` and `searchsorted` select, points on the cube's faces and inactive children included."""
    from dpclust.balcan2017 import partition as P

    rng = np.random.default_rng(11)
    lower, side = np.array([-0.5, 0.0, 0.25]), 0.5
    Y = lower + rng.integers(-1, 6, size=(3000, 3)) * (side / 4)          # on and off the faces
    got = np.empty(len(Y), dtype=np.int64)
    P._initial_cells_kernel()(Y, lower, side, got)
    inside = np.all((Y >= lower) & (Y < lower + side), axis=1)
    assert np.array_equal(got, np.where(inside, 0, -1))

    key = rng.integers(0, 400, size=2000).astype(np.int64)
    live = np.sort(rng.choice(5000, size=2000, replace=False)).astype(np.int64)
    new_keys = np.unique(rng.integers(0, 400, size=120)).astype(np.int64)
    cells = np.full(5000, 7, dtype=np.int64)
    P._move_to_children_kernel()(new_keys, key, live, cells)
    pos = np.searchsorted(new_keys, key)
    hit = (pos < new_keys.size) & (new_keys[np.minimum(pos, new_keys.size - 1)] == key)
    want = np.full(5000, 7, dtype=np.int64)
    want[live] = np.where(hit, pos, -1)
    assert np.array_equal(cells, want)
    P._move_to_children_kernel()(new_keys[:0], key, live, cells)              # no active child: all out
    assert (cells[live] == -1).all()
