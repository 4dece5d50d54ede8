"""Content hashes of dpclust source modules, for Snakemake's `params` rerun trigger.

A rule's params include the hash of the module that implements its algorithm (or items) together
with every `dpclust` module it imports, transitively. Editing an algorithm therefore re-runs only
the jobs that use it, and a fresh checkout (new timestamps, same contents) re-runs nothing.
Imports are found statically with `ast` (no module is imported), so hashing is cheap at DAG time.
What is hashed is (the sha256 of) each module's syntax tree without docstrings (comments are not in it), so editing
a comment, a docstring or the layout re-runs nothing; any change to what the code does re-runs its
dependents.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]   # src/dpclust
#: what a step that draws no figure leaves out of its code hash: the figures' style, so that a style
#: edit re-runs render jobs only (workflow/rules/common.smk)
DRAWS_NOTHING = frozenset({"dpclust.pipeline.style"})


@cache
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


def _is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _code_text(tree: ast.Module) -> str:
    """The module's syntax tree without docstrings, as text (what the code hash covers)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False)


def code_text(source: str) -> str:
    """What the code hash covers of a module's source: its syntax tree without docstrings, as text
    (two sources with equal code text have the same code whatever their comments and docstrings)."""
    return _code_text(ast.parse(source))


def _imported(module: str, path: Path, tree: ast.Module) -> list[str]:
    """Every dpclust module name an import statement of the module could load (existing or not)."""
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
    return sorted(found)


# Parsing every module at each Snakemake start cost about a second: what a module's source gives
# (the digest of its code text, the modules it names) is kept in a small cache keyed by the
# module's name and the sha256 of its bytes, so an edited file is always parsed again.
CACHE_VERSION = 1
_cache: dict | None = None
_cache_dirty = False


def cache_file() -> Path:
    root = os.environ.get("DPCLUST_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "dpclust")
    return Path(root) / f"codehash-v{CACHE_VERSION}.json"


def _disk_cache() -> dict:
    global _cache
    if _cache is None:
        try:
            _cache = json.loads(cache_file().read_text(encoding="utf-8"))
            if not isinstance(_cache, dict):
                _cache = {}
        except (OSError, ValueError):
            _cache = {}
    return _cache


def _save_cache() -> None:
    """Write the cache if it grew (atomically; a read-only or full disk only costs speed)."""
    global _cache_dirty
    if not _cache_dirty:
        return
    _cache_dirty = False
    path = cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".codehash-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(_disk_cache(), fh, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass


@cache
def _facts(module: str, path: Path) -> tuple[str, tuple[str, ...]]:
    """(sha256 of the module's code text, the dpclust modules its imports name)."""
    global _cache_dirty
    raw = path.read_bytes()
    key = f"{module}:{hashlib.sha256(raw).hexdigest()}"
    cache = _disk_cache()
    hit = cache.get(key)
    if isinstance(hit, list) and len(hit) == 2:
        return hit[0], tuple(hit[1])
    tree = ast.parse(raw)
    imports = _imported(module, path, tree)
    digest = hashlib.sha256(_code_text(tree).encode()).hexdigest()
    cache[key] = [digest, imports]
    _cache_dirty = True
    return digest, tuple(imports)


def _imports(module: str, path: Path) -> frozenset[str]:
    return frozenset(m for m in _facts(module, path)[1] if module_path(m) is not None)


@cache
def closure(module: str, exclude: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """`module` and every dpclust module it imports, transitively, sorted; modules in `exclude` (and
    what only they import) are left out."""
    seen: set[str] = set()
    stack = [module]
    while stack:
        mod = stack.pop()
        if mod in seen or mod in exclude:
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


@cache
def code_hash(*modules: str, exclude: frozenset[str] = frozenset()) -> str:
    """sha256 (first 16 hex digits) over the code text (`_code_text`, by its digest) of the modules'
    import closures, without the modules in `exclude` (e.g. the figures' style for a step that
    draws nothing)."""
    h = hashlib.sha256()
    for mod in sorted(set(m for top in modules for m in closure(top, exclude))):
        h.update(mod.encode())
        h.update(_facts(mod, module_path(mod))[0].encode())
    _save_cache()
    return h.hexdigest()[:16]
