"""Atomic writes that respect the user's umask.

Every result and intermediate file is written to a temporary file in the target directory and
moved into place with `os.replace`, so a killed job never leaves a partial output. `mkstemp`
creates files with mode 0600; `atomic_path` gives the temporary file the mode a plain `open` would
(0666 minus the umask), so collaborators on a shared disk can read the results.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def file_mode() -> int:
    """0o666 minus the current umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_path(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it replaces `path`, on error it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        os.chmod(tmp, file_mode())
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(text: str, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(obj: Any, path: str | Path, compact: bool = True) -> None:
    """JSON with sorted keys (no timestamps), so the same object gives the same bytes."""
    if compact:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n"
    else:
        text = json.dumps(obj, sort_keys=True, indent=2, allow_nan=False) + "\n"
    write_text_atomic(text, path)


def write_csv_atomic(frame, path: str | Path) -> None:
    """A pandas DataFrame as CSV (10 significant digits, LF line ends), atomically."""
    with atomic_path(path, suffix=".csv") as tmp:
        frame.to_csv(tmp, index=False, float_format="%.10g", lineterminator="\n")
