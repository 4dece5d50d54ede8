"""SIPU / Fränti benchmark sets."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpclust.api import DPClustError
from dpclust.data.parsers.common import as_labels, loadtxt, open_text
from dpclust.data.parsers.text import parse_text


def parse_sipu(entry, paths):
    """SIPU / Fränti benchmark sets: whitespace-separated coordinates; optional labels file
    (one integer per line, e.g. gagolews' labels0) used only if it was fetched."""
    opts = dict(entry.get("parse") or {})
    labels = opts.pop("labels", None)
    chunks = list(parse_text(dict(entry, parse=dict(opts, delimiter="whitespace")), paths))
    X = np.concatenate([c[0] for c in chunks])
    y = None
    if labels and labels in paths:
        y = as_labels(loadtxt(open_text(paths[labels]), Path(paths[labels]), None, None).ravel())
        if y.shape[0] != X.shape[0]:
            raise DPClustError(f"dataset {entry['name']!r}: {y.shape[0]} labels for {X.shape[0]} points")
    yield X, y
