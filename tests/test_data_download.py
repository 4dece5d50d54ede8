"""Downloads against a real HTTP server on 127.0.0.1 serving the dataset mirror (../shared/datasets).

Routes: ``/<path>`` serves the mirror file; ``/truncate/<path>`` announces the full Content-Length
but sends half the bytes and closes; ``/cutgz/<path>`` serves the first half of a gzip file with a
consistent Content-Length (a cut gzip).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import socket
import threading
from pathlib import Path

import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.data import fetch_source, load_registry
from dpclust.data.download import FetchError
from dpclust.data.registry import Registry
from dpclust.pipeline.cli import main as dpclust_main

pytestmark = pytest.mark.network

S1 = "sipu/s1.data.gz"
S1_SHA = "1c98ce81861d49302dab5f62f7f167a66707f868a6ba4d1ad45254b0df76ad15"
S1_LABELS = "sipu/s1.labels0.gz"
S1_LABELS_SHA = "b583261e516f8178987455be18a07891e7995f25e1cae138c0b8b2d0b66e43dd"


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass

    def do_GET(self):  # noqa: N802
        for prefix in ("/truncate/", "/cutgz/"):
            if self.path.startswith(prefix):
                data = (Path(self.directory) / self.path[len(prefix):]).read_bytes()
                cut = data[: len(data) // 2]
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data) if prefix == "/truncate/" else len(cut)))
                self.end_headers()
                self.wfile.write(cut)
                self.wfile.flush()
                self.close_connection = True
                return
        super().do_GET()


@pytest.fixture(scope="module")
def server(mirror):
    handler = functools.partial(_Handler, directory=str(mirror))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def _registry(files: list[dict], name: str = "src") -> Registry:
    return Registry({"sources": {name: {"files": files, "note": "test source"}},
                     "datasets": {}}, path="<test>")


def _s1_file(url, **kw):
    f = {"name": "s1.txt", "url": url, "mirror_path": S1, "mirror_sha256": S1_SHA}
    f.update(kw)
    return f


def _leftovers(raw: Path, source: str = "src") -> list[str]:
    d = raw / source
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


class Log(list):
    def __call__(self, line):
        self.append(line)


def test_download_ok_with_sha256(server, tmp_path, mirror):
    log = Log()
    reg = _registry([_s1_file(f"{server}/{S1}", sha256=S1_SHA)])
    man = fetch_source("src", raw_dir=tmp_path, registry=reg, timeout=5, retries=0, log=log)
    assert man["status"] == "ok"
    (f,) = man["files"]
    assert f["from"] == "url" and f["verified"] == "sha256" and f["sha256"] == S1_SHA
    assert (tmp_path / "src" / f["path"]).read_bytes() == (mirror / S1).read_bytes()
    on_disk = json.loads((tmp_path / "src" / "manifest.json").read_text())
    assert on_disk == man
    assert _leftovers(tmp_path) == ["manifest.json", "s1.data.gz"]
    assert log == []


def test_download_verifies_canonical_md5_of_real_registry(server, tmp_path):
    """MNIST t10k labels in the mirror are the byte-identical original: the registry's canonical md5 holds."""
    real = load_registry()
    src = real.source("mnist")
    f = next(f for f in src["files"] if f["name"] == "t10k-labels-idx1-ubyte.gz")
    f = dict(f, url=f"{server}/{f['mirror_path']}")
    man = fetch_source("src", raw_dir=tmp_path, registry=_registry([f]), timeout=5, retries=0, log=Log())
    assert man["files"][0]["verified"] == "md5"
    assert man["files"][0]["md5"] == "ec29112dd5afa0611ce80d1b7f02629c"


def test_download_without_checksum_logs_one_line(server, tmp_path):
    log = Log()
    man = fetch_source("src", raw_dir=tmp_path, registry=_registry([_s1_file(f"{server}/{S1}")]),
                       timeout=5, retries=0, log=log)
    assert man["status"] == "ok" and man["files"][0]["verified"] is None
    assert man["files"][0]["sha256"] == S1_SHA
    assert len(log) == 1 and "no published checksum" in log[0] and S1_SHA in log[0]


def test_checksum_mismatch_leaves_nothing(server, tmp_path):
    # a stale manifest from an earlier fetch must not survive a failed one
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "manifest.json").write_text("{}")
    reg = _registry([_s1_file(f"{server}/{S1}", sha256=S1_LABELS_SHA)])
    with pytest.raises(FetchError, match="checksum mismatch"):
        fetch_source("src", raw_dir=tmp_path, registry=reg, timeout=5, retries=0, log=Log())
    assert _leftovers(tmp_path) == []


def test_failure_on_second_file_removes_first(server, tmp_path):
    reg = _registry([
        {"name": "labels", "url": f"{server}/{S1_LABELS}", "sha256": S1_LABELS_SHA, "mirror_path": None},
        _s1_file(f"{server}/{S1}", sha256="0" * 64),
    ])
    with pytest.raises(FetchError):
        fetch_source("src", raw_dir=tmp_path, registry=reg, timeout=5, retries=0, log=Log())
    assert _leftovers(tmp_path) == []


def test_truncated_response_is_an_error(server, tmp_path):
    reg = _registry([_s1_file(f"{server}/truncate/{S1}")])
    with pytest.raises(FetchError, match="truncated"):
        fetch_source("src", raw_dir=tmp_path, registry=reg, timeout=5, retries=1, backoff=0.0, log=Log())
    assert _leftovers(tmp_path) == []


def test_cut_gzip_is_an_error_even_without_checksum(server, tmp_path):
    reg = _registry([_s1_file(f"{server}/cutgz/{S1}")])
    with pytest.raises(FetchError, match="truncated|corrupt"):
        fetch_source("src", raw_dir=tmp_path, registry=reg, timeout=5, retries=0, log=Log())
    assert _leftovers(tmp_path) == []


def test_unreachable_without_mirror_is_unavailable(closed_port, tmp_path):
    log = Log()
    url = f"{closed_port}/loc-gowalla_totalCheckins.txt.gz"
    reg = _registry([{"name": "g.txt.gz", "url": url, "mirror_path": None}], name="gowalla")
    man = fetch_source("gowalla", raw_dir=tmp_path, registry=reg, timeout=2, retries=1, backoff=0.0, log=log)
    assert man["status"] == "unavailable"
    assert len(log) == 1
    assert log[0].startswith(f"dataset source 'gowalla' unavailable: {url} unreachable (")
    assert log[0].endswith("and no data mirror is set (set DPCLUST_DATA_MIRROR or config data_mirror to a local copy)")
    assert "\n" not in man["reason"] and man["reason"] == log[0]
    assert json.loads((tmp_path / "gowalla" / "manifest.json").read_text())["status"] == "unavailable"
    assert _leftovers(tmp_path, "gowalla") == ["manifest.json"]


def test_unreachable_with_mirror_copies_from_mirror(closed_port, tmp_path, mirror, monkeypatch):
    reg = _registry([_s1_file(f"{closed_port}/s1.txt", sha256="f" * 64)])
    man = fetch_source("src", raw_dir=tmp_path, mirror=mirror, registry=reg, timeout=2, retries=0, log=Log())
    assert man["status"] == "ok"
    assert man["files"][0]["from"] == "mirror" and man["files"][0]["verified"] == "sha256"


def test_refetch_offline_keeps_verified_files(closed_port, tmp_path, mirror):
    """A fetch re-run without the mirror and without network keeps the verified raw file."""
    reg = _registry([_s1_file(f"{closed_port}/s1.data.gz", sha256="f" * 64)])
    fetch_source("src", raw_dir=tmp_path, mirror=mirror, registry=reg, timeout=2, retries=0, log=Log())
    log = Log()
    man = fetch_source("src", raw_dir=tmp_path, mirror=None, registry=reg, timeout=2, retries=0, log=log)
    assert man["status"] == "ok" and man["files"][0]["from"] == "existing"
    assert man["files"][0]["sha256"] == S1_SHA and len(log) == 1 and "kept" in log[0]


def test_refetch_replaces_a_file_that_does_not_verify(closed_port, tmp_path, mirror):
    reg = _registry([_s1_file(f"{closed_port}/s1.data.gz", sha256="f" * 64)])
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "s1.data.gz").write_bytes(b"not the data")
    man = fetch_source("src", raw_dir=tmp_path, mirror=mirror, registry=reg, timeout=2, retries=0, log=Log())
    assert man["files"][0]["from"] == "mirror"
    assert (tmp_path / "src" / "s1.data.gz").read_bytes() == (mirror / S1).read_bytes()
    (tmp_path / "src" / "s1.data.gz").write_bytes(b"not the data")
    man = fetch_source("src", raw_dir=tmp_path, mirror=None, registry=reg, timeout=2, retries=0, log=Log())
    assert man["status"] == "unavailable"  # an unverified leftover is never passed off as the data


def test_unavailable_second_file_keeps_earlier_verified_file(closed_port, tmp_path, mirror):
    reg = _registry([_s1_file(f"{closed_port}/s1.data.gz", sha256="f" * 64),
                     {"name": "more", "url": f"{closed_port}/more.gz", "mirror_path": None}])
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "s1.data.gz").write_bytes((mirror / S1).read_bytes())
    man = fetch_source("src", raw_dir=tmp_path, registry=reg, timeout=2, retries=0, log=Log())
    assert man["status"] == "unavailable"
    assert (tmp_path / "src" / "s1.data.gz").exists()  # not fetched by this call, so not removed


def test_unreachable_and_file_absent_from_mirror(closed_port, tmp_path, mirror):
    log = Log()
    reg = _registry([_s1_file(f"{closed_port}/s1.txt", mirror_path="sipu/not-there.gz")])
    man = fetch_source("src", raw_dir=tmp_path, mirror=mirror, registry=reg, timeout=2, retries=0, log=log)
    assert man["status"] == "unavailable" and len(log) == 1
    assert "sipu/not-there.gz is not in the data mirror" in man["reason"]
    assert str(mirror) not in man["reason"], "no local path in a reason (it reaches records and figures)"


def test_mirror_checksum_mismatch_is_an_error(tmp_path, mirror):
    reg = _registry([_s1_file(None, mirror_sha256="0" * 64)])
    with pytest.raises(FetchError, match="checksum mismatch"):
        fetch_source("src", raw_dir=tmp_path, mirror=mirror, registry=reg, log=Log())
    assert _leftovers(tmp_path) == []


def test_no_public_file_is_unavailable_and_local_path_supplies_it(tmp_path, mirror):
    files = [{"name": "features.txt", "url": None, "mirror_path": None, "local_path": None}]
    log = Log()
    man = fetch_source("src", raw_dir=tmp_path / "a", mirror=mirror, registry=_registry(files), log=log)
    assert man["status"] == "unavailable" and "no public download" in man["reason"] and len(log) == 1
    user_file = tmp_path / "mine.txt"
    user_file.write_text("1 2\n3 4\n")
    sha = hashlib.sha256(user_file.read_bytes()).hexdigest()
    files[0]["local_path"] = str(user_file)
    files[0]["local_sha256"] = sha
    man = fetch_source("src", raw_dir=tmp_path / "b", registry=_registry(files), log=Log())
    assert man["status"] == "ok" and man["files"][0]["from"] == "local" and man["files"][0]["sha256"] == sha


def test_optional_file_may_be_missing(closed_port, tmp_path, mirror):
    reg = _registry([_s1_file(None), {"name": "lab", "url": f"{closed_port}/x", "mirror_path": None,
                                      "optional": True}])
    man = fetch_source("src", raw_dir=tmp_path, mirror=mirror, registry=reg, timeout=2, retries=0, log=Log())
    assert man["status"] == "ok" and [f["name"] for f in man["files"]] == ["s1.txt"]


def test_cli_fetch_exit_codes_and_env_mirror(server, closed_port, tmp_path, mirror, monkeypatch, capsys):
    regfile = tmp_path / "datasets.yaml"

    def write(files):
        regfile.write_text(yaml.safe_dump({"sources": {"src": {"files": files, "note": "t"}}, "datasets": {}}))

    raw = tmp_path / "raw"
    write([_s1_file(f"{server}/{S1}", sha256="0" * 64, mirror_path=None)])
    rc = dpclust_main(["data", "fetch", "src", "--raw-dir", str(raw), "--registry", str(regfile),
                       "--retries", "0", "--timeout", "5"])
    assert rc != 0 and "checksum mismatch" in capsys.readouterr().err
    assert _leftovers(raw) == []
    write([_s1_file(f"{closed_port}/s1.txt")])
    regfile.touch()
    monkeypatch.setenv("DPCLUST_DATA_MIRROR", str(mirror))
    rc = dpclust_main(["data", "fetch", "src", "--raw-dir", str(raw), "--registry", str(regfile),
                       "--mirror", "", "--retries", "0", "--timeout", "2"])
    assert rc == 0
    assert json.loads((raw / "src" / "manifest.json").read_text())["files"][0]["from"] == "mirror"
    monkeypatch.delenv("DPCLUST_DATA_MIRROR")
    rc = dpclust_main(["data", "fetch", "src", "--raw-dir", str(raw / "x"), "--registry", str(regfile),
                       "--retries", "0", "--timeout", "2"])
    assert rc == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dataset source 'src' unavailable:")


def test_unknown_source_is_a_clear_error(tmp_path):
    with pytest.raises(DPClustError, match="unknown dataset source 'sipu_s2'.*sipu_s1"):
        fetch_source("sipu_s2", raw_dir=tmp_path, log=Log())


def test_a_long_download_reports_its_progress(capsys):
    from dpclust.data import download

    ticks = iter([0.0, 5.0, 11.0, 12.0, 25.0])
    progress = download._Progress("https://example.org/x.csv", 4_000_000, clock=lambda: next(ticks))
    for got in (1_000_000, 2_000_000, 3_000_000, 4_000_000):
        progress.update(got)
    progress.done(4_000_000)
    err = capsys.readouterr().err.splitlines()
    assert err == ["dpclust: downloading https://example.org/x.csv: 2.0 MB of 4.0 MB (50 %), 0.2 MB/s",
                   "dpclust: downloading https://example.org/x.csv: 4.0 MB of 4.0 MB (100 %), 0.2 MB/s",
                   "dpclust: downloaded https://example.org/x.csv: 4.0 MB"]
    quiet = download._Progress("u", None, clock=lambda: 0.0)
    quiet.update(10)
    quiet.done(10)
    assert capsys.readouterr().err == ""
