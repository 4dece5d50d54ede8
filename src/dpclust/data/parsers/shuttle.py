"""Statlog Shuttle."""

from __future__ import annotations

import numpy as np

from dpclust.data.parsers.text import parse_text


def parse_shuttle(entry, paths):
    """Statlog shuttle.trn / shuttle.tst: 9 integer attributes + class, space-separated."""
    opts = dict({"delimiter": "whitespace", "usecols": list(range(9)), "label_column": 9},
                **(entry.get("parse") or {}))
    chunks = list(parse_text(dict(entry, parse=opts), paths))
    yield np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])
