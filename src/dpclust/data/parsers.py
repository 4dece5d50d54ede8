"""Parsers: raw files of a source -> (X float64, y or None).

Every parser is ``parse_<name>(entry, paths) -> Iterator[(X_chunk, y_chunk)]`` where `entry` is the
registry entry of the dataset and `paths` maps the logical file names of its sources to local
files. Small datasets come as one chunk; the text parser streams row chunks when the entry's
``parse.chunk_rows`` is set (HIGGS), so the processed writer never holds the whole file.

Compression is detected by magic bytes, not by file name: gzip (1f 8b), Unix compress ``.Z``
(1f 9d, decompressed with the system ``gzip -dc``), otherwise plain text. Line endings may be LF or
CRLF. Parsers check the structure they rely on (idx magic numbers and sizes, field counts) and raise
`DPClustError` naming the file.

Bump `PARSER_VERSION` whenever a parser's output for the same input changes (it is stored in every
processed file).
"""

from __future__ import annotations

import gzip
import io
import itertools
import subprocess
from pathlib import Path
from typing import Iterator, Mapping

import numpy as np

from ..api import DPClustError

PARSER_VERSION = 1

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
    return open(path, "rt", encoding="utf-8", newline=None)


def _file(paths: Mapping[str, Path], name: str, entry) -> Path:
    if name not in paths:
        raise DPClustError(f"dataset {entry['name']!r}: raw file {name!r} is missing from the fetched "
                           f"source(s) {entry.get('sources')} (have {sorted(paths)})")
    return Path(paths[name])


def _as_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if np.isfinite(y).all() and np.all(y == np.round(y)):
        return y.astype(np.int64)
    return y


def _usecols(spec, ncols: int | None = None):
    """`usecols` as a list: a list of ints, or a "start:stop" string."""
    if spec is None:
        return None
    if isinstance(spec, str):
        start, _, stop = spec.partition(":")
        return list(range(int(start or 0), int(stop) if stop else ncols))
    return [int(c) for c in spec]


def _delimiter(opt, first_line: str):
    if opt in (None, "whitespace"):
        return None
    if opt == "auto":
        return "," if "," in first_line else None
    return opt


def _first_data_line(path: Path, skip_rows: int) -> str:
    with open_text(path) as fh:
        for i, line in enumerate(fh):
            if i >= skip_rows and line.strip():
                return line
    return ""


def _loadtxt(source, path: Path, delimiter, cols, skip_rows=0, max_rows=None) -> np.ndarray:
    try:
        with np.errstate(all="ignore"):
            arr = np.loadtxt(source, delimiter=delimiter, usecols=cols, skiprows=skip_rows,
                             max_rows=max_rows, ndmin=2, dtype=np.float64, comments="#")
    except ValueError as exc:
        raise DPClustError(f"could not parse {path.name} as numeric text: {exc}") from None
    return arr


# ----------------------------------------------------------------------------------- parsers
def parse_idx(entry, paths) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """MNIST idx files (gzip or plain): images idx3 (n, rows, cols) uint8 -> (n, rows*cols)."""
    opts = entry.get("parse") or {}
    images = [_read_idx(_file(paths, f, entry), expect_ndim=3) for f in opts.get("images") or []]
    labels = [_read_idx(_file(paths, f, entry), expect_ndim=1) for f in opts.get("labels") or []]
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
        path = _file(paths, name, entry)
        first = _first_data_line(path, skip_rows)
        delim = _delimiter(opts.get("delimiter", "auto"), first)
        ncols = len(first.split(delim)) if first else 0
        cols = _usecols(opts.get("usecols"), ncols)
        if cols is None:
            cols = [c for c in range(ncols) if c != label_col]
        read_cols = cols + ([int(label_col)] if label_col is not None else [])
        if ncols and max(read_cols) >= ncols:
            raise DPClustError(f"{path.name}: needs column {max(read_cols)} but its first row has {ncols} fields")
        with open_text(path) as fh:
            if not chunk_rows:
                arr = _loadtxt(fh, path, delim, read_cols, skip_rows)
                yield _split(arr, len(cols), label_col is not None)
                continue
            for _ in range(skip_rows):
                next(fh, None)
            while True:
                lines = list(itertools.islice(fh, int(chunk_rows)))
                if not lines:
                    break
                yield _split(_loadtxt(lines, path, delim, read_cols), len(cols), label_col is not None)
    if opts.get("labels"):
        raise DPClustError(f"dataset {entry['name']!r}: use the sipu parser for a separate labels file")


def _split(arr: np.ndarray, nx: int, has_label: bool):
    X = np.ascontiguousarray(arr[:, :nx])
    y = _as_labels(arr[:, nx]) if has_label else None
    return X, y


def parse_sipu(entry, paths):
    """SIPU / Fränti benchmark sets: whitespace-separated coordinates; optional labels file
    (one integer per line, e.g. gagolews' labels0) used only if it was fetched."""
    opts = dict(entry.get("parse") or {})
    labels = opts.pop("labels", None)
    chunks = list(parse_text(dict(entry, parse=dict(opts, delimiter="whitespace")), paths))
    X = np.concatenate([c[0] for c in chunks])
    y = None
    if labels and labels in paths:
        y = _as_labels(_loadtxt(open_text(paths[labels]), Path(paths[labels]), None, None).ravel())
        if y.shape[0] != X.shape[0]:
            raise DPClustError(f"dataset {entry['name']!r}: {y.shape[0]} labels for {X.shape[0]} points")
    yield X, y


def parse_skin(entry, paths):
    """UCI Skin_NonSkin.txt: B G R class, tab-separated, CRLF."""
    opts = dict({"delimiter": "\t", "usecols": [0, 1, 2], "label_column": 3}, **(entry.get("parse") or {}))
    yield from parse_text(dict(entry, parse=opts), paths)


def parse_shuttle(entry, paths):
    """Statlog shuttle.trn / shuttle.tst: 9 integer attributes + class, space-separated."""
    opts = dict({"delimiter": "whitespace", "usecols": list(range(9)), "label_column": 9},
                **(entry.get("parse") or {}))
    chunks = list(parse_text(dict(entry, parse=opts), paths))
    yield np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])


def parse_sklearn_iris(entry, paths):
    """scikit-learn's iris.csv: header `150,4,setosa,versicolor,virginica`, then 4 features + class."""
    (name,) = (entry.get("parse") or {}).get("files") or ["sklearn_iris.csv"]
    path = _file(paths, name, entry)
    with open_text(path) as fh:
        header = fh.readline().strip().split(",")
        try:
            n_rows, n_features = int(header[0]), int(header[1])
        except (ValueError, IndexError):
            raise DPClustError(f"{path.name}: first line {','.join(header)!r} is not sklearn's "
                               "'n,d,class names' header") from None
        arr = _loadtxt(fh, path, ",", None)
    if arr.shape != (n_rows, n_features + 1):
        raise DPClustError(f"{path.name}: header says {n_rows} x {n_features} (+ label), file has {arr.shape}")
    yield _split(arr, n_features, True)


ADULT_FIELDS = 15


def parse_adult(entry, paths):
    """UCI adult.data / adult.test: ', '-separated, 15 fields. The first line of adult.test
    (``|1x3 Cross validator``) and blank lines are skipped; the test labels' trailing '.' is
    removed. Label: 0 = '<=50K', 1 = '>50K'."""
    opts = entry.get("parse") or {}
    usecols = _usecols(opts.get("usecols", [0, 2, 4, 10, 11, 12]))
    label_col = opts.get("label_column", 14)
    Xs, ys = [], []
    for name in opts.get("files") or []:
        path = _file(paths, name, entry)
        with open_text(path) as fh:
            lines = fh.read().split("\n")
        if lines and lines[0].startswith("|"):
            lines = lines[1:]
        rows = [ln.split(", ") for ln in lines if ln.strip()]
        bad = [i for i, r in enumerate(rows) if len(r) != ADULT_FIELDS]
        if bad:
            raise DPClustError(f"{path.name}: {len(bad)} row(s) do not have {ADULT_FIELDS} ', '-separated "
                               f"fields (first: data row {bad[0] + 1})")
        table = np.array(rows, dtype=object)
        try:
            Xs.append(table[:, usecols].astype(np.float64))
        except ValueError as exc:
            raise DPClustError(f"{path.name}: non-numeric value in a numeric column ({exc})") from None
        if label_col is not None:
            lab = np.char.rstrip(table[:, label_col].astype(str), ".")
            unknown = set(np.unique(lab)) - {"<=50K", ">50K"}
            if unknown:
                raise DPClustError(f"{path.name}: unknown income labels {sorted(unknown)}")
            ys.append((lab == ">50K").astype(np.int64))
    yield np.concatenate(Xs), (np.concatenate(ys) if ys else None)


def parse_gowalla(entry, paths):
    """SNAP loc-gowalla_totalCheckins: user, time, latitude, longitude, location id (tab-separated).
    Output: the unique (longitude, latitude) pairs, sorted."""
    opts = entry.get("parse") or {}
    out = []
    for name in opts.get("files") or []:
        path = _file(paths, name, entry)
        with open_text(path) as fh:
            latlon = _loadtxt(fh, path, "\t", [2, 3])
        out.append(latlon[:, ::-1])
    yield np.unique(np.concatenate(out), axis=0), None


PARSERS = {
    "idx": parse_idx,
    "text": parse_text,
    "adult": parse_adult,
    "sklearn_iris": parse_sklearn_iris,
    "skin": parse_skin,
    "shuttle": parse_shuttle,
    "sipu": parse_sipu,
    "gowalla": parse_gowalla,
}


def parse_dataset(entry, paths: Mapping[str, str | Path]):
    """Dispatch on entry["parser"]; returns an iterator of (X, y) row chunks."""
    name = entry.get("parser")
    if name not in PARSERS:
        raise DPClustError(f"unknown parser {name!r}; valid: {', '.join(sorted(PARSERS))}")
    return PARSERS[name](entry, {k: Path(v) for k, v in paths.items()})
