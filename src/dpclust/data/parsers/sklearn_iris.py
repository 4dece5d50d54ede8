"""scikit-learn's iris.csv."""

from __future__ import annotations

from dpclust.api import DPClustError
from dpclust.data.parsers.common import loadtxt, open_text, raw_file, split_label


def parse_sklearn_iris(entry, paths):
    """scikit-learn's iris.csv: header `150,4,setosa,versicolor,virginica`, then 4 features + class."""
    (name,) = (entry.get("parse") or {}).get("files") or ["sklearn_iris.csv"]
    path = raw_file(paths, name, entry)
    with open_text(path) as fh:
        header = fh.readline().strip().split(",")
        try:
            n_rows, n_features = int(header[0]), int(header[1])
        except (ValueError, IndexError):
            raise DPClustError(f"{path.name}: first line {','.join(header)!r} is not sklearn's "
                               "'n,d,class names' header") from None
        arr = loadtxt(fh, path, ",", None)
    if arr.shape != (n_rows, n_features + 1):
        raise DPClustError(f"{path.name}: header says {n_rows} x {n_features} (+ label), file has {arr.shape}")
    yield split_label(arr, n_features, True)
