"""Non-private baselines and metrics against scikit-learn and brute force."""
import numpy as np
import pytest
from sklearn.cluster import KMeans

from dpclust.baselines import LLOYD_SPARSE_SUMS_MIN_K, geometric_median, lloyd, lloyd_algorithm, lloyd_kmedian
from dpclust.blocks.initialisation import kmedian_plus_plus
from dpclust.metrics import CHUNK_ENTRIES, all_costs, assign, kmeans_cost, kmedian_cost, nicv


def test_assign_matches_brute_force(rng):
    X = rng.standard_normal((500, 7))
    C = rng.standard_normal((9, 7))
    brute = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    labels, d2 = assign(X, C)
    assert np.array_equal(labels, brute.argmin(1))
    assert np.allclose(d2, brute.min(1))


def test_assign_chunking_gives_same_answer(rng, monkeypatch):
    import dpclust.metrics as m

    X = rng.standard_normal((1000, 3))
    C = rng.standard_normal((4, 3))
    full = assign(X, C)
    monkeypatch.setattr(m, "CHUNK_ENTRIES", 40)  # 10 rows per chunk
    chunked = m.assign(X, C)
    assert np.array_equal(full[0], chunked[0]) and np.allclose(full[1], chunked[1])
    assert CHUNK_ENTRIES > 40


def test_costs(rng):
    X = rng.standard_normal((200, 2))
    C = X[:3]
    d = np.sqrt(((X[:, None] - C[None]) ** 2).sum(-1)).min(1)
    assert kmeans_cost(X, C) == pytest.approx((d ** 2).sum())
    assert nicv(X, C) == pytest.approx((d ** 2).mean())
    assert kmedian_cost(X, C) == pytest.approx(d.sum())
    costs = all_costs(X, C)
    assert sum(costs["cluster_sizes"]) == 200


def test_lloyd_matches_sklearn_same_init(rng):
    X = rng.standard_normal((2000, 5))
    init = X[:6].copy()
    ours = lloyd(X, init, max_iter=20, tol=0.0)
    ref = KMeans(6, init=init, n_init=1, max_iter=20, tol=0.0, algorithm="lloyd").fit(X)
    assert np.allclose(np.sort(ours.centers, axis=0), np.sort(ref.cluster_centers_, axis=0), atol=1e-8)
    assert ours.cost == pytest.approx(ref.inertia_, rel=1e-9)


@pytest.mark.parametrize("k", [5, LLOYD_SPARSE_SUMS_MIN_K + 6])  # dense and sparse one-hot sums
@pytest.mark.parametrize("weighted", [False, True])
def test_lloyd_step_matches_brute_force(rng, k, weighted):
    from dpclust.baselines import lloyd_step

    X = rng.standard_normal((1300, 4))  # not a multiple of the block size
    C = rng.standard_normal((k, 4))
    w = rng.normal(1.0, 2.0, size=len(X)) if weighted else None  # EUGkM weights can be negative
    labels = ((X[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)
    ww = np.ones(len(X)) if w is None else w
    sums, counts = lloyd_step(X, C, w)
    assert np.allclose(counts, np.bincount(labels, weights=ww, minlength=k))
    expected = np.stack([(ww[labels == j, None] * X[labels == j]).sum(0) for j in range(k)])
    assert np.allclose(sums, expected)


def test_lloyd_converges_and_counts_iterations(blobs):
    res = lloyd(blobs, blobs[[0, 100, 200]], max_iter=100, tol=0.0, record_trace=True)
    assert res.converged and res.iterations < 100
    assert all(a >= b - 1e-12 for a, b in zip(res.trace, res.trace[1:]))  # Lloyd never increases the cost


def test_lloyd_algorithm_shares_init_seed(blobs, rng):
    settings = {"init": "random_points", "max_iter": 1, "tol": 0.0, "init_seed": 7}
    a = lloyd_algorithm(blobs, 3, None, 0.0, rng, settings)
    b = lloyd_algorithm(blobs, 3, None, 0.0, np.random.default_rng(999), settings)
    assert np.array_equal(a.centers, b.centers) and a.epsilon_spent == 0.0


def test_geometric_median_is_optimal(rng):
    P = rng.standard_normal((300, 3)) * [1, 2, 3]
    m = geometric_median(P)
    f = lambda y: np.sqrt(((P - y) ** 2).sum(1)).sum()  # noqa: E731
    for _ in range(20):
        assert f(m) <= f(m + 0.01 * rng.standard_normal(3)) + 1e-9


def test_kmedian_pipeline(blobs, rng):
    C0 = kmedian_plus_plus(blobs, 3, rng)
    res = lloyd_kmedian(blobs, C0, max_iter=10)
    assert res.cost <= kmedian_cost(blobs, C0) + 1e-9


def test_geometric_median_gives_the_bytes_of_the_direct_weiszfeld_formulas():
    """The work array shared by an iteration's per-point arrays changes no bit: the same iterates as
    ((P − y)²).sum(axis=1) and (P·w).sum(axis=0) on fresh arrays (with a point on a data point too)."""
    from dpclust.baselines import geometric_median

    def direct(P, max_iter=200, tol=1e-9):
        y = P.mean(axis=0)
        for _ in range(max_iter):
            d = np.sqrt(((P - y) ** 2).sum(axis=1))
            near = d < 1e-12
            w = 1.0 / np.where(near, 1.0, d)
            w[near] = 0.0
            if w.sum() == 0:
                return y
            t = (P * w[:, None]).sum(axis=0) / w.sum()
            if near.any():
                r = np.linalg.norm((P[~near] - y).T @ w[~near])
                eta = near.sum()
                t = max(0.0, 1 - eta / r) * t + min(1.0, eta / r) * y if r > 0 else y
            if np.linalg.norm(t - y) <= tol * max(1.0, np.linalg.norm(y)):
                return t
            y = t
        return y

    rng = np.random.default_rng(2)
    cases = [rng.random((m, d)) * 10.0 ** rng.integers(-4, 4) for m, d in [(1, 3), (7, 2), (500, 5), (300, 784)]]
    cases.append(np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]))   # mean on a point
    for P in cases:
        assert geometric_median(P).tobytes() == direct(P).tobytes()
        assert geometric_median(P, max_iter=3).tobytes() == direct(P, max_iter=3).tobytes()
