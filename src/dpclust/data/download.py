"""Fetch a raw source: download from the canonical URL, or copy from a local mirror.

``fetch_source(source, raw_dir, mirror=None, ...)`` gets every file of ``registry.sources[source]``
into ``raw_dir/<source>/`` and writes ``raw_dir/<source>/manifest.json``. Per file, in order:

1. ``local_path`` (a user-supplied file, set in the registry) — verified against ``local_sha256``
   if given;
2. the mirror, when one is configured and holds ``mirror_path`` — verified against
   ``mirror_sha256`` (never the canonical checksum: the container may differ);
3. the canonical ``url`` — verified against ``sha256`` or ``md5``, with ``timeout`` seconds per
   request and ``retries`` extra attempts for transient failures (connection errors, timeouts,
   HTTP 5xx, truncated bodies).

Without a published checksum the computed sha256 is recorded and one line says so.

Outcomes:

* success: manifest ``{"status": "ok", "files": [{name, path, sha256, size, from, location,
  verified}], ...}``;
* unavailable (host unreachable, HTTP error, no URL, not in the mirror): every file fetched in this
  call is removed, the manifest gets ``status: unavailable`` and a one-line ``reason``, and exactly
  one line ``dataset source 'X' unavailable: ...`` is logged. This is not an error: prepare turns
  it into an unavailable marker. An optional file (labels) that cannot be had is just skipped;
* checksum mismatch, truncated download, corrupt gzip: `FetchError` (a `DPClustError`; the CLI
  exits non-zero) and NO output: no manifest, no temporary files, no files of this call.

A file already in ``raw_dir/<source>/`` that matches the published checksum of one of its origins
is kept as it is (``"from": "existing"``): re-running a fetch offline never loses verified data.
Every file is written to a temporary name in the target directory and moved into place with
``os.replace``.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable
from pathlib import Path

from dpclust.api import DPClustError

USER_AGENT = "dpclust-data/1 (+https://github.com/; reproduction pipeline)"
BLOCK = 1 << 20


class FetchError(DPClustError):
    """Checksum mismatch, truncated or corrupt download: nothing was written."""


class _Unavailable(Exception):
    """Internal: the file cannot be had (network, HTTP error, no URL)."""


class _Truncated(Exception):
    pass


def _log_default(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def file_digests(path: str | Path) -> dict[str, str]:
    sha, md5 = hashlib.sha256(), hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(BLOCK), b""):
            sha.update(block)
            md5.update(block)
    return {"sha256": sha.hexdigest(), "md5": md5.hexdigest()}


def check_gzip_complete(path: str | Path) -> None:
    """Raise _Truncated if `path` is a gzip file whose stream is cut or corrupt (no-op otherwise)."""
    with open(path, "rb") as fh:
        if fh.read(2) != b"\x1f\x8b":
            return
        fh.seek(0)
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            for block in iter(lambda: fh.read(BLOCK), b""):
                d.decompress(block, 0)
                while d.eof and d.unused_data:  # concatenated gzip members
                    rest = d.unused_data
                    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    d.decompress(rest, 0)
        except zlib.error as exc:
            raise _Truncated(f"corrupt gzip data ({exc})") from None
        if not d.eof:
            raise _Truncated("gzip stream ends early (truncated file)")


def file_mode() -> int:
    """0o666 minus the umask (mkstemp creates 0600 files; final files get the usual mode)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _tmp_in(directory: Path, name: str) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
    os.close(fd)
    os.chmod(tmp, file_mode())
    return Path(tmp)


#: seconds between two progress lines of a long download
PROGRESS_SECONDS = 10.0


class _Progress:
    """A line on stderr every PROGRESS_SECONDS of a long download (the data jobs' logs): bytes so far,
    of how many, and the rate; nothing for a download that ends sooner."""

    def __init__(self, url: str, total: int | None, clock=time.monotonic):
        self.url, self.total, self.clock = url, total, clock
        self.start = self.last = clock()

    def update(self, got: int) -> None:
        now = self.clock()
        if now - self.last >= PROGRESS_SECONDS:
            self.last = now
            of = f" of {self.total / 1e6:.1f} MB ({100 * got / self.total:.0f} %)" if self.total else ""
            rate = got / 1e6 / max(now - self.start, 1e-9)
            print(f"dpclust: downloading {self.url}: {got / 1e6:.1f} MB{of}, {rate:.1f} MB/s", file=sys.stderr)

    def done(self, got: int) -> None:
        if self.last != self.start:  # only a download that printed progress says it finished
            print(f"dpclust: downloaded {self.url}: {got / 1e6:.1f} MB", file=sys.stderr)


def _download(url: str, dest: Path, timeout: float) -> None:
    """One attempt: stream `url` into `dest`. Raises _Unavailable / _Truncated / OSError."""
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp, open(dest, "wb") as out:
            expected = resp.headers.get("Content-Length")
            got = 0
            progress = _Progress(url, int(expected) if expected else None)
            while True:
                try:
                    block = resp.read(BLOCK)
                except http.client.IncompleteRead as exc:
                    raise _Truncated(f"connection closed after {got + len(exc.partial)} of {expected} bytes") from None
                if not block:
                    break
                out.write(block)
                got += len(block)
                progress.update(got)
            progress.done(got)
            if expected is not None and got != int(expected):
                raise _Truncated(f"received {got} of {expected} bytes (Content-Length)")
    except urllib.error.HTTPError as exc:
        transient = exc.code >= 500
        raise (OSError if transient else _Unavailable)(f"HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        raise (reason if isinstance(reason, OSError) else OSError(str(reason))) from None


def _download_with_retries(url, dest, timeout, retries, backoff) -> None:
    last = None
    for attempt in range(retries + 1):
        try:
            _download(url, dest, timeout)
            check_gzip_complete(dest)
            return
        except _Unavailable:
            raise
        except _Truncated as exc:
            last = exc
        except (OSError, ValueError) as exc:  # connection refused/reset, DNS, timeouts, bad URL
            last = exc
        if attempt < retries:
            time.sleep(backoff * (2 ** attempt))
    if isinstance(last, _Truncated):
        raise last
    raise _Unavailable(f"{type(last).__name__}: {last}")


def _verify(path: Path, expected: dict[str, str | None], what: str, source: str, name: str,
            log) -> tuple[str | None, dict[str, str]]:
    """Check the file against the given checksums; returns (which one was verified or None, digests)."""
    digests = file_digests(path)
    algo = _checksum_algo(expected)
    if algo is not None:
        if digests[algo] != expected[algo]:
            raise FetchError(f"checksum mismatch for {source}/{name} from {what}: expected {algo} "
                             f"{expected[algo]}, got {digests[algo]}; the file was discarded")
        return algo, digests
    log(f"dataset source {source!r}: no published checksum for {name} ({what}); recorded sha256 "
        f"{digests['sha256']}")
    return None, digests


def write_json_atomic(obj, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_in(path.parent, path.name)
    try:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def fetch_source(source: str, raw_dir: str | Path = "data/raw", mirror: str | Path | None = None,
                 registry=None, timeout: float = 60.0, retries: int = 2, backoff: float = 0.5,
                 log: Callable[[str], None] | None = None, entry: dict | None = None,
                 attempt: str = "") -> dict:
    """Fetch every file of `source` into raw_dir/<source>/ and write its manifest; returns the manifest.

    `mirror`: a local mirror root (layout of ../shared/datasets) or None/"" for none (the CLI falls
    back to $DPCLUST_DATA_MIRROR; this function does not read the environment). `entry`, when given,
    is the source's registry entry (the workflow passes it; then no registry is read). `attempt`
    (the workflow's `dpclust.pipeline.status.fetch_attempt`: how the fetch could succeed) is stored in the
    manifest, so that a later run retries an unavailable source exactly when that has changed.
    """
    log = log if log is not None else _log_default
    if entry is not None:
        src = entry
    else:
        from dpclust.data.registry import load_registry

        src = (registry if registry is not None else load_registry()).source(source)
    out_dir = Path(raw_dir) / source
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / "manifest.json"
    manifest_path.unlink(missing_ok=True)  # a failed fetch must not leave a stale manifest behind
    mirror_root = Path(mirror) if mirror else None
    if mirror_root is not None and not mirror_root.is_dir():
        log(f"dataset source {source!r}: mirror {mirror_root} is not a directory; ignoring it")
        mirror_root = None

    written: list[Path] = []
    records = []
    unavailable_reason = None
    try:
        for f in src["files"]:
            try:
                rec = _fetch_file(source, f, out_dir, mirror_root, timeout, retries, backoff, log)
            except _Unavailable as exc:
                if f.get("optional"):
                    log(f"dataset source {source!r}: optional file {f['name']} skipped: {exc}")
                    continue
                unavailable_reason = f"dataset source {source!r} unavailable: {exc}"
                break
            if rec["from"] != "existing":  # only files of this call are removed on failure
                written.append(out_dir / rec["path"])
            records.append(rec)
        if unavailable_reason is not None:
            for p in written:
                p.unlink(missing_ok=True)
            manifest = {"source": source, "status": "unavailable", "reason": unavailable_reason, "files": [],
                        "attempt": attempt}
            write_json_atomic(manifest, manifest_path)
            log(unavailable_reason)
            return manifest
        manifest = {"source": source, "status": "ok", "reason": "", "files": records, "attempt": attempt}
        write_json_atomic(manifest, manifest_path)
        return manifest
    except BaseException:
        for p in written:
            p.unlink(missing_ok=True)
        manifest_path.unlink(missing_ok=True)
        raise


def _checksum_algo(expected: dict[str, str | None]) -> str | None:
    """The checksum a file is verified against: sha256 when published, else md5, else None."""
    return next((a for a in ("sha256", "md5") if expected.get(a)), None)


def _expected_checksums(f, origin: str) -> dict[str, str | None]:
    """Published checksums of file entry `f` as obtained from `origin` (local, mirror or url):
    the mirror's and the user's copies have their own, since the container may differ."""
    if origin == "local":
        return {"sha256": f.get("local_sha256")}
    if origin == "mirror":
        return {"sha256": f.get("mirror_sha256")}
    return {"sha256": f.get("sha256"), "md5": f.get("md5")}


def _target_name(location) -> str:
    return Path(str(location).split("?")[0]).name


def _already_verified(f, out_dir: Path) -> dict | None:
    """The record of a file of this entry already in `out_dir` that matches the published checksum
    of one of its origins (local file, mirror copy, canonical URL), else None. Files without a known
    checksum are never reused."""
    for origin, key in (("local", "local_path"), ("mirror", "mirror_path"), ("url", "url")):
        if not f.get(key):
            continue
        target_name = _target_name(f[key])
        expected = _expected_checksums(f, origin)
        algo = _checksum_algo(expected)
        path = out_dir / target_name
        if not target_name or algo is None or not path.is_file():
            continue
        digests = file_digests(path)
        if digests[algo] == expected[algo]:
            return {"name": f["name"], "path": target_name, "sha256": digests["sha256"], "md5": digests["md5"],
                    "size": path.stat().st_size, "from": "existing", "location": f"{origin} copy {path}",
                    "verified": algo}
    return None


def _fetch_file(source, f, out_dir: Path, mirror_root, timeout, retries, backoff, log) -> dict:
    name = f["name"]
    kept = _already_verified(f, out_dir)
    if kept is not None:
        log(f"dataset source {source!r}: {kept['path']} already present and verified ({kept['verified']}); kept")
        return kept
    local = f.get("local_path")
    if local:
        origin, location = "local", Path(local).expanduser()
        if not location.is_file():
            raise FetchError(f"dataset source {source!r}: local_path {location} for {name} does not exist")
    else:
        mirror_file = mirror_root / f["mirror_path"] if mirror_root is not None and f.get("mirror_path") else None
        if mirror_file is not None and mirror_file.is_file():
            origin, location = "mirror", mirror_file
        elif f.get("url"):
            origin, location = "url", f["url"]
        else:
            why = "no public download" if not f.get("url") else ""
            raise _Unavailable(f"{name}: {why or 'not available'}; " + _mirror_phrase(mirror_root, f) +
                               " and no local_path set in config/datasets.yaml")
    expected = _expected_checksums(f, origin)
    target_name = _target_name(location) or name
    dest = out_dir / target_name
    tmp = _tmp_in(out_dir, target_name)
    try:
        if origin == "url":
            try:
                _download_with_retries(location, tmp, timeout, retries, backoff)
            except _Unavailable as exc:
                raise _Unavailable(f"{location} unreachable ({exc}) and {_mirror_phrase(mirror_root, f)}") from None
            except _Truncated as exc:
                raise FetchError(f"truncated download of {source}/{name} from {location}: {exc} "
                                 f"(after {retries + 1} attempt(s)); nothing was kept") from None
        else:
            shutil.copyfile(location, tmp)
            try:
                check_gzip_complete(tmp)
            except _Truncated as exc:
                raise FetchError(f"{origin} copy {location} of {source}/{name} is corrupt: {exc}") from None
        verified, digests = _verify(tmp, expected, f"{origin} {location}", source, name, log)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return {"name": name, "path": target_name, "sha256": digests["sha256"], "md5": digests["md5"],
            "size": dest.stat().st_size, "from": origin, "location": str(location),
            "verified": verified}


def _mirror_phrase(mirror_root, f) -> str:
    """Why the mirror could not help (no absolute path: the text reaches records and figures)."""
    if mirror_root is None:
        return "no data mirror is set (set DPCLUST_DATA_MIRROR or config data_mirror to a local copy)"
    if not f.get("mirror_path"):
        return "the data mirror has no copy of it"
    return f"{f['mirror_path']} is not in the data mirror"
