"""SNAP Gowalla check-ins."""

from __future__ import annotations

import numpy as np

from dpclust.data.parsers.common import loadtxt, open_text, raw_file


def parse_gowalla(entry, paths):
    """SNAP loc-gowalla_totalCheckins: user, time, latitude, longitude, location id (tab-separated).
    Output: the unique (longitude, latitude) pairs, sorted."""
    opts = entry.get("parse") or {}
    out = []
    for name in opts.get("files") or []:
        path = raw_file(paths, name, entry)
        with open_text(path) as fh:
            latlon = loadtxt(fh, path, "\t", [2, 3])
        out.append(latlon[:, ::-1])
    yield np.unique(np.concatenate(out), axis=0), None
