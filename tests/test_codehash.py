"""Code hashes drive Snakemake reruns: content-based, transitive over dpclust imports."""
from dpclust.pipeline.codehash import closure, code_hash


def test_closure_follows_imports():
    mods = closure("dpclust.baselines")
    assert "dpclust.api" in mods and "dpclust.metrics" in mods and "dpclust" in mods
    assert "dpclust.pipeline.plotting" not in mods


def test_hash_is_stable_and_distinguishes_modules():
    assert code_hash("dpclust.baselines") == code_hash("dpclust.baselines")
    assert code_hash("dpclust.baselines") != code_hash("dpclust.pipeline.plotting")
    assert len(code_hash("dpclust.metrics")) == 16


def test_comments_and_docstrings_do_not_change_the_hash(tmp_path, monkeypatch):
    import dpclust.pipeline.codehash as ch

    src = tmp_path / "dpclust"
    src.mkdir()
    (src / "__init__.py").write_text('"""Package."""\n')
    mod = src / "m.py"
    monkeypatch.setattr(ch, "PACKAGE_ROOT", src)

    def hash_of(text):
        mod.write_text(text)
        for f in (ch._facts, ch.module_path, ch.closure, ch.code_hash):
            f.cache_clear()
        return ch.code_hash("dpclust.m")

    base = hash_of('"""Doc."""\n\ndef f(x):\n    """Doc."""\n    return x + 1\n')
    assert hash_of('"""Other doc."""\n# a comment\n\ndef f(x):\n    return x + 1  # why\n') == base
    assert hash_of('"""Doc."""\n\ndef f(x):\n    return x + 2\n') != base
