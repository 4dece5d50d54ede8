"""Is a record whole? What the workflow checks before it trusts a run or audit record.

Records are written by `dpclust.fileio.write_json_atomic` as compact JSON: one object on one line
that ends in a newline, moved into place whole. A record can still be damaged afterwards (an
interrupted copy between machines, a full disk, an edit by hand). `rule all` asks `record_intact`
of every record and moves a damaged one aside, so that it is run again like a deleted one;
`load_records` names a record that does not parse and the fix. (Processed data files have their
own check, `dpclust.data.store.intact`.) Not imported by the runner: editing it re-runs no run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from .api import DPClustError
from .records import load_records as _load_records


def record_intact(path: str | Path) -> tuple[bool, str]:
    """(True, "") if `path` holds a whole record as the writers leave it; else (False, what is wrong).

    No strict prefix of a compact JSON line ends in its newline (a newline inside compact JSON is
    always escaped), so the first byte and the last two detect any truncation without reading the
    file; other damage is reported when the record is read (`load_records`)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(1)
            fh.seek(max(size - 2, 0))
            tail = fh.read(2)
    except FileNotFoundError:
        return False, "missing"
    except OSError as exc:
        return False, f"cannot be read ({exc.strerror})"
    if head != b"{" or tail != b"}\n":
        return False, f"is not a whole record (cut short or overwritten: {size} bytes)"
    return True, ""


def load_records(paths: Iterable[str | Path]) -> list[dict]:
    """`dpclust.records.load_records`, with a record that does not parse as one error naming it and
    the fix."""
    out = []
    for path in paths:
        try:
            out.extend(_load_records([path]))
        except ValueError as exc:
            raise DPClustError(f"record {path} is damaged ({exc}): delete it and run the same command "
                               "again, which runs it again (same seeds, same released outputs)") from None
    return out
