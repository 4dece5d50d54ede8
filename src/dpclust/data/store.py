"""Reading processed datasets (the run path): `load_processed`, `processed_info`, the sidecar record.

A processed dataset is ``data/processed/<name>.h5`` (written by `dpclust.data.processed`) plus its
record ``data/processed/<name>.json``: name, availability and reason, the sha256 of X (its
little-endian float64 C-order bytes), n, d, and the size and a fingerprint of the .h5 when it was
written. The record is what the workflow reads when it plans (cheap: no HDF5), and what tells
an intact file from one altered or truncated after it was written.

This module imports no parser, downloader or writer, so editing those never changes the code hash
of a run (see dpclust.pipeline.codehash).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dpclust.api import DPClustError


class DatasetUnavailable(DPClustError):
    """The processed file is a marker for a dataset that could not be obtained; str() is the reason."""


class ProcessedFileError(DPClustError):
    """A processed file is missing, unreadable, or differs from its record: it must be rebuilt."""


@dataclass
class Dataset:
    X: np.ndarray
    y: np.ndarray | None
    attrs: dict[str, Any] = field(default_factory=dict)


def record_path(h5_path: str | Path) -> Path:
    """The sidecar record of a processed file: ``<name>.json`` beside ``<name>.h5``."""
    return Path(h5_path).with_suffix(".json")


def rebuild_hint(path: str | Path) -> str:
    return (f"delete it (rm {Path(path).as_posix()}) and re-run snakemake, which rebuilds it, or run "
            f"`python -m dpclust.pipeline data prepare {Path(path).stem} --out {Path(path).as_posix()}`")


def read_record(h5_path: str | Path) -> dict | None:
    """The sidecar record, or None when it is missing or unreadable."""
    try:
        return json.loads(record_path(h5_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


FINGERPRINT_BLOCK = 1 << 16


def file_stamp(path: str | Path) -> dict:
    """Size and a cheap fingerprint (sha256 of the first, middle and last 64 KiB) of a file.
    Modification times are no use here: Snakemake touches every output after its job."""
    size = os.path.getsize(path)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for start in sorted({0, max(0, size // 2 - FINGERPRINT_BLOCK // 2), max(0, size - FINGERPRINT_BLOCK)}):
            fh.seek(start)
            h.update(fh.read(FINGERPRINT_BLOCK))
    return {"size": int(size), "fingerprint": h.hexdigest()}


def intact(h5_path: str | Path) -> tuple[bool, str]:
    """(True, "") if the file exists and matches its record's size and fingerprint (cheap: reads
    at most 192 KiB); else (False, what is wrong). An alteration the fingerprint misses is caught
    when the file is loaded (the sha256 of X is verified then)."""
    path = Path(h5_path)
    if not path.exists():
        return False, "missing"
    rec = read_record(path)
    if rec is None:
        return False, f"has no readable record ({record_path(path).name})"
    stamp = file_stamp(path)
    if stamp["size"] != rec.get("size"):
        return False, f"is truncated or replaced (size {stamp['size']} bytes, {rec.get('size')} when written)"
    if stamp["fingerprint"] != rec.get("fingerprint"):
        return False, "was altered after it was written"
    return True, ""


def content_id(h5_path: str | Path) -> str:
    """What a run depends on: the sha256 of X, or 'unavailable:<reason>' for a marker; '' if the
    record cannot be read (the workflow then rebuilds the file first). Cached per state of the
    record file (the workflow asks once per job)."""
    try:
        st = os.stat(record_path(h5_path))
    except OSError:
        return ""
    return _content_id(str(h5_path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=1024)
def _content_id(h5_path: str, mtime_ns: int, size: int) -> str:
    rec = read_record(h5_path)
    if rec is None:
        return ""
    if not rec.get("available", False):
        return "unavailable:" + hashlib.sha256(str(rec.get("reason", "")).encode()).hexdigest()[:16]
    return str(rec.get("sha256", ""))


def x_sha256(X: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(X, dtype="<f8").tobytes()).hexdigest()


def _h5py():
    import h5py

    return h5py


def _read_attrs(f) -> dict:
    out = {}
    for k, v in f.attrs.items():
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def _open(path: Path):
    if not path.exists():
        raise ProcessedFileError(f"processed data file {path} does not exist; run snakemake (it builds it) or "
                                 f"`python -m dpclust.pipeline data prepare {path.stem} --out {path}`")
    try:
        return _h5py().File(path, "r")
    except OSError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ProcessedFileError(f"processed data file {path} is not a readable HDF5 file ({first}); "
                                 f"{rebuild_hint(path)}") from None


def processed_info(path: str | Path) -> dict:
    """The attrs of a processed file (cheap: reads no data)."""
    path = Path(path)
    with _open(path) as f:
        return _read_attrs(f)


def load_processed(path: str | Path, expect_sha256: str | None = None) -> Dataset:
    """Load a processed file, verifying X against the sha256 recorded when it was written (and
    against `expect_sha256`, what the workflow planned with, when given).

    Raises `DatasetUnavailable(reason)` for an unavailable marker and `ProcessedFileError` (one
    line naming the file and how to rebuild it) for a missing, truncated or altered file.
    """
    path = Path(path)
    with _open(path) as f:
        attrs = _read_attrs(f)
        if not bool(attrs.get("available", False)):
            raise DatasetUnavailable(attrs.get("reason") or f"dataset {attrs.get('name', path.stem)!r} is unavailable")
        try:
            X = np.asarray(f["X"][...], dtype=np.float64)
            y = f["y"][...] if "y" in f else None
        except (OSError, KeyError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ProcessedFileError(f"processed data file {path} is corrupt ({first}); {rebuild_hint(path)}") from None
    digest = x_sha256(X)
    if digest != attrs.get("sha256"):
        raise ProcessedFileError(f"processed data file {path} does not match the checksum recorded when it was "
                                 f"written (altered or corrupt); {rebuild_hint(path)}")
    if expect_sha256 and digest != expect_sha256:
        raise ProcessedFileError(f"processed data file {path} changed after the workflow planned this job "
                                 f"(sha256 {digest[:12]}..., planned {expect_sha256[:12]}...); re-run snakemake")
    return Dataset(X=X, y=y, attrs=attrs)
