"""MNIST idx files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from dpclust.api import DPClustError
from dpclust.data.parsers.common import raw_file, read_bytes


def parse_idx(entry, paths) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """MNIST idx files (gzip or plain): images idx3 (n, rows, cols) uint8 -> (n, rows*cols)."""
    opts = entry.get("parse") or {}
    images = [_read_idx(raw_file(paths, f, entry), expect_ndim=3) for f in opts.get("images") or []]
    labels = [_read_idx(raw_file(paths, f, entry), expect_ndim=1) for f in opts.get("labels") or []]
    if not images:
        raise DPClustError(f"dataset {entry['name']!r}: idx parser needs parse.images")
    X = np.concatenate([im.reshape(im.shape[0], -1) for im in images]).astype(np.float64)
    y = None
    if labels:
        y = np.concatenate(labels).astype(np.int64)
        if y.shape[0] != X.shape[0]:
            raise DPClustError(f"dataset {entry['name']!r}: {y.shape[0]} labels for {X.shape[0]} images")
    yield X, y


def _read_idx(path: Path, expect_ndim: int) -> np.ndarray:
    raw = read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise DPClustError(f"{path.name}: not an idx file (bad magic number)")
    dtype_code, ndim = raw[2], raw[3]
    if dtype_code != 0x08:
        raise DPClustError(f"{path.name}: idx element type 0x{dtype_code:02x} is not unsigned byte")
    if ndim != expect_ndim:
        raise DPClustError(f"{path.name}: idx file has {ndim} dimensions, expected {expect_ndim}")
    header = 4 + 4 * ndim
    dims = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    size = int(np.prod(dims))
    if len(raw) != header + size:
        raise DPClustError(f"{path.name}: idx file holds {len(raw) - header} data bytes, its header "
                           f"says {size} (dims {dims}); truncated or corrupt")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)
