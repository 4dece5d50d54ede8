"""The dataset registry: names, structure, checksums against the mirror, validation errors."""

from __future__ import annotations

import hashlib
import re

import pytest

from dpclust.api import DPClustError
from dpclust.data import load_registry
from dpclust.data.registry import Registry

REAL = ["mnist70k", "mnist60k", "cifar10_in3c", "s1", "birch2_12k", "image", "house", "iris", "adult_num",
        "lifesci", "gowalla", "tiger", "skin", "skin_d4", "shuttle", "covertype", "higgs"]
SYNTH = ["balcan_synth", "nguyen_synth", "synth3d", "higgs_like"] + \
    [f"balcan_synth{v}" for v in ("_g1", "_g2", "_n05", "_n2")] + \
    [f"synth3d{v}" for v in ("_g1", "_g2", "_s05", "_s2")] + [f"nguyen_synth{v}" for v in ("_g1", "_g2")] + \
    [f"su_synth_k{k}_d{d}{v}" for k in range(2, 11) for d in range(2, 11) for v in ("", "_g1", "_g2", "_s05", "_s2")]


@pytest.fixture(scope="module")
def reg():
    return load_registry()


def test_architecture_names_and_nothing_else(reg):
    assert sorted(reg.datasets) == sorted(REAL + SYNTH)
    for name in REAL:
        assert reg.dataset(name)["kind"] == "real" and reg.sources_for(name)
    for name in SYNTH:
        assert reg.sources_for(name) == []


@pytest.mark.parametrize("name, n, d", [("mnist70k", 70000, 784), ("mnist60k", 60000, 784), ("adult_num", 48842, 6),
                                        ("iris", 150, 4), ("s1", 5000, 2), ("birch2_12k", 12000, 2),
                                        ("skin", 245057, 3), ("shuttle", 58000, 9), ("image", 34112, 3),
                                        ("house", 1837, 3), ("gowalla", 107091, 2), ("lifesci", 26733, 10),
                                        ("tiger", 16281, 2), ("covertype", 581012, 54), ("higgs", 11000000, 28),
                                        ("cifar10_in3c", 100000, 160), ("balcan_synth", 100000, 100),
                                        ("nguyen_synth", 50000, 100), ("synth3d", 10000, 3)])
def test_expected_shapes(reg, name, n, d):
    e = reg.dataset(name)
    assert (e["n"], e["d"]) == (n, d)


def test_bounds_and_notes(reg):
    assert reg.dataset("mnist70k")["bounds"] == [0, 255]
    assert reg.dataset("nguyen_synth")["bounds"] == [0, 100]
    assert "48,841" in reg.dataset("adult_num")["note"]
    assert "MISSING" in reg.dataset("birch2_12k")["note"]
    assert reg.dataset("birch2_12k")["subsample"]["seed"] is not None
    cifar = reg.source("cifar10_in3c")
    assert all(f["url"] is None and "local_path" in f for f in cifar["files"]) and cifar["note"]
    assert "SOURCE UNKNOWN" in reg.source("lushen_house")["note"]
    # the mirror's House is a candidate of unproven origin; Lifesci's copy is verified
    assert reg.dataset("house")["origin"] == "unverified" and reg.dataset("house")["origin_note"]
    assert "D-Diaa/privateclustering" in reg.source("lushen_house")["note"]
    assert [n for n, e in reg.datasets.items() if "origin" in e or "origin_note" in e] == ["house"]
    assert "07bd1de974a5a897efcea0d25a270b762952e3edc01729b12d576303ac7f4eb2" in reg.source("lifesci")["note"]
    # `sha256` is checked against the downloaded bytes: Covertype's .gz has a published one, Lifesci's
    # canonical .gz none (only its decompressed content's is known, kept in the note)
    cov = reg.source("covertype")["files"][0]
    assert cov["sha256"] == "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771"
    assert reg.source("lifesci")["files"][0].get("sha256") is None



def test_mirror_checksums_match_the_mirror(reg, mirror):
    sums = dict(reversed(line.split()) for line in (mirror / "sipu" / "SHA256SUMS").read_text().splitlines())
    n = 0
    for src in reg.sources.values():
        for f in src["files"]:
            if f.get("mirror_path"):
                path = mirror / f["mirror_path"]
                assert path.is_file(), f"{path} listed in the registry but missing from the mirror"
                assert hashlib.sha256(path.read_bytes()).hexdigest() == f["mirror_sha256"], path
                if f["mirror_path"].startswith("sipu/"):
                    assert sums[path.name] == f["mirror_sha256"]
                n += 1
    assert n == 16  # mnist 4, adult 2, sipu_s1 2, sipu_birch2 2, iris 1, skin 1, shuttle 2, lifesci 1,
    #                lushen_house 1


def test_manifest_md_sha256s_agree(reg, mirror):
    text = (mirror / "MANIFEST.md").read_text()
    listed = set(re.findall(r"\b[0-9a-f]{64}\b", text))
    for src in reg.sources.values():
        for f in src["files"]:
            if f.get("mirror_sha256") and not f["mirror_path"].endswith("labels0.gz"):
                assert f["mirror_sha256"] in listed, f["name"]


def test_unknown_names_suggest_close_matches(reg):
    with pytest.raises(DPClustError, match=r"unknown dataset 'mnist'.*mnist70k.*mnist60k"):
        reg.dataset("mnist")
    with pytest.raises(DPClustError, match=r"unknown dataset source 'sipu_s2'.*sipu_s1"):
        reg.source("sipu_s2")
    with pytest.raises(DPClustError, match="unknown dataset 'adult'"):
        reg.sources_for("adult")


def test_lookups_return_copies(reg):
    reg.dataset("s1")["n"] = 1
    assert reg.dataset("s1")["n"] == 5000


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d["datasets"]["x"].update(sources=["nope"]), "unknown source 'nope'"),
    (lambda d: d["datasets"]["x"].update(parser="csvx"), "parser must be one of"),
    (lambda d: d["datasets"]["x"].update(n=0), "expected n"),
    (lambda d: d["datasets"]["x"].update(bounds=[1, 0]), "bounds"),
    (lambda d: d["sources"]["s"]["files"][0].update(sha256="XYZ"), "sha256 must be 64"),
    (lambda d: d["sources"]["s"]["files"][0].update(colour="red"), "unknown keys"),
    (lambda d: d["datasets"]["x"]["parse"].update(files=["other.txt"]), "not a file of its sources"),
    (lambda d: d["datasets"]["x"].update(origin="unknown"),
     r"dataset 'x': origin must be one of \('verified', 'unverified'\) \(or absent: verified\), got 'unknown'"),
    (lambda d: d["datasets"]["x"].update(origin="unverified"), "origin: unverified needs an origin_note"),
    (lambda d: d["datasets"]["x"].update(origin="unverified", origin_note=" "), "needs an origin_note"),
    (lambda d: d["datasets"]["x"].update(origin_note="why"), "origin_note is only for origin: unverified"),
])
def test_invalid_registries(mutate, match):
    data = {"sources": {"s": {"files": [{"name": "a.txt", "url": "http://example.invalid/a.txt"}]}},
            "datasets": {"x": {"kind": "real", "sources": ["s"], "parser": "text",
                               "parse": {"files": ["a.txt"]}, "n": 3, "d": 2}}}
    Registry(data)  # valid as given
    mutate(data)
    with pytest.raises(DPClustError, match=match):
        Registry(data)
