"""Seeded synthetic datasets: determinism, shapes, bounds, separation, chunked writing."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dpclust.api import DPClustError
from dpclust.data import load_processed, load_registry, prepare_dataset, processed_info
from dpclust.data.processed import write_synthetic
from dpclust.data.synthetic import generate, generate_chunks, separated_centres


@pytest.fixture(scope="module")
def reg():
    return load_registry()


def quiet(_line):
    pass


@pytest.mark.parametrize("name, shape, k", [("balcan_synth", (100000, 100), 64),
                                            ("nguyen_synth", (50000, 100), 64),
                                            ("synth3d", (10000, 3), 3)])
def test_shapes_bounds_and_determinism(reg, name, shape, k):
    entry = reg.dataset(name)
    X, y = generate(entry)
    assert X.shape == shape and X.dtype == np.float64 and y.shape == (shape[0],)
    assert len(np.unique(y)) == k
    lo, hi = entry["bounds"]
    assert X.min() >= lo and X.max() <= hi
    X2, y2 = generate(entry)
    assert X.tobytes() == X2.tobytes() and y.tobytes() == y2.tobytes()
    small = dict(entry, settings=dict(entry["settings"], n=500))
    other = dict(entry, settings=dict(entry["settings"], n=500, seed=entry["settings"]["seed"] + 1))
    assert generate(other)[0].tobytes() != generate(small)[0].tobytes()


def test_nguyen_generator_follows_the_described_rule(reg):
    X, y = generate(reg.dataset("nguyen_synth"))
    sizes = np.bincount(y)
    assert list(sizes[:63]) == [781] * 63 and sizes[63] == 50000 - 63 * 781  # min(i // (n // 64), 63)
    assert np.all(np.diff(y) >= 0)  # cluster blocks in order
    assert X.min() == 0.0 and X.max() <= 100.0
    # centres 25·N(0,1): about half of the coordinates are clipped at 0
    assert 0.4 < (X == 0).mean() < 0.6


def test_balcan_points_on_unit_spheres_around_centres(reg):
    entry = reg.dataset("balcan_synth")
    X, y = generate(entry)
    s = entry["settings"]
    centres = np.stack([X[y == j].mean(axis=0) for j in range(s["k"])])
    # per-cluster means approach the centres (norm 10); every point within noise_radius + tolerance
    assert np.allclose(np.linalg.norm(centres, axis=1), s["center_radius"], atol=0.2)
    assert np.bincount(y).min() == 100000 // 64 and np.bincount(y).max() == 100000 // 64 + 1


def test_su_synth_all_81_well_separated(reg):
    names = [f"su_synth_k{k}_d{d}" for k in range(2, 11) for d in range(2, 11)]
    assert all(n in reg for n in names)
    for name in names:
        entry = reg.dataset(name)
        s = entry["settings"]
        X, y = generate(entry)
        K, D = entry["template_vars"]["K"], entry["template_vars"]["D"]
        sizes = np.bincount(y)
        assert X.shape == (10000, D) and len(sizes) == K and sizes.max() - sizes.min() <= 1
        assert X.min() >= entry["bounds"][0] and X.max() <= entry["bounds"][1]
        means = np.stack([X[y == j].mean(axis=0) for j in range(K)])
        dist = np.linalg.norm(means[:, None] - means[None], axis=-1)[np.triu_indices(K, 1)]
        assert dist.min() >= 0.9 * s["min_separation"], name
        # nearest-mean assignment recovers the generating labels almost perfectly
        assign = np.argmin(((X[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
        assert (assign == y).mean() > 0.99, name
    assert (generate(reg.dataset("su_synth_k3_d3"))[0].tobytes()
            != generate(reg.dataset("su_synth_k3_d4"))[0][:, :3].tobytes())


def test_separated_centres_infeasible_is_a_clear_error(monkeypatch):
    monkeypatch.setattr("dpclust.data.synthetic.MAX_CENTRE_TRIES", 2000)
    with pytest.raises(DPClustError, match="could not place"):
        separated_centres(np.random.default_rng(0), 10, 2, [0, 1], 5.0)


def test_prepare_synthetic_same_bytes(reg, tmp_path):
    a = prepare_dataset("synth3d", raw_dir=None, out_path=tmp_path / "a.h5", registry=reg, log=quiet)
    b = prepare_dataset("synth3d", raw_dir=None, out_path=tmp_path / "b.h5", registry=reg, log=quiet)
    assert a.read_bytes() == b.read_bytes()
    d = load_processed(a)
    X, y = generate(reg.dataset("synth3d"))
    np.testing.assert_array_equal(d.X, X)
    assert d.attrs["sha256"] == hashlib.sha256(X.tobytes()).hexdigest()
    assert d.attrs["source"] == "synthetic:separated_gaussians" and d.attrs["available"] is True


def test_higgs_like_is_written_in_bounded_chunks(reg, tmp_path):
    entry = reg.dataset("higgs_like")
    assert entry["benchmark_only"] and "higgs_like" not in reg.default_datasets()
    assert (entry["n"], entry["d"]) == (11_000_000, 28)
    small = dict(entry, n=1000, settings=dict(entry["settings"], n=1000, chunk_rows=300))
    chunks = list(generate_chunks(small))
    assert [c[0].shape[0] for c in chunks] == [300, 300, 300, 100]
    write_synthetic(small, tmp_path / "h.h5")
    info = processed_info(tmp_path / "h.h5")
    assert (info["n"], info["d"]) == (1000, 28)
    X = np.concatenate([c[0] for c in chunks])
    assert info["sha256"] == hashlib.sha256(X.tobytes()).hexdigest()
    np.testing.assert_array_equal(load_processed(tmp_path / "h.h5").X, X)
    assert X.min() >= entry["bounds"][0] and X.max() <= entry["bounds"][1]


def test_synth3d_sigma_variants_share_the_declared_draw_and_seed_variants_are_new_draws():
    """balcan2017 supp3d's sensitivity data: σ halved / doubled around the same centres and normals (so
    X_s05 − X = −(X_s2 − X)/2 wherever nothing is clipped); seeds 1 and 2 are other draws."""
    registry = load_registry()
    X, y = generate(registry.dataset("synth3d"))
    Xh, yh = generate(registry.dataset("synth3d_s05"))
    X2, _ = generate(registry.dataset("synth3d_s2"))
    Xg, _ = generate(registry.dataset("synth3d_g1"))
    assert np.array_equal(y, yh) and X.shape == Xh.shape == X2.shape == Xg.shape == (10000, 3)
    inside = (np.abs(X2) < 1).all(axis=1)
    assert inside.mean() > 0.99
    assert np.allclose((Xh - X)[inside], -(X2 - X)[inside] / 2)
    assert not np.allclose(Xg, X)
