"""diffprivlib's KMeans as a dpclust peer: the ε its noise corresponds to, measured from the
mechanisms the library actually builds during a fit, and the wrapper's contract (seeded from the
run's generator, public box, declared guarantee)."""
from __future__ import annotations

import numpy as np
import pytest

# diffprivlib is optional (`dpclust[peers]`: it needs scikit-learn < 1.8, the project is locked to 1.9);
# these tests run wherever it is installed. The declaration and the formula are tested without it in
# test_peer_declaration.py.
dpl_kmeans = pytest.importorskip("diffprivlib.models.k_means")

from dpclust.peers.diffprivlib_kmeans import diffprivlib_kmeans, noise_epsilon  # noqa: E402 (after the skip)


def measured_epsilon(monkeypatch, d: int, epsilon: float = 1.0, n: int = 400, k: int = 3, seed: int = 0) -> dict:
    """Fit diffprivlib's KMeans once and add up the ε of every mechanism it builds: per iteration
    one count mechanism (shared by the clusters) and d coordinate-sum mechanisms per cluster; the
    clusters are disjoint (parallel composition), the iterations compose sequentially."""
    iterations: list[dict] = []
    original_update = dpl_kmeans.KMeans._update_centers

    def update(self, *args, **kwargs):
        iterations.append({"count": [], "sums": []})
        return original_update(self, *args, **kwargs)

    class Count(dpl_kmeans.GeometricFolded):
        def __init__(self, **kw):
            iterations[-1]["count"].append((kw["epsilon"], kw["sensitivity"]))
            super().__init__(**kw)

    class Sum(dpl_kmeans.LaplaceBoundedDomain):
        def __init__(self, **kw):
            iterations[-1]["sums"].append((kw["epsilon"], kw["sensitivity"]))
            super().__init__(**kw)

    monkeypatch.setattr(dpl_kmeans.KMeans, "_update_centers", update)
    monkeypatch.setattr(dpl_kmeans, "GeometricFolded", Count)
    monkeypatch.setattr(dpl_kmeans, "LaplaceBoundedDomain", Sum)
    X = np.random.default_rng(seed).random((n, d))
    model = dpl_kmeans.KMeans(n_clusters=k, epsilon=epsilon, bounds=(np.zeros(d), np.ones(d)), random_state=seed)
    model.fit(X)
    total = 0.0
    for it in iterations:
        assert len(it["count"]) == 1 and it["count"][0][1] == 1          # one count mechanism, sensitivity 1
        sums = it["sums"]
        clusters = len(sums) // d
        assert clusters >= 1 and len(sums) == clusters * d
        assert all(s == 1.0 for _, s in sums)                            # sensitivity of a sum in [0, 1]: 1
        per_cluster = [sum(e for e, _ in sums[c * d:(c + 1) * d]) for c in range(clusters)]
        total += it["count"][0][0] + max(per_cluster)                     # parallel over clusters
    return {"epsilon": total, "iterations": len(iterations), "count_eps": iterations[0]["count"][0][0],
            "sum_eps": iterations[0]["sums"][0][0], "reported": model.n_iter_}


@pytest.mark.parametrize("d, ratio", [(10, 1.2118), (784, 5.3789)])
def test_noise_overspends_as_stated(monkeypatch, d, ratio):
    """1.21ε at d = 10 and 5.38ε at d = 784: the noise of a fit at ε = 1 corresponds to that ε."""
    m = measured_epsilon(monkeypatch, d, n=200 if d > 100 else 400)
    assert m["iterations"] == m["reported"] >= 2
    assert m["epsilon"] == pytest.approx(ratio, abs=1e-4)
    assert m["epsilon"] == pytest.approx(noise_epsilon(1.0, d), rel=1e-12)


@pytest.mark.parametrize("d", [2, 4, 5, 6])
def test_the_split_is_swapped_and_overspends_from_d_5(monkeypatch, d):
    """The count gets the per-coordinate share and each coordinate sum the count's share: the noise
    corresponds to more than ε exactly when 4dρ² > 1 (d >= 5), less below."""
    m = measured_epsilon(monkeypatch, d)
    c = (4 * d * 0.225 ** 2) ** (1 / 3)
    assert m["sum_eps"] == pytest.approx(c * m["count_eps"], rel=1e-12)  # intended: count = c · sum
    assert m["epsilon"] == pytest.approx(noise_epsilon(1.0, d), rel=1e-12)
    assert (m["epsilon"] > 1.0) == (d >= 5)


def test_wrapper_is_seeded_by_the_run_generator_and_records_what_it_spends():
    X = np.random.default_rng(1).random((600, 10))
    settings = {"bounds": [0.0, 1.0]}
    a = diffprivlib_kmeans(X, 4, 1.0, 1e-6, np.random.default_rng(7), settings)
    b = diffprivlib_kmeans(X, 4, 1.0, 1e-6, np.random.default_rng(7), settings)
    c = diffprivlib_kmeans(X, 4, 1.0, 1e-6, np.random.default_rng(8), settings)
    assert np.array_equal(a.centers, b.centers) and not np.array_equal(a.centers, c.centers)
    assert a.centers.shape == (4, 10) and np.all((a.centers >= 0) & (a.centers <= 1))
    assert a.epsilon_spent == 1.0 and a.delta_spent == 0.0                  # what diffprivlib accounts
    assert a.info["epsilon_noise"] == pytest.approx(1.2118, abs=1e-4)       # what its noise corresponds to
    assert a.info["diffprivlib"] == "0.6.6"


def test_wrapper_uses_the_public_box_not_the_data_range(monkeypatch):
    seen = {}
    original = dpl_kmeans.KMeans.fit

    def fit(self, X, *args, **kwargs):
        seen["bounds"] = self.bounds
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(dpl_kmeans.KMeans, "fit", fit)
    X = 0.4 + 0.2 * np.random.default_rng(2).random((300, 3))     # data range [0.4, 0.6], box [-1, 2]
    diffprivlib_kmeans(X, 2, 1.0, 0.0, np.random.default_rng(0), {"bounds": [-1.0, 2.0]})
    lo, hi = seen["bounds"]
    assert np.all(np.asarray(lo) == -1.0) and np.all(np.asarray(hi) == 2.0)
