"""Is an intermediate whole? What the workflow checks before it trusts a record or a table.

Run and audit records are written by `dpclust.fileio.write_json_atomic` as compact JSON: one object
on one line that ends in a newline; tables (`results/tables`, `results/checks`) by
`write_csv_atomic`, every row ending in a newline. Both are moved into place whole, but can be
damaged afterwards (an interrupted copy between machines, a full disk, an edit by hand). `rule all`
asks `intact` of every record and every planned output (tables, figures, report pages) and moves a
damaged one aside, so that it is made again like a deleted one, with what reads it; `load_records`
names a record that does not parse and the fix. (Processed data files have their own check,
`dpclust.data.store.intact`.) Not imported by the runner: editing it re-runs no run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dpclust.api import DPClustError
from dpclust.pipeline.records import load_records as _load_records


def _ends(path: Path, tail: int, head: int = 1) -> tuple[int, bytes, bytes] | str:
    """(size, first `head` bytes, last `tail` bytes) of the file, or why they cannot be read ("missing")."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            first = fh.read(head)
            fh.seek(max(size - tail, 0))
            return size, first, fh.read(tail)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"


def record_intact(path: str | Path) -> tuple[bool, str]:
    """(True, "") if `path` holds a whole record as the writers leave it; else (False, what is wrong).

    No strict prefix of a compact JSON line ends in its newline (a newline inside compact JSON is
    always escaped), so the first byte and the last two detect any truncation without reading the
    file; other damage is reported when the record is read (`load_records`)."""
    ends = _ends(Path(path), 2)
    if isinstance(ends, str):
        return False, ends
    size, first, last = ends
    if first != b"{" or last != b"}\n":
        return False, f"is not a whole record (cut short or overwritten: {size} bytes)"
    return True, ""


def table_intact(path: str | Path) -> tuple[bool, str]:
    """(True, "") if the CSV table at `path` ends where a row ends; else (False, what is wrong). A
    cut inside a row (the partial row would be read with empty fields) is always caught; a cut
    exactly between two rows leaves a shorter, well-formed table that this cannot tell apart."""
    ends = _ends(Path(path), 1)
    if isinstance(ends, str):
        return False, ends
    size, _, last = ends
    if last != b"\n":
        return False, f"is not a whole table (cut short inside a row: {size} bytes)"
    return True, ""


#: How each kind of rendered file begins and ends as matplotlib and `dpclust.pipeline.plotting` write it: a
#: PNG's signature and its IEND chunk (CRC included), a PDF's header and `%%EOF`, a report page's
#: closing tag, a Markdown caption's final newline. A file cut short loses its end marker.
RENDERED_ENDS = {".png": (b"\x89PNG\r\n\x1a\n", b"\x00\x00\x00\x00IEND\xaeB`\x82"),
                 ".pdf": (b"%PDF-", b"%%EOF\n"),
                 ".html": (b"<", b"</html>\n"),
                 ".md": (b"", b"\n")}


def rendered_intact(path: str | Path) -> tuple[bool, str]:
    """(True, "") if a figure (.png, .pdf) or a page of the report (.html, .md) begins and ends as its
    writer leaves it; else (False, what is wrong). A Markdown file cut exactly between two lines is
    not detectable this way (as for a table)."""
    path = Path(path)
    head, tail = RENDERED_ENDS[path.suffix]
    ends = _ends(path, len(tail), len(head))
    if isinstance(ends, str):
        return False, ends
    size, first, last = ends
    if first != head or last != tail or size < len(head) + len(tail):
        return False, f"is not a whole {path.suffix[1:].upper()} file (cut short or overwritten: {size} bytes)"
    return True, ""


def intact(path: str | Path) -> tuple[bool, str]:
    """`record_intact` for a .json record, `table_intact` for a .csv table, `rendered_intact` for a
    figure (.png, .pdf) or a page of the report (.html, .md); (True, "") for any other file."""
    suffix = Path(path).suffix
    if suffix == ".json":
        return record_intact(path)
    if suffix == ".csv":
        return table_intact(path)
    if suffix in RENDERED_ENDS:
        return rendered_intact(path)
    return True, ""


def load_records(paths: Iterable[str | Path]) -> list[dict]:
    """`dpclust.pipeline.records.load_records`, with a record that does not parse as one error naming it and
    the fix."""
    out = []
    for path in paths:
        try:
            out.extend(_load_records([path]))
        except ValueError as exc:
            raise DPClustError(f"record {path} is damaged ({exc}): delete it and run the same command "
                               "again, which runs it again (same seeds, same released outputs)") from None
    return out
