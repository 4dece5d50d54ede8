"""The dataset registry (config/datasets.yaml): raw sources and processed datasets.

`load_registry(path=None)` reads, expands (``su_synth_k{K}_d{D}`` templates) and validates the YAML
and returns a `Registry`. Every lookup of an unknown name raises `DPClustError` naming close matches.
Cheap: the Snakefile and every run job load it.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpclust.api import DPClustError

DEFAULT_REGISTRY = Path(__file__).resolve().parents[3] / "config" / "datasets.yaml"

KINDS = ("real", "synthetic")
#: parser names known to dpclust.data.parsers (kept here so the registry can be validated without
#: importing the parsers)
PARSER_NAMES = ("idx", "text", "adult", "sklearn_iris", "skin", "shuttle", "sipu",
                "gowalla")  # = parsers.PARSER_MODULES
GENERATOR_NAMES = ("sphere_mixture", "nguyen_blocks", "separated_gaussians", "chunked_mixture")
_SOURCE_FILE_KEYS = {"name", "url", "sha256", "md5", "mirror_path", "mirror_sha256", "local_path",
                     "local_sha256", "optional", "note"}
_HEX = {"sha256": 64, "md5": 32, "mirror_sha256": 64, "local_sha256": 64}
#: values of a dataset's `origin` (absent = verified). "unverified": the file's shape matches the
#: paper's dataset but nothing links it to the authors' copy; every result on it must say so, so
#: the processed file, each run record and the display name carry it (`origin_unverified`).
ORIGINS = ("verified", "unverified")
UNVERIFIED_LABEL = "origin unverified"


def origin_unverified(entry: Mapping[str, Any]) -> str | None:
    """The reason (`origin_note`) when the dataset entry is marked `origin: unverified`, else None."""
    return str(entry["origin_note"]) if entry.get("origin") == "unverified" else None


def _close(name: str, known) -> str:
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    close += [k for k in known if name and (name in k or k in name) and k not in close]
    hint = f"; did you mean {', '.join(close[:5])}?" if close else ""
    return f"{hint} (known: {', '.join(known)})" if len(known) <= 40 else \
        f"{hint} ({len(known)} known; see config/datasets.yaml)"


def _subst(value: Any, env: Mapping[str, Any]) -> Any:
    """Replace "{VAR}" strings of a template entry: an exact "{K}" becomes the value itself (an int
    stays an int), and so does an exact "{V[key]}" of a variable whose values are mappings (a variant
    with several fields, e.g. {suffix: _s05, sigma: 0.5}); other strings are formatted."""
    if isinstance(value, str):
        m = re.fullmatch(r"\{(\w+)(?:\[(\w+)\])?\}", value)
        if m and m.group(1) in env:
            var = env[m.group(1)]
            return var[m.group(2)] if m.group(2) else var
        return value.format(**env) if "{" in value else value
    if isinstance(value, list):
        return [_subst(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _subst(v, env) for k, v in value.items()}
    return value


class Registry:
    """Validated registry. `datasets` and `sources` map names to plain dicts (with a "name" key)."""

    def __init__(self, data: Mapping[str, Any], path: str | Path | None = None):
        self.path = str(path) if path is not None else "<dict>"
        if not isinstance(data, Mapping) or "sources" not in data or "datasets" not in data:
            raise DPClustError(f"dataset registry {self.path} needs top-level 'sources:' and 'datasets:'")
        self.sources: dict[str, dict] = {}
        for name, src in (data.get("sources") or {}).items():
            self.sources[name] = self._check_source(name, src)
        self.datasets: dict[str, dict] = {}
        for name, entry in (data.get("datasets") or {}).items():
            if isinstance(entry, Mapping) and "template" in entry:
                for expanded_name, expanded in self._expand(name, entry):
                    self._add_dataset(expanded_name, expanded)
            else:
                self._add_dataset(name, entry)

    # -------------------------------------------------------------------------- construction
    def _err(self, msg: str) -> DPClustError:
        return DPClustError(f"dataset registry {self.path}: {msg}")

    def _check_source(self, name: str, src: Any) -> dict:
        if not isinstance(src, Mapping) or not isinstance(src.get("files"), list) or not src["files"]:
            raise self._err(f"source {name!r} needs a non-empty 'files:' list")
        out = dict(copy.deepcopy(src), name=name)
        seen = set()
        for f in out["files"]:
            if not isinstance(f, Mapping) or not f.get("name"):
                raise self._err(f"source {name!r}: every file needs a 'name'")
            unknown = set(f) - _SOURCE_FILE_KEYS
            if unknown:
                raise self._err(f"source {name!r} file {f['name']!r}: unknown keys {sorted(unknown)} "
                                f"(allowed: {sorted(_SOURCE_FILE_KEYS)})")
            if f["name"] in seen:
                raise self._err(f"source {name!r}: duplicate file name {f['name']!r}")
            seen.add(f["name"])
            for key, length in _HEX.items():
                v = f.get(key)
                if v is not None and not (isinstance(v, str) and re.fullmatch(f"[0-9a-f]{{{length}}}", v)):
                    raise self._err(f"source {name!r} file {f['name']!r}: {key} must be {length} lower-case "
                                    f"hex digits or null, got {v!r}")
            if f.get("url") is None and f.get("mirror_path") is None and "local_path" not in f:
                raise self._err(f"source {name!r} file {f['name']!r} has no url and no mirror_path; "
                                "add `local_path: null` so a user-supplied file can be configured")
        if any(f.get("url") is None and not f.get("optional") for f in out["files"]) and not src.get("note"):
            raise self._err(f"source {name!r} has a file without a url: add a 'note' explaining why")
        return out

    def _expand(self, family: str, spec: Mapping) -> list[tuple[str, dict]]:
        variables = spec.get("vars") or {}
        if not variables or not isinstance(spec.get("entry"), Mapping):
            raise self._err(f"template {family!r} needs 'vars:' and 'entry:'")
        keys = list(variables)
        out = []
        for values in itertools.product(*(variables[k] for k in keys)):
            env = dict(zip(keys, values))
            name = spec["template"].format(**env)
            entry = _subst(copy.deepcopy(dict(spec["entry"])), env)
            entry["family"] = family
            entry["template_vars"] = env
            out.append((name, entry))
        return out

    def _add_dataset(self, name: str, entry: Any) -> None:
        if not isinstance(entry, Mapping):
            raise self._err(f"dataset {name!r} must be a mapping")
        if name in self.datasets:
            raise self._err(f"duplicate dataset name {name!r}")
        e = dict(copy.deepcopy(entry), name=name)
        kind = e.get("kind")
        if kind not in KINDS:
            raise self._err(f"dataset {name!r}: kind must be one of {KINDS}, got {kind!r}")
        for key in ("n", "d"):
            if not isinstance(e.get(key), int) or e[key] < 1:
                raise self._err(f"dataset {name!r}: expected {key} must be a positive integer, got {e.get(key)!r}")
        origin = e.get("origin", "verified")
        if origin not in ORIGINS:
            raise self._err(f"dataset {name!r}: origin must be one of {ORIGINS} (or absent: verified), "
                            f"got {origin!r}")
        note = e.get("origin_note")
        if origin == "unverified" and not (isinstance(note, str) and note.strip()):
            raise self._err(f"dataset {name!r}: origin: unverified needs an origin_note saying why (it is "
                            "copied into the processed file and every run record)")
        if origin != "unverified" and note is not None:
            raise self._err(f"dataset {name!r}: origin_note is only for origin: unverified")
        b = e.get("bounds")
        if b is not None and not (isinstance(b, list) and len(b) == 2 and all(isinstance(v, (int, float)) for v in b)
                                  and b[0] < b[1]):
            raise self._err(f"dataset {name!r}: bounds must be null or [lo, hi] with lo < hi, got {b!r}")
        if kind == "real":
            srcs = e.get("sources")
            if not isinstance(srcs, list) or not srcs:
                raise self._err(f"dataset {name!r}: a real dataset needs 'sources: [...]'")
            for s in srcs:
                if s not in self.sources:
                    raise self._err(f"dataset {name!r}: unknown source {s!r}{_close(s, self.sources)}")
            if e.get("parser") not in PARSER_NAMES:
                raise self._err(f"dataset {name!r}: parser must be one of {PARSER_NAMES}, got {e.get('parser')!r}")
            files = {f["name"] for s in srcs for f in self.sources[s]["files"]}
            parse = e.get("parse") or {}
            refs = []
            for key in ("files", "images", "labels"):
                v = parse.get(key)
                refs += [v] if isinstance(v, str) else list(v or [])
            for ref in refs:
                if ref not in files:
                    raise self._err(f"dataset {name!r}: parse refers to file {ref!r}, not a file of its sources "
                                    f"({sorted(files)})")
            sub = e.get("subsample")
            if sub is not None and not (isinstance(sub, Mapping) and {"from_n", "n", "seed"} <= set(sub)
                                        and sub["n"] == e["n"] and sub["n"] <= sub["from_n"]):
                raise self._err(f"dataset {name!r}: subsample needs from_n, n (= the dataset's n) and seed")
        else:
            e.setdefault("sources", [])
            if e["sources"]:
                raise self._err(f"dataset {name!r}: a synthetic dataset has no sources")
            if e.get("generator") not in GENERATOR_NAMES:
                raise self._err(f"dataset {name!r}: generator must be one of {GENERATOR_NAMES}, "
                                f"got {e.get('generator')!r}")
            st = e.get("settings")
            if not isinstance(st, Mapping) or st.get("n") != e["n"] or st.get("d") != e["d"] or "seed" not in st:
                raise self._err(f"dataset {name!r}: settings need n and d equal to the dataset's, and a seed")
        self.datasets[name] = e

    # ------------------------------------------------------------------------------- lookups
    def dataset(self, name: str) -> dict:
        """The entry of dataset `name` (a copy); unknown → DPClustError listing close matches."""
        if name not in self.datasets:
            raise DPClustError(f"unknown dataset {name!r}{_close(name, self.datasets)}")
        return copy.deepcopy(self.datasets[name])

    def source(self, name: str) -> dict:
        if name not in self.sources:
            raise DPClustError(f"unknown dataset source {name!r}{_close(name, self.sources)}")
        return copy.deepcopy(self.sources[name])

    def sources_for(self, dataset: str) -> list[str]:
        """Raw sources a dataset is built from ([] for synthetic data): Snakemake inputs
        ``data/raw/<source>/manifest.json``."""
        return list(self.dataset(dataset)["sources"])

    def default_datasets(self) -> list[str]:
        """Every dataset except benchmark-only ones (higgs_like)."""
        return [n for n, e in self.datasets.items() if not e.get("benchmark_only")]

    def __contains__(self, name: str) -> bool:
        return name in self.datasets

    def __repr__(self) -> str:
        return f"Registry({self.path!r}, {len(self.sources)} sources, {len(self.datasets)} datasets)"


_CACHE: dict[tuple[str, int, int], Registry] = {}


def load_registry(path: str | Path | None = None) -> Registry:
    """Load and validate a registry YAML (default: the repository's config/datasets.yaml).

    Results are cached per (path, mtime, size); callers get the same validated object, whose lookups
    return copies.
    """
    import yaml

    p = Path(path) if path is not None else DEFAULT_REGISTRY
    if not p.exists():
        raise DPClustError(f"dataset registry {p} does not exist")
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    if key in _CACHE:
        return _CACHE[key]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(p, encoding="utf-8") as fh:
        try:
            data = yaml.load(fh, Loader=loader)
        except yaml.YAMLError as exc:
            raise DPClustError(f"dataset registry {p} is not valid YAML: {exc}") from None
    reg = Registry(data or {}, path=p)
    _CACHE[key] = reg
    return reg
