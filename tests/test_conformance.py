"""One conformance suite for every configured algorithm (the idea of scikit-learn's
`parametrize_with_checks`): an algorithm gets all of these checks by being configured.

For every entry under `algorithms:` in config/ (each paper's variants with their settings):
- it declares its settings and its privacy guarantee (ε-DP, (ε, δ)-DP, non-private, or "not DP as
  published" with the reason);
- a private one spends exactly its ε (at most ε where it declares `budget="cap"`) and at most its
  δ; a non-private one spends nothing;
- the same generator gives the same bytes; another seed gives other noise;
- its k centres are finite and inside the public box;
- its noise is drawn through `dpclust.mechanisms`, so that the empirical audit reaches it (halving
  every noise scale changes its output);
- as a scikit-learn estimator it follows the conventions (NotFittedError, labels, repr); the
  estimator classes the modules export also go through scikit-learn's own checks in
  `tests/test_estimators.py`.
"""
from __future__ import annotations

import numpy as np
import pytest

from dpclust.audit import statistics as audit
from dpclust.pipeline.configuration import load_config, resolve_algorithm
from dpclust.pipeline.resolve import import_object

from .conftest import REPO

CONFIG = load_config(REPO / "config")
NAMES = sorted(CONFIG["algorithms"])
BOX = (-1.0, 1.0)
K, EPSILON = 3, 1.0


def _data(n: int = 600, d: int = 2) -> np.ndarray:
    rng = np.random.default_rng(7)
    centres = np.array([[-0.5] * d, [0.5] * d, [0.5] + [-0.5] * (d - 1)])
    X = centres[rng.integers(0, 3, n)] + 0.08 * rng.standard_normal((n, d))
    return np.clip(X, *BOX)


X = _data()


def _resolved(name: str) -> dict:
    return resolve_algorithm(CONFIG, name)


DELTA = 1.0 / X.shape[0] ** 1.5


def _delta(resolved: dict) -> float:
    """δ = n^-1.5 for (ε, δ)-DP algorithms, 0 for pure ones; a variant that is not DP as published
    gets what its function accepts (some need δ > 0, Lu & Shen's refuse it)."""
    kind = (resolved.get("guarantee") or {}).get("kind", "")
    if kind == "not DP as published":
        return DELTA if _needs_delta(resolved["function"], resolved["settings"]) else 0.0
    return DELTA if "δ" in kind else 0.0


def _needs_delta(function: str, settings: dict) -> bool:
    from dpclust.api import DPClustError

    try:
        import_object(function)(X, K, EPSILON, 0.0, np.random.default_rng(0),
                                dict(settings, bounds=list(BOX), init_seed=11))
    except DPClustError as exc:
        return "delta" in str(exc) or "δ" in str(exc)
    return False


def _run(name: str, seed: int = 0, epsilon: float = EPSILON):
    resolved = _resolved(name)
    function = import_object(resolved["function"])
    settings = dict(resolved["settings"], bounds=list(BOX), init_seed=11)
    epsilon = epsilon if resolved["private"] else None
    return function(X, K, epsilon, _delta(resolved), np.random.default_rng(seed), settings)


def test_every_paper_algorithm_is_configured():
    assert len(NAMES) >= 30
    assert {CONFIG["algorithms"][n].get("paper") for n in NAMES} >= {
        "su2016", "balcan2017", "nguyen2021", "cohenaddad2022", "lushen2020", "baselines"}


@pytest.mark.parametrize("name", NAMES)
def test_estimator_conventions(name):
    """The configured variant as a scikit-learn estimator (`dpclust.estimators.build_estimator`):
    NotFittedError before fit, fitted centres, labels, readable repr."""
    from sklearn.exceptions import NotFittedError

    from dpclust.estimators import build_estimator

    resolved = _resolved(name)
    function = import_object(resolved["function"])
    variant = {k: v for k, v in resolved["settings"].items() if k != "bounds"}
    cls = build_estimator(function, {}, "Conforming", private=resolved["private"])
    est = cls(n_clusters=K, epsilon=EPSILON if resolved["private"] else None, delta=_delta(resolved),
              random_state=0, settings={**variant, "bounds": list(BOX)})
    with pytest.raises(NotFittedError):
        est.predict(X)
    labels = est.fit(X).predict(X)
    assert est.cluster_centers_.shape == (K, X.shape[1]) and labels.shape == (X.shape[0],)
    assert repr(est).startswith("Conforming(")


@pytest.mark.parametrize("name", NAMES)
def test_declares_settings_and_guarantee(name):
    resolved = _resolved(name)
    guarantee = resolved.get("guarantee")
    assert guarantee, f"{name} declares no privacy guarantee"
    kind = guarantee["kind"]
    assert kind in {"ε-DP", "(ε, δ)-DP", "non-private", "not DP as published"}, kind
    assert (kind == "non-private") == (not resolved["private"]) or kind == "not DP as published"
    if kind == "not DP as published":
        assert guarantee.get("note"), f"{name}: a 'not DP as published' label states why"


@pytest.mark.parametrize("name", NAMES)
def test_spends_exactly_its_budget_same_bytes_inside_the_box(name):
    resolved = _resolved(name)
    a, b, other = _run(name, 0), _run(name, 0), _run(name, 1)
    centres = np.asarray(a.centers, dtype=float)
    assert centres.shape == (K, X.shape[1]) and np.isfinite(centres).all()
    lo, hi = BOX
    assert (centres >= lo - 1e-9).all() and (centres <= hi + 1e-9).all(), f"{name}: centres leave the box"
    assert np.asarray(a.centers).tobytes() == np.asarray(b.centers).tobytes(), f"{name}: same seed, other bytes"
    assert a.epsilon_spent == b.epsilon_spent
    if resolved["private"]:
        if getattr(import_object(resolved["function"]), "budget", "exact") == "cap":  # declared: spends at most ε
            assert 0 < a.epsilon_spent <= EPSILON * (1 + 1e-9), f"{name} spent {a.epsilon_spent} of its cap {EPSILON}"
        else:
            assert a.epsilon_spent == pytest.approx(EPSILON, rel=1e-9), f"{name} spent {a.epsilon_spent} of {EPSILON}"
        assert a.delta_spent <= _delta(resolved) * (1 + 1e-9)
        assert np.asarray(other.centers).tobytes() != np.asarray(a.centers).tobytes(), f"{name}: seed ignored"
    else:
        assert a.epsilon_spent == 0 and a.delta_spent == 0


@pytest.mark.parametrize("name", [n for n in NAMES if CONFIG["algorithms"][n].get("private", True)])
def test_noise_reaches_the_audit(name):
    """Halving every noise scale (the audit's positive control) must reach the algorithm's draws:
    the patched scale functions are called, and the output changes for some seed and ε (at one ε
    the output may be dominated by clipping to the box, or a discrete choice may not move)."""
    changed, called = False, 0
    for epsilon in (EPSILON, 10 * EPSILON):
        for seed in range(3):
            plain = np.asarray(_run(name, seed, epsilon).centers)
            with audit.halved_noise() as calls:
                halved = np.asarray(_run(name, seed, epsilon).centers)
            called += sum(calls.values())
            changed = plain.tobytes() != halved.tobytes()
            if changed:
                break
        if changed:
            break
    assert called > 0, f"{name} draws no noise through dpclust.mechanisms"
    assert changed, f"{name}: halving the noise scales changed nothing"
