"""Algorithm 1 end to end: budget recorded = setting (Thm 16), determinism, errors, utility."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpclust.api import DPClustError
from dpclust.estimators import Nguyen
from dpclust.metrics import kmeans_cost
from dpclust.nguyen2021.algorithm import embed, jl_dimension, nguyen


def _blobs(n=600, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.2, 0.2, 0.3], [0.8, 0.3, 0.6], [0.5, 0.8, 0.2]])
    X = np.concatenate([c + 0.02 * rng.standard_normal((n // 3, 3)) for c in centres])
    return np.clip(X, 0, 1), centres


def _settings(**kw):
    """The runner's keys plus overrides; `@declared` fills every other setting with its default."""
    return dict(bounds=[0.0, 1.0], init_seed=0, **kw)


def test_spent_budget_is_epsilon_and_n_to_minus_1_5():
    X, _ = _blobs()
    n = X.shape[0]
    delta = n ** -1.5
    res = nguyen(X, 3, 1.0, delta, np.random.default_rng(0), _settings())
    assert res.epsilon_spent == pytest.approx(1.0, rel=1e-12)
    assert res.delta_spent == pytest.approx(delta, rel=1e-12)
    labels = [row[0] for row in res.ledger]
    assert labels[0].startswith("Alg.2 exponential mechanism")
    assert any(lab.startswith("proxy counts") for lab in labels)
    assert any(lab.startswith("NoisyAVG recovery") for lab in labels)
    assert any(lab.startswith("private Lloyd round 1") for lab in labels)
    eps_by_stage = [row[1] for row in res.ledger]
    assert eps_by_stage == pytest.approx([0.1, 0.1, 0.4, 0.4])
    # Lemma 17: the per-call ε_E = 2·ε_em / (e·ln(1/δ_E))
    assert res.info["eps_E_per_call"] == pytest.approx(2 * 0.1 / (math.e * math.log(3 / delta)))


def test_same_seed_same_bytes_and_different_seed_differs():
    X, _ = _blobs()
    a = nguyen(X, 3, 1.0, 1e-4, np.random.default_rng(5), _settings())
    b = nguyen(X, 3, 1.0, 1e-4, np.random.default_rng(5), _settings())
    c = nguyen(X, 3, 1.0, 1e-4, np.random.default_rng(6), _settings())
    assert a.centers.tobytes() == b.centers.tobytes()
    assert a.centers.tobytes() != c.centers.tobytes()


@pytest.mark.slow
def test_high_epsilon_recovers_well_separated_clusters():
    """Sanity of the whole pipeline: with a large budget the cost is close to the planted one
    (median over 3 seeds: the non-private Lloyd on the proxy data may still stop in a local
    optimum from its random start, as Lloyd does)."""
    X, centres = _blobs(n=3000, seed=1)
    costs = [kmeans_cost(X, nguyen(X, 3, 200.0, 1e-3, np.random.default_rng(s), _settings()).centers)
             for s in range(3)]
    assert np.median(costs) < 1.5 * kmeans_cost(X, centres)


def test_embedding_uses_public_bounds_only():
    X, _ = _blobs()
    Y1, info = embed(X, (0.0, 1.0), 1.0, 2, np.random.default_rng(0))
    Y2, _ = embed(X[:10], (0.0, 1.0), 1.0, 2, np.random.default_rng(0))
    assert np.array_equal(Y1[:10], Y2)   # a point's image does not depend on the other points
    assert (np.sqrt((Y1 ** 2).sum(1)) <= 1 + 1e-12).all()
    assert info["diameter"] == pytest.approx(math.sqrt(3))
    assert jl_dimension(50_000, 100, "auto") == 5 and jl_dimension(60_000, 784, "auto") == 5
    assert jl_dimension(150, 4, "auto") == 2 and jl_dimension(10**6, 3, "auto") == 3


@pytest.mark.parametrize("change", [
    {"delta": 0.0},
    {"settings": {"bounds": None}},
    {"settings": {"budget_split": {"em": 0.5, "counts": 0.5, "recovery": 0.5, "lloyd": 0.0}}},
    {"settings": {"alpha": 0.0}},
    {"settings": {"jl_dim": "five"}},
    {"settings": {"bounds": [0.0, 0.5]}},
    {"settings": {"lloyd_rounds": 0}},
])
def test_bad_input_raises_one_clear_error(change):
    X, _ = _blobs()
    settings = _settings()
    settings.update(change.get("settings", {}))
    if settings.get("bounds") is None:
        settings.pop("bounds")
    with pytest.raises(DPClustError):
        nguyen(X, 3, 1.0, change.get("delta", 1e-4), np.random.default_rng(0), settings)


def test_estimator_wrapper():
    X, _ = _blobs()
    est = Nguyen(n_clusters=3, epsilon=1.0, delta=1e-4, random_state=0, settings={"bounds": [0.0, 1.0]}).fit(X)
    assert est.cluster_centers_.shape == (3, 3)
    assert est.epsilon_spent_ == pytest.approx(1.0)


def test_run_record_spends_the_configured_epsilon_and_delta(repo, tmp_path):
    """Through the runner: every run's (ε, δ) spent = (1, n^-1.5) as configured for Figure 1."""
    import yaml

    from dpclust.data import write_processed
    from dpclust.pipeline.configuration import load_config, run_spec_for
    from dpclust.pipeline.run_job import run_spec

    cfg = yaml.safe_load((repo / "config/papers/nguyen2021.yaml").read_text())
    group = cfg["items"]["fig1"]["runs"]["private"]
    X = np.random.default_rng(0).uniform(0, 1, size=(150, 4))
    path = tmp_path / "iris.h5"
    write_processed(path, X)
    spec = run_spec_for(load_config(repo / "config"), "iris", "nguyen2021.ours", 2, group["epsilon"],
                        seeds=(0, 2), delta=group["delta"], transform="minmax_01")
    from dpclust.pipeline.records import flatten

    rec = flatten(run_spec(spec, str(path)))
    assert rec["status"] == "ok" and rec["delta"] == pytest.approx(150 ** -1.5)
    for run in rec["runs"]:
        assert run["epsilon_spent"] == pytest.approx(1.0, rel=1e-12)
        assert run["delta_spent"] == pytest.approx(150 ** -1.5, rel=1e-12)


# --- review additions ------------------------------------------------------------------------------
def test_too_few_candidates_for_k_raises_one_clear_error():
    """Regression: with m·k' < k candidates (tiny n, rounds_factor < 1) Step 4 could not pick k
    initial centres and numpy raised a bare ValueError."""
    X = np.random.default_rng(0).uniform(0, 1, size=(4, 2))
    with pytest.raises(DPClustError, match="candidates"):
        nguyen(X, 4, 1.0, 4 ** -1.5, np.random.default_rng(0), _settings(rounds_factor=0.25))


def test_every_stage_is_calibrated_to_what_it_charges(monkeypatch):
    """Through `nguyen` itself: Alg. 2's logit is exponential_logit_scale(1, ε_E) with the ε_E of
    Lemma 17 for the (ε_em, δ_em) charged; the proxy counts use sensitivity 1 and the ε_L charged;
    NoisyAVG gets (ε_G, δ_G), the public diameter (hi − lo)·√d and the public box."""
    from dpclust import mechanisms
    from dpclust.nguyen2021 import algorithm as alg

    seen = {"cover": [], "laplace": [], "navg": []}
    real_cover, real_lap, real_navg = alg.private_grid_cover, mechanisms.laplace_mechanism, alg.noisy_avg_centers

    def cover(P, alive, t, r, rounds, logit, rng, max_trials=200_000, index=None):
        seen["cover"].append(logit)
        return real_cover(P, alive, t, r, rounds, logit, rng, max_trials, index)

    def lap(value, sensitivity, epsilon, rng, **kw):
        seen["laplace"].append((sensitivity, epsilon))
        return real_lap(value, sensitivity, epsilon, rng, **kw)

    def navg(X, labels, k, eps, delta, diameter, bounds, rng, acc, label=""):
        seen["navg"].append((eps, delta, diameter, tuple(bounds)))
        return real_navg(X, labels, k, eps, delta, diameter, bounds, rng, acc, label=label)

    monkeypatch.setattr(alg, "private_grid_cover", cover)
    monkeypatch.setattr(alg.mechanisms, "laplace_mechanism", lap)
    monkeypatch.setattr(alg, "noisy_avg_centers", navg)
    X, _ = _blobs()
    n, d = X.shape
    delta = n ** -1.5
    res = nguyen(X, 3, 1.0, delta, np.random.default_rng(0), _settings())
    (em_label, eps_em, delta_em), (_, eps_L, _), (_, eps_G, delta_G), (_, eps_ll, delta_ll) = res.ledger
    eps_E = 2 * eps_em / (math.e * math.log(1 / delta_em))
    assert len(seen["cover"]) == res.info["scales"]
    assert all(s == pytest.approx(eps_E / 2, rel=1e-12) for s in seen["cover"])
    assert seen["laplace"] == [(1.0, pytest.approx(eps_L, rel=1e-12))]
    diam = math.sqrt(d)
    assert seen["navg"] == [(pytest.approx(eps_G), pytest.approx(delta_G), pytest.approx(diam), (0.0, 1.0)),
                            (pytest.approx(eps_ll), pytest.approx(delta_ll), pytest.approx(diam), (0.0, 1.0))]


def test_halved_noise_reaches_every_stage():
    """`audit.halved_noise()` (the audits' positive control) reaches the noise of every stage of
    Algorithm 1: the exponential mechanism, the proxy counts, and NoisyAVG's count and Gaussian."""
    from dpclust.audit import statistics as audit

    X, _ = _blobs()
    with audit.halved_noise() as calls:
        nguyen(X, 3, 1.0, 1e-4, np.random.default_rng(0), _settings())
    assert calls["exponential_logit_scale"] == 1
    assert calls["laplace_scale"] >= 3          # proxy counts + NoisyAVG count (recovery, Lloyd)
    assert calls["gaussian_sigma"] >= 1


def test_the_authors_sampler_is_refused_above_its_public_size_guard_before_any_spend():
    """`authors_max_n` (an effort guard on the public N, like EUGkM's `max_grid_cells`): the authors'
    sampler declines larger inputs with `api.Refused` before spending anything (the runner records the
    block as refused); the paper's sampler ignores the setting; at or below the guard it runs."""
    from dpclust.api import Refused

    X, _ = _blobs(n=300)
    with pytest.raises(Refused, match=r"N = 300 records exceeds authors_max_n = 299"):
        nguyen(X, 3, 1.0, 1e-4, np.random.default_rng(0), _settings(em_sampler="authors", authors_max_n=299))
    paper = nguyen(X, 3, 1.0, 1e-4, np.random.default_rng(0), _settings(authors_max_n=299))
    assert paper.epsilon_spent == pytest.approx(1.0)
    authors = nguyen(X, 3, 1.0, 1e-4, np.random.default_rng(0), _settings(em_sampler="authors", authors_max_n=300))
    assert authors.centers.shape == (3, 3)


def test_no_paper_batch_reaches_the_authors_sampler_guard():
    """A refused cell is drawn as refused, but a paper's claims need every cell of its protocol: every
    paper batch that runs the authors' sampler stays at or below `authors_max_n` (the leaderboard
    shows refused cells)."""
    from pathlib import Path

    from dpclust.api import Refused
    from dpclust.nguyen2021.algorithm import refuse_above_authors_max_n
    from dpclust.pipeline.configuration import load_config
    from dpclust.pipeline.planning import plan

    repo = Path(__file__).resolve().parents[2]
    checked, over = 0, []
    for preset in ("full", "quick"):
        for batch in plan(load_config(repo / "config", overrides={"preset": preset})).batches:
            settings = batch.spec["spec"]["settings"]
            if batch.paper == "leaderboard" or settings.get("em_sampler") != "authors":
                continue
            for dataset, *_ in batch.spec["cells"]:
                try:   # the algorithm's own guard
                    refuse_above_authors_max_n(int(settings.get("public_n") or batch.spec["entries"][dataset]["n"]),
                                               settings)
                except Refused as exc:
                    over.append(f"{batch.path}: {dataset}: {exc}")
                checked += 1
    assert checked, "the authors' sampler runs in a paper's protocol"
    assert not over, "; ".join(over)
