"""Parsers on the real mirror files (../shared/datasets), prepare round trips and bad-input errors."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpclust.api import DPClustError
from dpclust.data import (
    DatasetUnavailable,
    fetch_source,
    load_processed,
    load_registry,
    prepare_dataset,
    processed_info,
    write_processed,
    write_unavailable,
)
from dpclust.data.parsers import parse_dataset
from dpclust.data.processed import FORMAT_VERSION
from dpclust.data.registry import Registry
from dpclust.pipeline.cli import main as dpclust_main

MIRROR_SOURCES = ["mnist", "adult", "sipu_s1", "sipu_birch2", "iris", "skin", "shuttle", "lifesci", "lushen_house"]


def quiet(_line):
    pass


@pytest.fixture(scope="module")
def raw(mirror, tmp_path_factory):
    """Every mirrored source fetched (copied and verified) once for this module."""
    raw_dir = tmp_path_factory.mktemp("raw")
    reg = load_registry()
    for source in MIRROR_SOURCES:
        man = fetch_source(source, raw_dir=raw_dir, mirror=mirror, registry=reg, log=quiet)
        assert man["status"] == "ok", man
        assert all(f["from"] == "mirror" and f["verified"] == "sha256" for f in man["files"])
    return raw_dir


def _paths(raw_dir: Path, entry) -> dict:
    out = {}
    for s in entry["sources"]:
        for f in json.loads((raw_dir / s / "manifest.json").read_text())["files"]:
            out[f["name"]] = raw_dir / s / f["path"]
    return out


def _parse(raw_dir, name):
    entry = load_registry().dataset(name)
    chunks = list(parse_dataset(entry, _paths(raw_dir, entry)))
    if len(chunks) == 1:
        return chunks[0]
    X = np.concatenate([c[0] for c in chunks])
    y = None if chunks[0][1] is None else np.concatenate([c[1] for c in chunks])
    return X, y


TRAIN_IMAGES_RAW_MD5 = "6bbc9ace898e44ae57da46a324031adb"  # the original's uncompressed md5 (MANIFEST)
TRAIN_HEADER = bytes.fromhex("00000803") + (60000).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2


def _train_md5(X) -> str:
    return hashlib.md5(TRAIN_HEADER + X[:60000].astype(np.uint8).tobytes()).hexdigest()


@pytest.fixture(scope="module")
def mnist70k(raw):
    """The one shared MNIST parse of this module."""
    return _parse(raw, "mnist70k")


def test_mnist_shapes(raw, mnist70k):
    X, y = mnist70k
    assert X.shape == (70000, 784) and X.dtype == np.float64
    assert X.min() == 0 and X.max() == 255
    assert y.shape == (70000,) and set(np.unique(y)) == set(range(10))
    # the rebuilt train images decompress to the original bytes, in the original order
    assert _train_md5(X) == TRAIN_IMAGES_RAW_MD5
    X60, y60 = _parse(raw, "mnist60k")
    assert X60.shape == (60000, 784) and X60.dtype == np.float64
    assert _train_md5(X60) == TRAIN_IMAGES_RAW_MD5
    np.testing.assert_array_equal(y60, y[:60000])


@pytest.mark.parametrize("name, shape, labels", [
    ("adult_num", (48842, 6), {0, 1}),
    ("iris", (150, 4), {0, 1, 2}),
    ("s1", (5000, 2), set(range(1, 16))),
    ("skin", (245057, 3), {1, 2}),
    ("shuttle", (58000, 9), set(range(1, 8))),
    ("lifesci", (26733, 10), {0, 1}),
])
def test_real_shapes(raw, name, shape, labels):
    X, y = _parse(raw, name)
    assert X.shape == shape and X.dtype == np.float64 and np.isfinite(X).all()
    assert set(np.unique(y)) == labels
    if name == "adult_num":  # first rows of adult.data and adult.test (UCI)
        np.testing.assert_array_equal(X[0], [39, 77516, 13, 2174, 0, 40])
        np.testing.assert_array_equal(X[32561], [25, 226802, 7, 0, 0, 40])
        assert y[32561] == 0
    if name == "lifesci":  # MANIFEST.md: 25,929 zeros and 804 ones; the first row of ds1.10.csv
        assert (np.bincount(y) == [25929, 804]).all()
        np.testing.assert_array_equal(X[0, :3], [-4.1929, 2.5171, 0.47378])


def test_house_candidate_parses_to_lu_shens_shape(raw):
    """The mirror's House candidate (space separated, leading blanks, no trailing newline): 1,837 x 3
    integers (RGB multiples of 8), all rows distinct, no labels."""
    X, y = _parse(raw, "house")
    assert X.shape == (1837, 3) and y is None and np.isfinite(X).all()
    assert (X % 8 == 0).all() and X.min() >= 0 and X.max() <= 255
    assert len({tuple(r) for r in X}) == 1837
    np.testing.assert_array_equal(X[0], [24, 0, 40])


def test_prepare_round_trip_and_birch2_subsample(raw, tmp_path):
    reg = load_registry()
    out = prepare_dataset("s1", raw_dir=raw, out_path=tmp_path / "s1.h5", registry=reg, log=quiet)
    d = load_processed(out)
    X, y = _parse(raw, "s1")
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, y)
    a = d.attrs
    assert a["name"] == "s1" and a["source"] == "sipu_s1" and a["available"] is True
    assert (a["n"], a["d"], a["format_version"]) == (5000, 2, FORMAT_VERSION)
    assert a["sha256"] == hashlib.sha256(X.astype("<f8").tobytes()).hexdigest()
    assert processed_info(out)["sha256"] == a["sha256"]
    # birch2_12k: seeded 12,000-point subsample, recorded, reproducible
    b1 = prepare_dataset("birch2_12k", raw_dir=raw, out_path=tmp_path / "b1.h5", registry=reg, log=quiet)
    b2 = prepare_dataset("birch2_12k", raw_dir=raw, out_path=tmp_path / "b2.h5", registry=reg, log=quiet)
    d1, d2 = load_processed(b1), load_processed(b2)
    assert d1.X.shape == (12000, 2) and d1.y.shape == (12000,)
    np.testing.assert_array_equal(d1.X, d2.X)
    assert json.loads(d1.attrs["subsample"])["seed"] == reg.dataset("birch2_12k")["subsample"]["seed"]
    full, _ = _parse(raw, "birch2_12k")
    assert full.shape == (100000, 2)
    assert len({tuple(r) for r in full} & {tuple(r) for r in d1.X}) > 11000


def test_prepare_without_fetch_and_changed_raw_file(raw, tmp_path):
    reg = load_registry()
    with pytest.raises(DPClustError, match="has not been fetched"):
        prepare_dataset("iris", raw_dir=tmp_path / "empty", out_path=tmp_path / "i.h5", registry=reg, log=quiet)
    # copy the iris source and alter the raw file after the fetch
    src = tmp_path / "raw" / "iris"
    src.mkdir(parents=True)
    for p in (raw / "iris").iterdir():
        (src / p.name).write_bytes(p.read_bytes())
    with open(src / "sklearn_iris.csv", "a") as fh:
        fh.write("1,2,3,4,0\n")
    with pytest.raises(DPClustError, match="changed since it was fetched"):
        prepare_dataset("iris", raw_dir=tmp_path / "raw", out_path=tmp_path / "i.h5", registry=reg, log=quiet)
    assert not (tmp_path / "i.h5").exists()


def test_unavailable_source_gives_marker(tmp_path):
    reg = load_registry()
    raw = tmp_path / "raw"
    (raw / "gowalla").mkdir(parents=True)
    (raw / "gowalla" / "manifest.json").write_text(json.dumps(
        {"source": "gowalla", "status": "unavailable", "reason": "dataset source 'gowalla' unavailable: test",
         "files": []}))
    out = prepare_dataset("gowalla", raw_dir=raw, out_path=tmp_path / "g.h5", registry=reg, log=quiet)
    info = processed_info(out)
    assert info["available"] is False and "unavailable: test" in info["reason"]
    with pytest.raises(DatasetUnavailable, match="unavailable: test"):
        load_processed(out)
    write_unavailable(tmp_path / "m.h5", "x", "why not")
    with pytest.raises(DatasetUnavailable, match="why not"):
        load_processed(tmp_path / "m.h5")


# ------------------------------------------------------------------------- small crafted inputs
def _text_registry(tmp_path, n, d, parse, files, parser="text", extra=None):
    entry = {"kind": "real", "sources": ["t"], "parser": parser, "parse": parse, "n": n, "d": d}
    entry.update(extra or {})
    return Registry({"sources": {"t": {"files": [{"name": f, "url": None, "mirror_path": None,
                                                  "local_path": str(tmp_path / f)} for f in files],
                                       "note": "test"}},
                     "datasets": {"tiny": entry}}, path="<test>")


def _fetch_prepare(tmp_path, reg, out="tiny.h5"):
    fetch_source("t", raw_dir=tmp_path / "raw", registry=reg, log=quiet)
    return prepare_dataset("tiny", raw_dir=tmp_path / "raw", out_path=tmp_path / out, registry=reg, log=quiet)


def test_gzip_and_plain_text_parse_alike(tmp_path):
    content = "1 2 0\r\n3  4 1\r\n\r\n5\t6 0\r\n"
    (tmp_path / "a.txt").write_text(content, newline="")
    with gzip.open(tmp_path / "b.txt", "wt", newline="") as fh:  # gzip content without a .gz name
        fh.write(content)
    for f in ("a.txt", "b.txt"):
        reg = _text_registry(tmp_path, 3, 2, {"files": [f], "label_column": 2}, [f])
        d = load_processed(_fetch_prepare(tmp_path, reg, out=f"{f}.h5"))
        np.testing.assert_array_equal(d.X, [[1, 2], [3, 4], [5, 6]])
        np.testing.assert_array_equal(d.y, [0, 1, 0])


def test_adult_parser_skips_header_and_blank_lines(tmp_path):
    row = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, " \
          "2174, 0, 40, United-States, {}"
    (tmp_path / "adult.data").write_text(row.format("<=50K") + "\n\n")
    (tmp_path / "adult.test").write_text("|1x3 Cross validator\n" + row.format(">50K.") + "\n" +
                                         row.format("<=50K.") + "\n\n")
    reg = _text_registry(tmp_path, 3, 6, {"files": ["adult.data", "adult.test"], "usecols": [0, 2, 4, 10, 11, 12],
                                          "label_column": 14}, ["adult.data", "adult.test"], parser="adult")
    d = load_processed(_fetch_prepare(tmp_path, reg))
    np.testing.assert_array_equal(d.X[0], [39, 77516, 13, 2174, 0, 40])
    np.testing.assert_array_equal(d.y, [0, 1, 0])


def test_nan_in_data_is_rejected_naming_the_dataset(tmp_path):
    (tmp_path / "a.txt").write_text("1 2\n3 nan\n5 6\n")
    reg = _text_registry(tmp_path, 3, 2, {"files": ["a.txt"]}, ["a.txt"])
    with pytest.raises(DPClustError, match="dataset 'tiny'.*NaN"):
        _fetch_prepare(tmp_path, reg)
    assert not (tmp_path / "tiny.h5").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tiny")]
    with pytest.raises(DPClustError, match="NaN"):
        write_processed(tmp_path / "w.h5", np.array([[1.0, np.inf]]), attrs={"name": "w"})
    assert not (tmp_path / "w.h5").exists()


@pytest.mark.parametrize("n, d, match", [(4, 2, "parsed n = 3, registry expects n = 4"),
                                         (3, 5, "parsed d = 2, registry expects d = 5")])
def test_n_d_mismatch_is_an_error(tmp_path, n, d, match):
    (tmp_path / "a.txt").write_text("1 2\n3 4\n5 6\n")
    reg = _text_registry(tmp_path, n, d, {"files": ["a.txt"]}, ["a.txt"])
    with pytest.raises(DPClustError, match=match):
        _fetch_prepare(tmp_path, reg)
    assert not (tmp_path / "tiny.h5").exists()


def test_truncated_idx_is_an_error(tmp_path):
    header = bytes.fromhex("00000803") + (2).to_bytes(4, "big") + (2).to_bytes(4, "big") * 2
    with gzip.open(tmp_path / "img.gz", "wb") as fh:
        fh.write(header + bytes(7))  # 8 bytes announced
    reg = _text_registry(tmp_path, 2, 4, {"images": ["img.gz"]}, ["img.gz"], parser="idx")
    with pytest.raises(DPClustError, match="truncated or corrupt"):
        _fetch_prepare(tmp_path, reg)


def test_cli_prepare_and_errors(tmp_path, capsys):
    regfile = tmp_path / "datasets.yaml"
    (tmp_path / "a.txt").write_text("1 2\n3 4\n")
    data = {"sources": {"t": {"files": [{"name": "a.txt", "url": None, "mirror_path": None,
                                         "local_path": str(tmp_path / "a.txt")}], "note": "test"}},
            "datasets": {"tiny": {"kind": "real", "sources": ["t"], "parser": "text",
                                  "parse": {"files": ["a.txt"]}, "n": 3, "d": 2}}}
    regfile.write_text(yaml.safe_dump(data))
    raw = tmp_path / "raw"
    assert dpclust_main(["data", "fetch", "t", "--raw-dir", str(raw), "--registry", str(regfile)]) == 0
    rc = dpclust_main(["data", "prepare", "tiny", "--raw-dir", str(raw), "--out", str(tmp_path / "o.h5"),
                       "--registry", str(regfile)])
    assert rc != 0 and "registry expects n = 3" in capsys.readouterr().err
    rc = dpclust_main(["data", "prepare", "tinyy", "--raw-dir", str(raw), "--out", str(tmp_path / "o.h5"),
                       "--registry", str(regfile)])
    assert rc != 0 and "did you mean tiny" in capsys.readouterr().err
    assert not (tmp_path / "o.h5").exists()
