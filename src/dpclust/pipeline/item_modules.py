"""Where an item's step functions live: found by convention, never named in the config.

The item `<item>` of `config/papers/<paper>.yaml` is implemented by the module
`dpclust.pipeline.items.<paper>.<item>`, which exposes its steps under fixed names:

* `aggregate(records, item, ctx) -> DataFrame` — optional; default `dpclust.pipeline.cells.tidy`;
* `render(table, item, stem)` — required: draws the figure or writes the table;
* `checks(table, item) -> list[Check]` — optional: decides the paper's claims (no checks step without it).

Items that share their functions re-export them from a sibling (`fig2a.py`: `from .fig2 import
aggregate, render`), so that an item's code hash still covers exactly the code it runs. Whether a
module defines a step is read from its syntax tree, so planning imports no item module.
"""

from __future__ import annotations

import ast
from functools import cache

from dpclust.api import DPClustError
from dpclust.pipeline.codehash import module_path

ITEMS_PACKAGE = "dpclust.pipeline.items"
STEPS = ("aggregate", "render", "checks")
REQUIRED = ("render",)


def item_module(paper: str, item: str) -> str:
    """The module of an item's step functions."""
    return f"{ITEMS_PACKAGE}.{paper}.{item}"


@cache
def defined_steps(module: str) -> frozenset[str]:
    """The step names (`STEPS`) the module binds at its top level (def, import or assignment)."""
    path = module_path(module)
    if path is None:
        return frozenset()
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                names.update(e.id for e in elts if isinstance(e, ast.Name))
    return frozenset(names & set(STEPS))


def check_item_module(paper: str, item: str) -> None:
    """One clear error when the item has no module or its module lacks a required step."""
    module = item_module(paper, item)
    where = f"src/{module.replace('.', '/')}.py"
    if module_path(module) is None:
        raise DPClustError(f"item {paper}/{item} has no module {module}: add {where} defining "
                           "render(table, item, stem) (and optionally aggregate and checks; "
                           "dpclust.pipeline.item_modules)")
    missing = [s for s in REQUIRED if s not in defined_steps(module)]
    if missing:
        raise DPClustError(f"{where} (item {paper}/{item}) defines no {', '.join(missing)}: the item "
                           "module exposes its steps under the fixed names aggregate, render, checks")
