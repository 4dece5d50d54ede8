"""Parsers: raw files of a source -> (X float64, y or None), one module per file format.

Every parser is ``parse_<name>(entry, paths) -> Iterator[(X_chunk, y_chunk)]`` where `entry` is the
registry entry of the dataset and `paths` maps the logical file names of its sources to local
files. Small datasets come as one chunk; the text parser streams row chunks when the entry's
``parse.chunk_rows`` is set (HIGGS), so the processed writer never holds the whole file.

Compression is detected by magic bytes, not by file name: gzip (1f 8b), Unix compress ``.Z``
(1f 9d, decompressed with the system ``gzip -dc``), otherwise plain text. Line endings may be LF or
CRLF. Parsers check the structure they rely on (idx magic numbers and sizes, field counts) and raise
`DPClustError` naming the file.

One module per format (`PARSER_MODULES`), imported by name: the workflow hashes only the module of
a dataset's parser (and what it imports), so editing one parser re-prepares only its datasets.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from dpclust.api import DPClustError

#: parser name (registry `parser:`) -> module defining `parse_<name>`.


PARSER_MODULES = {name: f"{__name__}.{name}" for name in
                  ("idx", "text", "adult", "sklearn_iris", "skin", "shuttle", "sipu", "gowalla")}


def parser_module(name: str) -> str:
    if name not in PARSER_MODULES:
        raise DPClustError(f"unknown parser {name!r}; valid: {', '.join(sorted(PARSER_MODULES))}")
    return PARSER_MODULES[name]


def parse_dataset(entry, paths: Mapping[str, str | Path]):
    """Dispatch on entry["parser"]; returns an iterator of (X, y) row chunks."""
    name = entry.get("parser")
    function = getattr(importlib.import_module(parser_module(name)), f"parse_{name}")
    return function(entry, {k: Path(v) for k, v in paths.items()})
