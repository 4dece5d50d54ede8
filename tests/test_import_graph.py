"""The import graph of `src/dpclust`: the library never imports the pipeline, and no module imports
itself through others (no cycle), function-level imports included (read statically, as the code
hashes read them: `dpclust.pipeline.codehash`)."""
from __future__ import annotations

import ast
from pathlib import Path

from dpclust.pipeline import codehash

SRC = Path(codehash.PACKAGE_ROOT).parent
PIPELINE = "dpclust.pipeline"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "dpclust").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _edges() -> dict[str, set[str]]:
    """Each module's imports of other dpclust modules (a `from package import name` names the
    submodule when there is one, else the package)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        named = codehash._imported(name, path, ast.parse(path.read_bytes()))
        targets = {m for m in named if m in modules}
        # `from dpclust.x import f` also names "dpclust.x.f", which is no module: only the package counts
        graph[name] = {m for m in targets if m != name}
    return graph


def _is_pipeline(module: str) -> bool:
    return module == PIPELINE or module.startswith(PIPELINE + ".")


def test_the_library_never_imports_the_pipeline():
    offenders = sorted(f"{m} -> {t}" for m, targets in _edges().items() if not _is_pipeline(m)
                       for t in targets if _is_pipeline(t))
    assert offenders == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert _cycles(_edges()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_name_is_used_for_two_things():
    """A module's last name is not also a top-level module or package of the library under another
    meaning (e.g. `dpclust.workflow` beside the Snakemake `workflow/` directory, `runner` twice)."""
    modules = _modules()
    top = {name.split(".")[1] for name in modules if name.count(".") >= 1}
    pipeline_leaves = {name.rsplit(".", 1)[1] for name in modules if _is_pipeline(name) and name != PIPELINE
                       and not name.startswith(PIPELINE + ".items.")}
    assert sorted(pipeline_leaves & (top - {"pipeline"})) == []
    assert "workflow" not in top
