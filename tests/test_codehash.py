"""Code hashes drive Snakemake reruns: content-based, transitive over dpclust imports."""
from dpclust.codehash import closure, code_hash


def test_closure_follows_imports():
    mods = closure("dpclust.baselines")
    assert "dpclust.api" in mods and "dpclust.metrics" in mods and "dpclust" in mods
    assert "dpclust.plotting" not in mods


def test_hash_is_stable_and_distinguishes_modules():
    assert code_hash("dpclust.baselines") == code_hash("dpclust.baselines")
    assert code_hash("dpclust.baselines") != code_hash("dpclust.plotting")
    assert len(code_hash("dpclust.metrics")) == 16
