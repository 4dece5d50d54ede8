"""Processed datasets: one HDF5 file per dataset (data/processed/<dataset>.h5), and `prepare_dataset`.

File layout:

* ``X``: (n, d) float64 (gzip level 1 + shuffle, row chunks of ~1 MiB; no timestamps, so the same
  data give the same bytes); ``y``: (n,) labels where the dataset has them.
* attrs: ``name``, ``source`` (comma-joined raw sources, or ``synthetic:<generator>``), ``sha256``
  (of X's little-endian float64 C-order bytes: the content hash runs record), ``n``, ``d``,
  ``parser_version``, ``available`` (True), ``reason`` (""), plus JSON extras such as
  ``raw_sha256`` (the raw files used), ``subsample`` and ``settings`` (synthetic generators).
* A dataset that cannot be had is a marker file: ``available = False`` and a one-line ``reason``;
  `load_processed` raises `DatasetUnavailable(reason)` for it.

Writes are atomic (temporary file in the target directory + ``os.replace``); on any error the
temporary file is removed and no output is left. NaN/inf in parsed data is rejected naming the
dataset.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from ..api import DPClustError

CHUNK_BYTES = 1 << 20


class DatasetUnavailable(DPClustError):
    """The processed file is a marker for a dataset that could not be obtained; str() is the reason."""


@dataclass
class Dataset:
    X: np.ndarray
    y: np.ndarray | None
    attrs: dict[str, Any] = field(default_factory=dict)


def _h5py():
    import h5py

    return h5py


def _attr_value(v):
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, sort_keys=True)
    if v is None:
        return ""
    return v


class _AtomicH5:
    """Context manager: an h5py.File on a temporary path that replaces `path` on success."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(tmp)
        from .download import file_mode

        os.chmod(self.tmp, file_mode())
        try:
            self.fh = _h5py().File(self.tmp, "w", libver="earliest", track_order=False)
        except BaseException:
            self.tmp.unlink(missing_ok=True)
            raise
        return self.fh

    def __exit__(self, exc_type, exc, tb):
        try:
            self.fh.close()
        finally:
            if exc_type is None:
                os.replace(self.tmp, self.path)
            else:
                self.tmp.unlink(missing_ok=True)
        return False


def _check_finite(X: np.ndarray, name: str, offset: int = 0) -> None:
    if not np.isfinite(X).all():
        bad = ~np.isfinite(X)
        rows = np.flatnonzero(bad.any(axis=1))
        raise DPClustError(f"dataset {name!r}: parsed data contain NaN/inf in {rows.size} row(s) "
                           f"(first: row {offset + int(rows[0])}, column {int(np.flatnonzero(bad[rows[0]])[0])}); "
                           "the raw file is corrupt or the parser options are wrong")


def write_processed_chunks(path: str | Path, chunks: Iterable[tuple[np.ndarray, np.ndarray | None]],
                           attrs: Mapping[str, Any], n: int | None = None, d: int | None = None) -> dict:
    """Write (X, y) row chunks to `path` atomically; memory stays at one chunk.

    `n`/`d`, when given, are the expected shape (checked; a mismatch is an error and leaves no file).
    Returns the attrs written.
    """
    name = str(attrs.get("name", Path(path).stem))
    digest = hashlib.sha256()
    with _AtomicH5(path) as f:
        dX = dy = None
        rows = 0
        for X, y in chunks:
            X = np.ascontiguousarray(X, dtype="<f8")
            if X.ndim != 2:
                raise DPClustError(f"dataset {name!r}: parsed X has shape {X.shape}, expected 2-D")
            _check_finite(X, name, rows)
            if dX is None:
                if d is not None and X.shape[1] != d:
                    raise DPClustError(f"dataset {name!r}: parsed d = {X.shape[1]}, registry expects d = {d}")
                width = X.shape[1]
                chunk_rows = max(1, min(CHUNK_BYTES // (8 * max(width, 1)), n or X.shape[0] or 1))
                dX = f.create_dataset("X", shape=(0, width), maxshape=(None, width), dtype="<f8",
                                      chunks=(chunk_rows, width), compression="gzip", compression_opts=1,
                                      shuffle=True, track_times=False)
                if y is not None:
                    dy = f.create_dataset("y", shape=(0,), maxshape=(None,), dtype=np.asarray(y).dtype,
                                          chunks=(max(chunk_rows, 1024),), compression="gzip",
                                          compression_opts=1, track_times=False)
            if X.shape[1] != dX.shape[1]:
                raise DPClustError(f"dataset {name!r}: chunks have different widths ({X.shape[1]} vs {dX.shape[1]})")
            if (y is None) != (dy is None) or (y is not None and len(y) != X.shape[0]):
                raise DPClustError(f"dataset {name!r}: labels missing or of the wrong length in a chunk")
            dX.resize(rows + X.shape[0], axis=0)
            dX[rows:] = X
            if dy is not None:
                dy.resize(rows + X.shape[0], axis=0)
                dy[rows:] = y
            rows += X.shape[0]
            digest.update(X.tobytes())
        if dX is None or rows == 0:
            raise DPClustError(f"dataset {name!r}: parsing produced no rows")
        if n is not None and rows != n:
            raise DPClustError(f"dataset {name!r}: parsed n = {rows}, registry expects n = {n}")
        out = dict(attrs)
        out.update(name=name, sha256=digest.hexdigest(), n=int(rows), d=int(dX.shape[1]), available=True,
                   reason="")
        out.setdefault("parser_version", _parser_version())
        out.setdefault("source", "")
        for k, v in out.items():
            f.attrs[k] = _attr_value(v)
    return out


def _parser_version() -> int:
    from .parsers import PARSER_VERSION

    return PARSER_VERSION


def write_processed(path: str | Path, X, y=None, attrs: Mapping[str, Any] | None = None) -> dict:
    """Write one processed dataset atomically (X as float64; y if given). Returns the attrs written.

    attrs should hold at least ``name`` and ``source``; ``sha256``, ``n``, ``d``, ``available``
    are computed, ``parser_version`` defaults to `parsers.PARSER_VERSION`.
    """
    X = np.asarray(X, dtype=np.float64)
    return write_processed_chunks(path, [(X, None if y is None else np.asarray(y))], attrs or {})


def write_unavailable(path: str | Path, name: str, reason: str) -> None:
    """Write a marker file for a dataset that cannot be had (available = False, reason)."""
    with _AtomicH5(path) as f:
        for k, v in dict(name=name, available=False, reason=str(reason).splitlines()[0] if reason else "",
                         parser_version=_parser_version(), sha256="", source="").items():
            f.attrs[k] = v


def _read_attrs(f) -> dict:
    out = {}
    for k, v in f.attrs.items():
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def processed_info(path: str | Path) -> dict:
    """The attrs of a processed file (cheap: reads no data)."""
    path = Path(path)
    if not path.exists():
        raise DPClustError(f"processed data file {path} does not exist")
    with _h5py().File(path, "r") as f:
        return _read_attrs(f)


def load_processed(path: str | Path) -> Dataset:
    """Load a processed file; raises `DatasetUnavailable(reason)` for an unavailable marker."""
    path = Path(path)
    if not path.exists():
        raise DPClustError(f"processed data file {path} does not exist; run `python -m dpclust data prepare`")
    with _h5py().File(path, "r") as f:
        attrs = _read_attrs(f)
        if not bool(attrs.get("available", False)):
            raise DatasetUnavailable(attrs.get("reason") or f"dataset {attrs.get('name', path.stem)!r} is unavailable")
        X = np.asarray(f["X"][...], dtype=np.float64)
        y = f["y"][...] if "y" in f else None
    return Dataset(X=X, y=y, attrs=attrs)


# --------------------------------------------------------------------------------- prepare
def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _log_default(line: str) -> None:
    print(line, file=sys.stderr)


def prepare_dataset(name: str, raw_dir: str | Path | None = "data/raw", out_path: str | Path | None = None,
                    registry=None, log=None) -> Path:
    """Build data/processed/<name>.h5 from fetched raw sources (or the generator for synthetic data).

    A source whose manifest says ``status: unavailable`` gives an unavailable marker (not an error).
    Errors (`DPClustError`, nothing written): a source not fetched yet, raw files changed since the
    fetch (sha256), parse failures, NaN/inf, n or d different from the registry.
    """
    from .registry import load_registry

    log = log if log is not None else _log_default
    reg = registry if registry is not None else load_registry()
    entry = reg.dataset(name)
    out = Path(out_path) if out_path is not None else Path("data/processed") / f"{name}.h5"
    if entry["kind"] == "synthetic":
        from .synthetic import write_synthetic

        write_synthetic(entry, out)
        log(f"dataset {name!r}: generated {entry['n']} x {entry['d']} -> {out}")
        return out
    if raw_dir is None:
        raise DPClustError(f"dataset {name!r} is built from raw sources {entry['sources']}: give --raw-dir")
    paths: dict[str, Path] = {}
    raw_sha: dict[str, str] = {}
    for source in entry["sources"]:
        manifest_path = Path(raw_dir) / source / "manifest.json"
        if not manifest_path.exists():
            raise DPClustError(f"dataset {name!r}: source {source!r} has not been fetched ({manifest_path} is "
                               f"missing); run `python -m dpclust data fetch {source} --raw-dir {raw_dir}`")
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("status") != "ok":
            reason = manifest.get("reason") or f"dataset source {source!r} unavailable"
            write_unavailable(out, name, reason)
            log(f"dataset {name!r}: wrote an unavailable marker to {out} ({reason})")
            return out
        for f in manifest["files"]:
            p = Path(raw_dir) / source / f["path"]
            if not p.exists() or _sha256_file(p) != f["sha256"]:
                raise DPClustError(f"dataset {name!r}: raw file {p} is missing or changed since it was fetched "
                                   f"(manifest sha256 {f['sha256'][:12]}...); fetch {source!r} again")
            paths[f["name"]] = p
            raw_sha[f"{source}/{f['name']}"] = f["sha256"]
    from .parsers import PARSER_VERSION, parse_dataset

    chunks = parse_dataset(entry, paths)
    attrs = {"name": name, "source": ",".join(entry["sources"]), "parser": entry["parser"],
             "parser_version": PARSER_VERSION, "raw_sha256": raw_sha}
    sub = entry.get("subsample")
    if sub:
        chunks = list(chunks)
        X = np.concatenate([c[0] for c in chunks])
        y = None if chunks[0][1] is None else np.concatenate([c[1] for c in chunks])
        _check_finite(X, name)
        if X.shape[0] != sub["from_n"]:
            raise DPClustError(f"dataset {name!r}: the source has n = {X.shape[0]} rows, the subsample rule "
                               f"expects from_n = {sub['from_n']}")
        idx = np.sort(np.random.default_rng(sub["seed"]).choice(X.shape[0], size=sub["n"], replace=False))
        chunks = [(X[idx], None if y is None else y[idx])]
        attrs["subsample"] = {"from_n": sub["from_n"], "n": sub["n"], "seed": sub["seed"],
                              "rule": "uniform without replacement, numpy default_rng(seed).choice, sorted"}
    written = write_processed_chunks(out, chunks, attrs, n=entry["n"], d=entry["d"])
    log(f"dataset {name!r}: {written['n']} x {written['d']} -> {out} (sha256 {written['sha256'][:12]}...)")
    return out
