"""UCI Adult."""

from __future__ import annotations

import numpy as np

from dpclust.api import DPClustError
from dpclust.data.parsers.common import open_text, raw_file, usecols_list

ADULT_FIELDS = 15


def parse_adult(entry, paths):
    """UCI adult.data / adult.test: ', '-separated, 15 fields. The first line of adult.test
    (``|1x3 Cross validator``) and blank lines are skipped; the test labels' trailing '.' is
    removed. Label: 0 = '<=50K', 1 = '>50K'."""
    opts = entry.get("parse") or {}
    usecols = usecols_list(opts.get("usecols", [0, 2, 4, 10, 11, 12]))
    label_col = opts.get("label_column", 14)
    Xs, ys = [], []
    for name in opts.get("files") or []:
        path = raw_file(paths, name, entry)
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
