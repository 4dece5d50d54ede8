"""UCI Skin Segmentation."""

from __future__ import annotations

from dpclust.data.parsers.text import parse_text


def parse_skin(entry, paths):
    """UCI Skin_NonSkin.txt: B G R class, tab-separated, CRLF."""
    opts = dict({"delimiter": "\t", "usecols": [0, 1, 2], "label_column": 3}, **(entry.get("parse") or {}))
    yield from parse_text(dict(entry, parse=opts), paths)
