"""Delimited numeric text (comma, tab or whitespace), streamed in row chunks when parse.chunk_rows is set."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from dpclust.api import DPClustError
from dpclust.data.parsers.common import (
    delimiter_for,
    first_data_line,
    loadtxt,
    open_text,
    raw_file,
    split_label,
    usecols_list,
)


def parse_text(entry, paths) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """Numeric text (whitespace, comma or tab separated; gzip/.Z/plain).

    Options (entry["parse"]): files, delimiter (auto | whitespace | "," | "\\t"), skip_rows,
    usecols (list or "start:stop"; default: all columns but the label), label_column,
    labels (a separate one-label-per-line file), chunk_rows (stream in row chunks).
    """
    opts = entry.get("parse") or {}
    files = opts.get("files") or []
    if not files:
        raise DPClustError(f"dataset {entry['name']!r}: text parser needs parse.files")
    skip_rows = int(opts.get("skip_rows", 0))
    label_col = opts.get("label_column")
    chunk_rows = opts.get("chunk_rows")
    for name in files:
        path = raw_file(paths, name, entry)
        first = first_data_line(path, skip_rows)
        delim = delimiter_for(opts.get("delimiter", "auto"), first)
        ncols = len(first.split(delim)) if first else 0
        cols = usecols_list(opts.get("usecols"), ncols)
        if cols is None:
            cols = [c for c in range(ncols) if c != label_col]
        read_cols = cols + ([int(label_col)] if label_col is not None else [])
        if ncols and max(read_cols) >= ncols:
            raise DPClustError(f"{path.name}: needs column {max(read_cols)} but its first row has {ncols} fields")
        with open_text(path) as fh:
            if not chunk_rows:
                arr = loadtxt(fh, path, delim, read_cols, skip_rows)
                yield split_label(arr, len(cols), label_col is not None)
                continue
            for _ in range(skip_rows):
                next(fh, None)
            while True:
                lines = list(itertools.islice(fh, int(chunk_rows)))
                if not lines:
                    break
                yield split_label(loadtxt(lines, path, delim, read_cols), len(cols), label_col is not None)
    if opts.get("labels"):
        raise DPClustError(f"dataset {entry['name']!r}: use the sipu parser for a separate labels file")
