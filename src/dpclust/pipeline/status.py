"""What a person running the workflow is told: unavailable data (once, at the start and in the
final summary), retries of sources that could now be had, and at the end the claim totals and what
the run cost (wall, CPU, largest process).

Used by the Snakefile (`onstart`/`onsuccess` and when planning); reads only files the workflow
itself wrote (raw manifests, processed records, the claim summary).
"""

from __future__ import annotations

import csv
import json
import resource
import socket
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

DNS_TIMEOUT_S = 2.0


def _manifest(raw_dir: Path, source: str) -> dict | None:
    try:
        return json.loads((raw_dir / source / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _resolving(hosts: Iterable[str], timeout: float = DNS_TIMEOUT_S) -> set[str]:
    """The hosts among `hosts` that resolve within `timeout` seconds, probed concurrently (a hint
    that the network may be back)."""
    found: set[str] = set()

    def probe(host):
        try:
            socket.getaddrinfo(host, 443)
            found.add(host)
        except OSError:
            pass

    threads = [threading.Thread(target=probe, args=(h,), daemon=True) for h in sorted(set(hosts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    return set(found)


def _needed(entry: Mapping) -> list:
    return [f for f in entry.get("files", []) if not f.get("optional")]


def _mirror_has(entry: Mapping, mirror: str | None) -> bool:
    needed = _needed(entry)
    return bool(mirror and needed and all(f.get("mirror_path") and (Path(mirror) / f["mirror_path"]).is_file()
                                          for f in needed))


def _hosts(entry: Mapping) -> set[str]:
    needed = _needed(entry)
    if not needed or not all(f.get("url") for f in needed):
        return set()
    return {h for h in (urlsplit(f["url"]).hostname for f in needed) if h}


ATTEMPT_WHY = {"mirror": "the data mirror now has it", "network": "the network may be back"}


def mirror_warning(mirror: str, pending: int) -> str:
    """The line a run prints when the data mirror it was given is not a directory (the fetch jobs ignore
    it and download): which setting, what follows, what to do."""
    return (f"dpclust: the data mirror {mirror!r} (DPCLUST_DATA_MIRROR or config data_mirror) is not a "
            f"directory; ignoring it: the {pending} dataset source(s) not yet fetched will be downloaded from "
            "their URLs. Fix the path (e.g. DPCLUST_DATA_MIRROR=../shared/datasets) or unset it")


def fetch_attempts(registry, sources: Iterable[str], raw_dir: str | Path, mirror: str | None) -> dict[str, str]:
    """How a fetch of each source could succeed now: "mirror" (the mirror holds every file it
    needs), "network" (a host of its URLs resolves) or "none"; for a source already fetched, the
    value its manifest recorded. The fetch job takes it as a param and stores it in the manifest,
    so an unavailable source is fetched again exactly when this changes (a mirror is set, the
    network is back), and nothing re-runs otherwise (not even when the mirror is unset later). A
    mirror that is not a directory, while some source still has to be fetched, is named on stderr
    (`mirror_warning`)."""
    raw_dir = Path(raw_dir)
    out, pending = {}, {}
    for source in sorted(set(sources)):
        manifest = _manifest(raw_dir, source)
        if manifest is not None and manifest.get("status") == "ok":
            out[source] = str(manifest.get("attempt", ""))
            continue
        entry = registry.source(source)
        if _mirror_has(entry, mirror):
            out[source] = "mirror"
        else:
            pending[source] = _hosts(entry)
    if pending and mirror and not Path(mirror).is_dir():
        print(mirror_warning(mirror, len(pending)), file=sys.stderr)
    resolving = _resolving({h for hosts in pending.values() for h in hosts}) if pending else set()
    for source, hosts in pending.items():
        out[source] = "network" if hosts & resolving else "none"
    return out


def retried_sources(attempts: Mapping[str, str], raw_dir: str | Path) -> dict[str, str]:
    """Sources recorded as unavailable that will be fetched again, with why: {source: why}."""
    out = {}
    for source, attempt in sorted(attempts.items()):
        manifest = _manifest(Path(raw_dir), source)
        if manifest is not None and manifest.get("status") != "ok" and manifest.get("attempt") != attempt \
                and attempt in ATTEMPT_WHY:
            out[source] = ATTEMPT_WHY[attempt]
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
    from dpclust.pipeline.itemkit import short_reason

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
    papers = [row for row in rows if (row.get("kind") or "paper") == "paper"]
    ours = len(rows) - len(papers)
    counts: dict[str, int] = {}
    for row in papers:
        counts[row.get("result", "?")] = counts.get(row.get("result", "?"), 0) + 1
    return ((f"the papers' claims: {len(papers)} checked: " + _counts_text(counts) if papers
             else "the papers' claims: none checked")
            + (f" (and {ours} checks of our own: bookkeeping, sanity, audit, leaderboard)" if ours else ""))


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes >= 60:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def invocation_cost() -> tuple[float, int]:
    """(CPU seconds, largest resident set in bytes) of this process and every child it waited for
    (`getrusage`: user + system; a child's figures include those of the children it waited for)."""
    own, jobs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + jobs.ru_utime + jobs.ru_stime
    return cpu, max(own.ru_maxrss, jobs.ru_maxrss) * (1 if sys.platform == "darwin" else 1024)


def cost_line(started: float, local: bool = True) -> str:
    """What this invocation cost: wall time since `started` (`time.time()` when the workflow was
    parsed), CPU = user + system of Snakemake and of every job process it ran and waited for, and
    the largest resident set of one process (`invocation_cost`). A run resumed after an
    interruption counts this invocation only. With a cluster executor the jobs' CPU is the
    cluster's (sacct)."""
    wall = _duration(max(0.0, time.time() - started))
    if not local:
        return f"this invocation: {wall} wall (the jobs ran on the cluster: their CPU and memory are in sacct)"
    cpu, peak = invocation_cost()
    cpu_text = (f"{cpu / 3600:.2f} CPU-hours" if cpu >= 3600 else f"{cpu / 60:.1f} CPU-minutes" if cpu >= 60
                else f"{cpu:.1f} CPU-seconds")
    return (f"this invocation: {wall} wall, {cpu_text} (user + system of Snakemake and its jobs), "
            f"largest process {peak / 1e9:.2f} GB")


def record_invocation(directory: str | Path, started: float, preset: str, commit: str,
                      summary_csv: str | Path | None = None, now: float | None = None) -> Path:
    """Write what this (local) invocation cost as `<directory>/<UTC time>.json`: the preset, the
    commit, wall seconds, CPU seconds and the largest process (`invocation_cost`), and the papers'
    claims per paper. The performance page (benchmarks/performance_page.py --add-run FILE) is made
    from such records; they are logs, outside the results the DAG tracks."""
    now = time.time() if now is None else now
    cpu, peak = invocation_cost()
    record = {"preset": preset, "commit": commit,
              "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
              "wall_s": round(max(0.0, now - started), 1), "cpu_s": round(cpu, 1), "peak_bytes": int(peak),
              "claims": claim_totals(summary_csv) if summary_csv else ""}
    out = Path(directory) / f"{record['finished_utc'].replace(':', '')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return out


def final_summary(datasets: Iterable[str], data_dir: str | Path, summary_csv: str | Path,
                  cost: str | None = None) -> str:
    lines = ["dpclust: done.", "  " + claim_totals(summary_csv)]
    if cost:
        lines.append("  " + cost)
    missing = unavailable_datasets(datasets, data_dir)
    if missing:
        lines.append(f"  {len(missing)} dataset(s) unavailable (their panels say \"data unavailable\"):")
        lines += ["  " + line for line in unavailable_lines(missing)]
    return "\n".join(lines)


def report_tallies(summary_csv: str | Path) -> str:
    """The papers' claims per paper, as reStructuredText bullets for the report's first page ("" when
    no summary has been written yet)."""
    try:
        with open(summary_csv, encoding="utf-8") as fh:
            rows = [row for row in csv.DictReader(fh) if (row.get("kind") or "paper") == "paper"]
    except OSError:
        return ""
    per: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = per.setdefault(row.get("paper", "?"), {})
        counts[row.get("result", "?")] = counts.get(row.get("result", "?"), 0) + 1
    lines = [f"* **{paper}**: {sum(c.values())} claims: " + _counts_text(c) for paper, c in sorted(per.items())]
    return "\n".join(lines)


#: the results in the order the rubric reads them (`aggregate.Check.result`); the sensitivity labels use it too
RESULT_ORDER = ("holds", "does not hold", "not decidable", "not evaluable")


def _counts_text(counts: dict[str, int]) -> str:
    """'holds 3, does not hold 2, ...': each result with its count, in the rubric's order."""
    results = sorted(counts, key=lambda r: (RESULT_ORDER.index(r) if r in RESULT_ORDER else len(RESULT_ORDER), r))
    return ", ".join(f"{r} {counts[r]}" for r in results)
