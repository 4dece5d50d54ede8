"""Helpers shared by the parsers: decompression by magic bytes, text reading, small utilities."""

from __future__ import annotations

import gzip
import io
import subprocess
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from dpclust.api import DPClustError

GZIP_MAGIC = b"\x1f\x8b"
COMPRESS_MAGIC = b"\x1f\x9d"


def _magic(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(2)


def read_bytes(path: str | Path) -> bytes:
    """The decompressed bytes of a gzip, .Z or plain file."""
    path = Path(path)
    magic = _magic(path)
    try:
        if magic == GZIP_MAGIC:
            with gzip.open(path, "rb") as fh:
                return fh.read()
        if magic == COMPRESS_MAGIC:
            try:
                proc = subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=True)
            except FileNotFoundError:
                raise DPClustError(f"{path} is Unix-compressed (.Z) and needs the `gzip` program to "
                                   "decompress; install gzip") from None
            except subprocess.CalledProcessError as exc:
                raise DPClustError(f"{path}: corrupt .Z file ({exc.stderr.decode(errors='replace').strip()})") from None
            return proc.stdout
    except (EOFError, gzip.BadGzipFile, OSError) as exc:
        raise DPClustError(f"{path}: corrupt or truncated compressed file ({exc})") from None
    return path.read_bytes()


def open_text(path: str | Path) -> io.TextIOBase:
    """A text stream (universal newlines) over a gzip, .Z or plain file."""
    path = Path(path)
    magic = _magic(path)
    if magic == GZIP_MAGIC:
        return gzip.open(path, "rt", encoding="utf-8", errors="strict", newline=None)
    if magic == COMPRESS_MAGIC:
        return io.StringIO(read_bytes(path).decode("utf-8"), newline=None)
    return open(path, encoding="utf-8", newline=None)


def raw_file(paths: Mapping[str, Path], name: str, entry) -> Path:
    if name not in paths:
        raise DPClustError(f"dataset {entry['name']!r}: raw file {name!r} is missing from the fetched "
                           f"source(s) {entry.get('sources')} (have {sorted(paths)})")
    return Path(paths[name])


def as_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if np.isfinite(y).all() and np.all(y == np.round(y)):
        return y.astype(np.int64)
    return y


def usecols_list(spec, ncols: int | None = None):
    """`usecols` as a list: a list of ints, or a "start:stop" string."""
    if spec is None:
        return None
    if isinstance(spec, str):
        start, _, stop = spec.partition(":")
        return list(range(int(start or 0), int(stop) if stop else ncols))
    return [int(c) for c in spec]


def delimiter_for(opt, first_line: str):
    if opt in (None, "whitespace"):
        return None
    if opt == "auto":
        return "," if "," in first_line else None
    return opt


def first_data_line(path: Path, skip_rows: int) -> str:
    with open_text(path) as fh:
        for i, line in enumerate(fh):
            if i >= skip_rows and line.strip():
                return line
    return ""


def loadtxt(source, path: Path, delimiter, cols, skip_rows=0, max_rows=None) -> np.ndarray:
    try:
        with np.errstate(all="ignore"):
            arr = np.loadtxt(source, delimiter=delimiter, usecols=cols, skiprows=skip_rows,
                             max_rows=max_rows, ndmin=2, dtype=np.float64, comments="#")
    except ValueError as exc:
        raise DPClustError(f"could not parse {path.name} as numeric text: {exc}") from None
    return arr


def split_label(arr: np.ndarray, nx: int, has_label: bool):
    X = np.ascontiguousarray(arr[:, :nx])
    y = as_labels(arr[:, nx]) if has_label else None
    return X, y
