"""Content hashes of dpclust source modules, for Snakemake's `params` rerun trigger.

A rule's params include the hash of the module that implements its algorithm (or items) together
with every `dpclust` module it imports, transitively. Editing an algorithm therefore re-runs only
the jobs that use it, and a fresh checkout (new timestamps, same contents) re-runs nothing.
Imports are found statically with `ast` (no module is imported), so hashing is cheap at DAG time.
What is hashed is each module's syntax tree without docstrings (comments are not in it), so editing
a comment, a docstring or the layout re-runs nothing; any change to what the code does re-runs its
dependents.
"""

from __future__ import annotations

import ast
import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent


def module_path(module: str) -> Path | None:
    """File of a `dpclust.*` module (package → its __init__.py); None if it does not exist."""
    parts = module.split(".")
    if parts[0] != "dpclust":
        return None
    base = PACKAGE_ROOT.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _statements(body):
    """Every statement, nested ones too (imports are statements: expressions need no visit)."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            sub = getattr(node, name, None)
            if sub:
                yield from _statements(sub)


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


@lru_cache(maxsize=None)
def code_text(path: Path) -> str:
    """The module's syntax tree without docstrings, as text (what the code hash covers)."""
    tree = _tree(path)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False)


@lru_cache(maxsize=None)
def _imports(module: str, path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("dpclust"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("dpclust"):
                continue
            found.add(target)
            for alias in node.names:  # `from . import x` may name submodules
                found.add(f"{target}.{alias.name}")
    return frozenset(m for m in found if module_path(m) is not None)


@lru_cache(maxsize=None)
def closure(module: str) -> tuple[str, ...]:
    """`module` and every dpclust module it imports, transitively, sorted."""
    seen: set[str] = set()
    stack = [module]
    while stack:
        mod = stack.pop()
        if mod in seen:
            continue
        path = module_path(mod)
        if path is None:
            continue
        seen.add(mod)
        # a submodule import also runs its parent packages' __init__
        parent = mod.rpartition(".")[0]
        if parent and parent not in seen:
            stack.append(parent)
        stack.extend(_imports(mod, path) - seen)
    return tuple(sorted(seen))


@lru_cache(maxsize=None)
def code_hash(*modules: str) -> str:
    """sha256 (first 16 hex digits) over the code (`code_text`) of the modules' import closures."""
    h = hashlib.sha256()
    for mod in sorted(set(m for top in modules for m in closure(top))):
        h.update(mod.encode())
        h.update(code_text(module_path(mod)).encode())
    return h.hexdigest()[:16]
