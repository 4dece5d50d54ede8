"""The documents point at things that exist: every relative link, every repository path and every
`dpclust.…` name written in code style in README.md, docs/*.md and config/README.md resolves, so a
moved file or a renamed function cannot leave a reader a dead reference."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "config" / "README.md"]
TOP_DIRS = ("src", "tests", "benchmarks", "config", "workflow", "scripts", "profiles", "docs", ".ci")

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATH = re.compile(r"`((?:{})/[^`\s]*)`".format("|".join(re.escape(d) for d in TOP_DIRS)))
NAME = re.compile(r"`(dpclust(?:\.[A-Za-z_]\w*)+)(?::([A-Za-z_]\w*))?(?:\(\))?`")


def dead_links(doc: Path, text: str) -> list[str]:
    return [t for t in LINK.findall(text)
            if not re.match(r"[a-z]+:", t) and not (doc.parent / t).exists()]


def dead_paths(text: str) -> list[str]:
    out = []
    for raw in PATH.findall(text):
        path = raw.split("::")[0].rstrip("/.,")
        if any(c in path for c in "<>*{}[]|"):           # a pattern, not one file
            continue
        if not (REPO / path).exists():
            out.append(path)
    return out


def resolves(dotted: str) -> bool:
    """A module, or an attribute reached from the longest importable module prefix."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def dead_names(text: str) -> list[str]:
    names = {m.group(1) + ("." + m.group(2) if m.group(2) else "") for m in NAME.finditer(text)}
    return sorted(n for n in names if not resolves(n))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_reference_of_a_document_resolves(doc):
    text = doc.read_text(encoding="utf-8")
    dead = ([f"link {t}" for t in dead_links(doc, text)] + [f"path {t}" for t in dead_paths(text)]
            + [f"name {t}" for t in dead_names(text)])
    assert not dead, f"{doc.relative_to(REPO)} points at what does not exist: {dead}; fix the reference"


def test_the_checks_find_dead_references(tmp_path):
    doc = tmp_path / "doc.md"
    text = ("[a](missing.md) [b](https://example.org) `src/dpclust/no_such_module.py` `tests/*.py` "
            "`dpclust.metrics.no_such_function` `dpclust.metrics.assign` `dpclust.metrics:assign`")
    assert dead_links(doc, text) == ["missing.md"]
    assert dead_paths(text) == ["src/dpclust/no_such_module.py"]
    assert dead_names(text) == ["dpclust.metrics.no_such_function"]


def test_the_readme_stays_short():
    """The house issue's bound: what it is, the two commands, presets, where changes go, links; the
    results and measurements live on generated pages."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail to docs/ and link it"
