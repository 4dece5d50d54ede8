"""Writing processed datasets (data/processed/<dataset>.h5) and `prepare_dataset`.

File layout:

* ``X``: (n, d) float64 (gzip level 1 + shuffle, row chunks of ~1 MiB; no timestamps, so the same
  data give the same bytes); ``y``: (n,) labels where the dataset has them.
* attrs: ``name``, ``source`` (comma-joined raw sources, or ``synthetic:<generator>``), ``sha256``
  (of X's little-endian float64 C-order bytes: the content hash runs record), ``n``, ``d``,
  ``format_version``, ``available`` (True), ``reason`` (""), plus JSON extras such as
  ``raw_sha256`` (the raw files used), ``subsample``, ``settings`` (synthetic generators), and
  ``origin`` = "unverified" with ``origin_note`` for a dataset the registry marks so.
* A dataset that cannot be had is a marker file: ``available = False`` and a one-line ``reason``;
  `load_processed` raises `DatasetUnavailable(reason)` for it.
* Beside each file, its record ``<dataset>.json`` (see `dpclust.data.store`): what the workflow
  plans with, and how an intact file is told from an altered one.

Writes are atomic (temporary file in the target directory + ``os.replace``, mode from the umask);
on any error no output is left. NaN/inf in parsed data is rejected naming the dataset and the
first bad row. Reading lives in `dpclust.data.store`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dpclust.api import DPClustError
from dpclust.data.store import Dataset, DatasetUnavailable, file_stamp, load_processed, processed_info, record_path  # noqa: F401
from dpclust.fileio import atomic_path, write_json_atomic

CHUNK_BYTES = 1 << 20
#: Layout version of processed files (bump when the file layout changes).
FORMAT_VERSION = 1


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
    """Context manager: an h5py.File on a temporary path that replaces `path` on success, then
    writes the file's record (`store.record_path`)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.record: dict = {}

    def __enter__(self):
        self._ctx = atomic_path(self.path, suffix=".h5tmp")
        self.tmp = self._ctx.__enter__()
        try:
            self.fh = _h5py().File(self.tmp, "w", libver="earliest", track_order=False)
        except BaseException:
            self._ctx.__exit__(*sys.exc_info())
            raise
        return self.fh

    def __exit__(self, exc_type, exc, tb):
        try:
            self.fh.close()
        except BaseException:
            if exc_type is None:
                exc_type, exc, tb = sys.exc_info()
        self._ctx.__exit__(exc_type, exc, tb)
        if exc_type is None:
            write_json_atomic(dict(self.record, **file_stamp(self.path)), record_path(self.path), compact=False)
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
    writer = _AtomicH5(path)
    with writer as f:
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
        out.setdefault("format_version", FORMAT_VERSION)
        out.setdefault("source", "")
        for k, v in out.items():
            f.attrs[k] = _attr_value(v)
        writer.record = {"name": name, "available": True, "reason": "", "sha256": out["sha256"],
                         "n": out["n"], "d": out["d"]}
    return out


def write_processed(path: str | Path, X, y=None, attrs: Mapping[str, Any] | None = None) -> dict:
    """Write one processed dataset atomically (X as float64; y if given). Returns the attrs written.

    attrs should hold at least ``name`` and ``source``; ``sha256``, ``n``, ``d``, ``available``
    are computed.
    """
    X = np.asarray(X, dtype=np.float64)
    return write_processed_chunks(path, [(X, None if y is None else np.asarray(y))], attrs or {})


def write_unavailable(path: str | Path, name: str, reason: str) -> None:
    """Write a marker file for a dataset that cannot be had (available = False, reason)."""
    reason = str(reason).splitlines()[0] if reason else ""
    writer = _AtomicH5(path)
    with writer as f:
        for k, v in dict(name=name, available=False, reason=reason, format_version=FORMAT_VERSION,
                         sha256="", source="").items():
            f.attrs[k] = v
        writer.record = {"name": name, "available": False, "reason": reason, "sha256": "", "n": 0, "d": 0}


# --------------------------------------------------------------------------------- prepare
def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_synthetic(entry: Mapping[str, Any], out: str | Path) -> dict:
    """Generate the synthetic dataset `entry` (`dpclust.data.synthetic`) into the processed HDF5 file
    `out` (chunk by chunk, atomically)."""
    from dpclust.data.synthetic import generate_chunks

    bounds = entry.get("bounds")
    name = entry["name"]

    def checked():
        for X, y in generate_chunks(entry):
            if bounds is not None and (X.min() < bounds[0] or X.max() > bounds[1]):
                raise DPClustError(f"dataset {name!r}: generated data leave the registry bounds {bounds}")
            yield X, y

    attrs = {"name": name, "source": f"synthetic:{entry['generator']}", "generator": entry["generator"],
             "settings": dict(entry.get("settings") or {})}
    return write_processed_chunks(out, checked(), attrs, n=int(entry["n"]), d=int(entry["d"]))


def _log_default(line: str) -> None:
    print(line, file=sys.stderr)


def prepare_dataset(name: str, raw_dir: str | Path | None = "data/raw", out_path: str | Path | None = None,
                    registry=None, log=None, entry: dict | None = None) -> Path:
    """Build data/processed/<name>.h5 from fetched raw sources (or the generator for synthetic data).

    A source whose manifest says ``status: unavailable`` gives an unavailable marker (not an error).
    Errors (`DPClustError`, nothing written): a source not fetched yet, raw files changed since the
    fetch (sha256), parse failures, NaN/inf, n or d different from the registry. `entry`, when
    given, is the dataset's registry entry (the workflow passes it; then no registry is read).
    """
    log = log if log is not None else _log_default
    if entry is None:
        from dpclust.data.registry import load_registry

        entry = (registry if registry is not None else load_registry()).dataset(name)
    out = Path(out_path) if out_path is not None else Path("data/processed") / f"{name}.h5"
    if entry["kind"] == "synthetic":
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
                               f"missing); run `python -m dpclust.pipeline data fetch {source} --raw-dir {raw_dir}`")
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
    from dpclust.data.parsers import parse_dataset
    from dpclust.data.registry import origin_unverified

    chunks = parse_dataset(entry, paths)
    attrs = {"name": name, "source": ",".join(entry["sources"]), "parser": entry["parser"],
             "raw_sha256": raw_sha}
    why = origin_unverified(entry)
    if why is not None:  # only then: the attrs of every other dataset stay as they were
        attrs.update(origin="unverified", origin_note=why)
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
