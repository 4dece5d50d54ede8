"""What a person running the workflow is told: unavailable data (once, at the start and in the
final summary), retries of sources that could now be had, and the claim totals at the end.

Used by the Snakefile (`onstart`/`onsuccess` and when planning); reads only files the workflow
itself wrote (raw manifests, processed records, the claim summary).
"""

from __future__ import annotations

import csv
import json
import socket
import threading
from pathlib import Path
from typing import Iterable, Mapping
from urllib.parse import urlsplit

DNS_TIMEOUT_S = 2.0


def _manifest(raw_dir: Path, source: str) -> dict | None:
    try:
        return json.loads((raw_dir / source / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _resolves(host: str, timeout: float = DNS_TIMEOUT_S) -> bool:
    """True if `host` resolves within `timeout` seconds (a hint that the network may be back)."""
    result: list[bool] = []

    def probe():
        try:
            socket.getaddrinfo(host, 443)
            result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(result and result[0])


def retry_reason(entry: Mapping, mirror: str | None) -> str:
    """Why a source recorded as unavailable could now be had ('' if nothing changed): the mirror
    holds every file it needs, or the network may be back (a URL's host resolves)."""
    needed = [f for f in entry.get("files", []) if not f.get("optional")]
    if mirror and needed and all(f.get("mirror_path") and (Path(mirror) / f["mirror_path"]).is_file()
                                 for f in needed):
        return "the data mirror now has it"
    hosts = {urlsplit(f["url"]).hostname for f in needed if f.get("url")}
    if hosts and all(f.get("url") for f in needed) and any(h and _resolves(h) for h in hosts):
        return "the network may be back"
    return ""


def stale_unavailable_sources(registry, sources: Iterable[str], raw_dir: str | Path,
                              mirror: str | None) -> dict[str, str]:
    """Sources whose manifest says 'unavailable' but which could now be had: {source: why}."""
    raw_dir = Path(raw_dir)
    out = {}
    for source in sorted(set(sources)):
        manifest = _manifest(raw_dir, source)
        if manifest is None or manifest.get("status") == "ok":
            continue
        why = retry_reason(registry.source(source), mirror)
        if why:
            out[source] = why
    return out


def unavailable_datasets(datasets: Iterable[str], data_dir: str | Path) -> dict[str, str]:
    """Datasets whose processed record says unavailable: {dataset: reason}."""
    out = {}
    for name in sorted(set(datasets)):
        try:
            rec = json.loads((Path(data_dir) / "processed" / f"{name}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not rec.get("available", True):
            out[name] = str(rec.get("reason", ""))
    return out


def unavailable_lines(unavailable: Mapping[str, str]) -> list[str]:
    from .itemkit import short_reason

    if not unavailable:
        return []
    by_reason: dict[str, list[str]] = {}
    for name, reason in unavailable.items():
        by_reason.setdefault(short_reason(reason), []).append(name)
    return [f"  {', '.join(names)}: {why}" for why, names in sorted(by_reason.items())]


def claim_totals(summary_csv: str | Path) -> str:
    try:
        with open(summary_csv, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError:
        return "no claim summary written"
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.get("result", "?")] = counts.get(row.get("result", "?"), 0) + 1
    return f"{len(rows)} claim checks: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))


def final_summary(datasets: Iterable[str], data_dir: str | Path, summary_csv: str | Path) -> str:
    lines = ["dpclust: done.", "  " + claim_totals(summary_csv)]
    missing = unavailable_datasets(datasets, data_dir)
    if missing:
        lines.append(f"  {len(missing)} dataset(s) unavailable (their panels say \"data unavailable\"):")
        lines += ["  " + line for line in unavailable_lines(missing)]
    return "\n".join(lines)
