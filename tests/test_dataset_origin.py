"""A dataset of unproven origin (the registry's `origin: unverified`, today only the mirror's House
candidate) says so everywhere a result on it appears: in the processed file's attrs, in every run
record on it (and its publishable view), and in its display name, which every figure, table and
claim takes. Datasets without the mark keep exactly what they had."""
from __future__ import annotations

from pathlib import Path

import pytest

from dpclust.data import fetch_source, load_processed, load_registry, write_unavailable
from dpclust.data.registry import UNVERIFIED_LABEL, Registry, origin_unverified
from dpclust.pipeline.configuration import load_config, load_names, run_spec_for
from dpclust.pipeline.records import released_only
from dpclust.pipeline.run_job import run_spec

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def config():
    return load_config(REPO / "config")


def test_the_house_candidate_is_marked_in_the_processed_file(prepared_from_mirror):
    entry = load_registry().dataset("house")
    attrs = load_processed(prepared_from_mirror("house")).attrs
    assert attrs["origin"] == "unverified" and attrs["origin_note"] == entry["origin_note"]
    assert (attrs["n"], attrs["d"]) == (1837, 3)
    lifesci = load_processed(prepared_from_mirror("lifesci"))   # verified: no mark at all
    assert lifesci.X.shape == (26733, 10) and lifesci.y.shape == (26733,)
    assert "origin" not in lifesci.attrs and "origin_note" not in lifesci.attrs


def _spec(config, dataset):
    return run_spec_for(config, dataset, "baselines.lloyd", 3, None, seeds=(0, 2), transform="minmax_01")


def test_every_record_on_house_says_origin_unverified_and_no_other_record_changes(config, prepared_from_mirror):
    spec = _spec(config, "house")
    note = config["registry"].dataset("house")["origin_note"]
    rec = run_spec(spec, str(prepared_from_mirror("house")))
    assert rec["status"] == "ok" and len(rec["runs"]) == 2
    assert rec["dataset_origin"] == {"origin": "unverified", "note": note}
    assert released_only(rec)["dataset_origin"] == rec["dataset_origin"]   # public provenance
    # the field is the only difference the mark makes: the same runs with an unmarked entry
    plain = dict(spec, dataset_entry={k: v for k, v in spec["dataset_entry"].items()
                                      if k not in ("origin", "origin_note")})
    unmarked = run_spec(plain, str(prepared_from_mirror("house")))
    strip = [dict(r, wall_time_s=0) for r in rec["runs"]]
    assert {k: v for k, v in rec.items() if k not in ("dataset_origin", "runs")} == \
        {k: v for k, v in unmarked.items() if k != "runs"}
    assert strip == [dict(r, wall_time_s=0) for r in unmarked["runs"]]
    # a record without data says it too (its panels and the status lines name the dataset)
    marker = prepared_from_mirror("house").parent / "house_unavailable.h5"
    write_unavailable(marker, "house", "not in this test's mirror")
    missing = run_spec(spec, str(marker))
    assert missing["status"] == "data_unavailable" and missing["dataset_origin"]["origin"] == "unverified"


def test_records_of_other_datasets_have_no_origin_field(config, prepared_from_mirror):
    for dataset in ("lifesci", "iris"):
        rec = run_spec(_spec(config, dataset), str(prepared_from_mirror(dataset)))
        assert rec["status"] == "ok" and "dataset_origin" not in rec


def test_every_unverified_dataset_is_named_so(config):
    """The display name, derived from the registry (names.yaml keeps the plain name): what every figure,
    table and claim shows."""
    registry = config["registry"]
    unverified = [n for n, e in registry.datasets.items() if origin_unverified(e) is not None]
    assert unverified == ["house"]
    for name in unverified:
        assert UNVERIFIED_LABEL in config["names"]["datasets"][name]
    assert config["names"]["datasets"]["house"] == "House (origin unverified)"
    assert all(UNVERIFIED_LABEL not in label for d, label in config["names"]["datasets"].items()
               if d not in unverified)
    assert load_names(REPO / "config")["datasets"]["house"] == "House"   # the table itself is unmarked


def test_a_marked_dataset_without_a_names_entry_is_marked_too(tmp_path):
    data = {"sources": {"s": {"files": [{"name": "a.txt", "url": "http://example.invalid/a.txt"}]}},
            "datasets": {"x": {"kind": "real", "sources": ["s"], "parser": "text", "parse": {"files": ["a.txt"]},
                               "n": 3, "d": 2, "origin": "unverified", "origin_note": "a candidate"},
                         "y": {"kind": "real", "sources": ["s"], "parser": "text", "parse": {"files": ["a.txt"]},
                               "n": 3, "d": 2}}}
    (tmp_path / "names.yaml").write_text("datasets:\n  y: Why\n")
    names = load_names(tmp_path, Registry(data))["datasets"]
    assert names == {"x": "x (origin unverified)", "y": "Why"}


def test_a_local_file_still_takes_precedence_over_the_house_candidate(tmp_path, mirror):
    """local_path (a file of known origin, supplied by the user) wins over the mirror's candidate."""
    own = tmp_path / "my_house.txt"
    own.write_text("1 2 3\n4 5 6\n")
    data = {"sources": {"lushen_house": load_registry().source("lushen_house")}, "datasets": {}}
    data["sources"]["lushen_house"]["files"][0]["local_path"] = str(own)
    man = fetch_source("lushen_house", raw_dir=tmp_path / "raw", mirror=mirror, registry=Registry(data),
                       log=lambda line: None)
    assert man["status"] == "ok" and man["files"][0]["from"] == "local"
