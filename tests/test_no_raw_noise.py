"""No raw noise outside `dpclust.mechanisms`: every continuous draw that could perturb a released value
goes through a mechanism, which releases it on a data-independent grid (Mironov 2012; see
`dpclust.mechanisms.FLOATING_POINT_GUARANTEE`).

An AST scan of src/dpclust finds every call ``<anything>.<sampler>(...)`` with a continuous sampler
name of numpy's Generator (``rng.laplace``, ``np.random.default_rng(s).standard_normal``, ...)
outside mechanisms.py. Each one must be in `ALLOWED`, keyed by (module path, enclosing function,
sampler) with a one-line reason: data-independent draws (random projections, hyperplanes,
synthetic data) or an algorithm that is not DP anyway. A stale entry fails too, and the scanner is
tested on snippets (it can fail).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dpclust"

#: Continuous samplers of numpy's Generator (and RandomState) that can perturb a released value.
SAMPLERS = frozenset({
    "laplace", "normal", "standard_normal", "gumbel", "exponential", "standard_exponential",
    "gamma", "standard_gamma", "standard_cauchy", "logistic", "lognormal", "standard_t",
    "multivariate_normal", "wald",
})

#: (path relative to src/dpclust, enclosing function ("<module>" at top level), sampler) -> reason.
ALLOWED: dict[tuple[str, str, str], str] = {
    ("mechanisms.py", "*", "*"): "the mechanisms themselves (release on the grid)",
    ("balcan2017/candidates.py", "jl_project", "standard_normal"):
        "Johnson-Lindenstrauss projection matrix: data independent",
    ("balcan2017/kvariates.py", "simhash_buckets", "standard_normal"): "SimHash hyperplanes: data independent",
    ("cohenaddad2022/coreset.py", "simhash_codes", "standard_normal"): "SimHash hyperplanes: data independent",
    ("lushen2020/sampling_zone.py", "random_orthogonal_unit", "standard_normal"):
        "Lu & Shen is not DP as published (GUARANTEE): a direction in its data-dependent sampling zone",
    ("lushen2020/sampling_zone.py", "uniform_in_balls", "standard_normal"):
        "Lu & Shen is not DP as published (GUARANTEE): proposals of its ExpDP in a data-dependent zone",
    ("data/synthetic.py", "*", "standard_normal"): "synthetic datasets (seeded, data independent)",
    ("pipeline/replication.py", "null_error_rate", "standard_normal"):
        "simulated measurements for the replication rule's error under the null: no data, no release",
    ("pipeline/racing.py", "null_separation_rate", "standard_normal"):
        "simulated runs of two methods of equal mean for the race's error under the null: no data, no release",
    ("audit/floating_point.py", "legacy_gaussian", "normal"):
        "the audit's positive control: the raw-float Gaussian release it must catch (no algorithm calls it)",
}


def raw_noise_calls(source: str, path: str) -> list[tuple[str, str, str, int]]:
    """(path, enclosing function, sampler, line) of every call ``X.<sampler>(...)`` in `source`."""
    tree = ast.parse(source)
    found: list[tuple[str, str, str, int]] = []

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and child.func.attr in SAMPLERS):
                found.append((path, func, child.func.attr, child.lineno))
            visit(child, func)

    visit(tree, "<module>")
    return found


def _allowed(path: str, func: str, sampler: str) -> tuple[str, str, str] | None:
    for key in ((path, func, sampler), (path, "*", sampler), (path, func, "*"), (path, "*", "*")):
        if key in ALLOWED:
            return key
    return None


def violations(calls) -> tuple[list[str], set[tuple[str, str, str]]]:
    """The calls not in `ALLOWED` (as messages) and the allowlist entries that were used."""
    bad, used = [], set()
    for path, func, sampler, line in calls:
        key = _allowed(path, func, sampler)
        if key is None:
            bad.append(f"{path}:{line} in {func}(): .{sampler}(...) outside dpclust.mechanisms")
        else:
            used.add(key)
    return bad, used


def _scan_tree() -> list[tuple[str, str, str, int]]:
    calls = []
    for file in sorted(SRC.rglob("*.py")):
        rel = file.relative_to(SRC).as_posix()
        calls += raw_noise_calls(file.read_text(encoding="utf-8"), rel)
    return calls


def test_no_raw_noise_outside_mechanisms():
    bad, used = violations(_scan_tree())
    assert not bad, ("raw noise drawn outside dpclust.mechanisms (release it through a mechanism, or allowlist a "
                     "data-independent draw with its reason in tests/test_no_raw_noise.py):\n" + "\n".join(bad))
    stale = set(ALLOWED) - used
    assert not stale, f"allowlist entries that match no call (remove them): {sorted(stale)}"


def test_every_allowlist_entry_has_a_reason():
    for key, reason in ALLOWED.items():
        assert isinstance(reason, str) and len(reason.split()) >= 3, key


@pytest.mark.parametrize("snippet,expected", [
    ("def f(rng, x):\n    return x + rng.laplace(0, 1, size=3)\n", [("m.py", "f", "laplace", 2)]),
    ("y = np.random.default_rng(0).standard_normal(4)\n", [("m.py", "<module>", "standard_normal", 1)]),
    ("class A:\n    def g(self):\n        return self.rng.gumbel(size=2) + self.rng.exponential()\n",
     [("m.py", "g", "gumbel", 3), ("m.py", "g", "exponential", 3)]),
    ("def h(rng):\n    def inner():\n        return rng.gamma(2.0, 1.0)\n    return inner()\n",
     [("m.py", "inner", "gamma", 3)]),
    ("def ok(rng):\n    return rng.random(3) + rng.uniform(0, 1) + rng.integers(5)\n", []),
])
def test_scanner_finds_raw_noise(snippet, expected):
    assert raw_noise_calls(snippet, "m.py") == expected


def test_scanner_can_fail():
    calls = raw_noise_calls("def f(rng):\n    return rng.standard_normal(3)\n", "balcan2017/kvariates.py")
    bad, _ = violations(calls)
    assert bad == ["balcan2017/kvariates.py:2 in f(): .standard_normal(...) outside dpclust.mechanisms"]
    bad, used = violations(raw_noise_calls("def simhash_buckets(x, rng):\n    return rng.standard_normal(3)\n",
                                           "balcan2017/kvariates.py"))
    assert bad == [] and used == {("balcan2017/kvariates.py", "simhash_buckets", "standard_normal")}
