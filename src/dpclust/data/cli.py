"""`python -m dpclust.pipeline data fetch|prepare ...` (mounted by dpclust.pipeline.cli via `register`).

  python -m dpclust.pipeline data fetch SOURCE --raw-dir DIR [--mirror DIR] [--timeout S] [--retries N]
                               [--registry config/datasets.yaml]
  python -m dpclust.pipeline data prepare DATASET [--raw-dir DIR] --out FILE [--registry ...]

`--mirror ""` (or no --mirror) falls back to $DPCLUST_DATA_MIRROR, and --timeout / --retries to
$DPCLUST_DOWNLOAD_TIMEOUT / $DPCLUST_DOWNLOAD_RETRIES (the Snakefile sets all three from the
config, so that they are not rule params whose change would re-run every job). Exit status: 0 on success and
for an unavailable source/dataset (recorded in the manifest / marker file, one line logged);
non-zero (via DPClustError) for checksum mismatches, truncated downloads, parse errors and n/d
mismatches, which leave no output.
"""

from __future__ import annotations

import json
import os

from dpclust.api import DPClustError


def _entry(args):
    if not args.entry:
        return None
    try:
        entry = json.loads(args.entry)
    except ValueError as exc:
        raise DPClustError(f"--entry is not valid JSON: {exc}") from None
    if not isinstance(entry, dict):
        raise DPClustError("--entry must be a JSON object (a registry entry)")
    return entry


def cmd_fetch(args) -> int:
    from dpclust.data.download import fetch_source

    entry = _entry(args)
    registry = None
    if entry is None:
        from dpclust.data.registry import load_registry

        registry = load_registry(args.registry)
    mirror = args.mirror or os.environ.get("DPCLUST_DATA_MIRROR") or None
    fetch_source(args.source, raw_dir=args.raw_dir, mirror=mirror, registry=registry, entry=entry,
                 timeout=args.timeout, retries=args.retries, attempt=args.attempt)
    return 0


def cmd_prepare(args) -> int:
    from dpclust.data.processed import prepare_dataset

    entry = _entry(args)
    registry = None
    if entry is None:
        from dpclust.data.registry import load_registry

        registry = load_registry(args.registry)
    prepare_dataset(args.dataset, raw_dir=args.raw_dir, out_path=args.out, registry=registry, entry=entry)
    return 0


def register(subparsers) -> None:
    """Add `fetch` and `prepare` to an argparse subparsers object (sets `func`)."""
    fetch = subparsers.add_parser(
        "fetch", help="download a raw source (or copy it from a mirror) and write its manifest",
        description="Fetch every file of SOURCE into RAW_DIR/SOURCE/, verify checksums and write "
                    "RAW_DIR/SOURCE/manifest.json (status ok or unavailable).")
    fetch.add_argument("source", metavar="SOURCE", help="source name from config/datasets.yaml (e.g. mnist, sipu_s1)")
    fetch.add_argument("--raw-dir", required=True, help="raw data directory (e.g. data/raw)")
    fetch.add_argument("--mirror", default="",
                       help="local mirror root (layout of ../shared/datasets); empty: $DPCLUST_DATA_MIRROR, "
                            "else download from the canonical URLs")
    fetch.add_argument("--timeout", type=float, default=float(os.environ.get("DPCLUST_DOWNLOAD_TIMEOUT") or 60),
                       help="seconds per request (default $DPCLUST_DOWNLOAD_TIMEOUT, else 60)")
    fetch.add_argument("--retries", type=int, default=int(os.environ.get("DPCLUST_DOWNLOAD_RETRIES") or 2),
                       help="extra attempts after a failed request (default $DPCLUST_DOWNLOAD_RETRIES, else 2)")
    fetch.add_argument("--registry", default=None, help="dataset registry (default: config/datasets.yaml)")
    fetch.add_argument("--entry", default=None, help="the source's registry entry as JSON (the workflow's way: "
                                                     "no registry is read)")
    fetch.add_argument("--attempt", default="", help="how the fetch could succeed, stored in the manifest (the "
                                                     "workflow's retry bookkeeping; see dpclust.pipeline.status)")
    fetch.set_defaults(func=cmd_fetch)

    prep = subparsers.add_parser(
        "prepare", help="parse (or generate) a dataset into one processed HDF5 file",
        description="Build the processed HDF5 file of DATASET from its fetched sources (synthetic "
                    "datasets need none). An unavailable source gives an 'unavailable' marker file.")
    prep.add_argument("dataset", metavar="DATASET", help="dataset name from config/datasets.yaml")
    prep.add_argument("--raw-dir", default="data/raw", help="raw data directory (default data/raw)")
    prep.add_argument("--out", required=True, help="output file, e.g. data/processed/DATASET.h5")
    prep.add_argument("--registry", default=None, help="dataset registry (default: config/datasets.yaml)")
    prep.add_argument("--entry", default=None, help="the dataset's registry entry as JSON (the workflow's way: "
                                                    "no registry is read)")
    prep.set_defaults(func=cmd_prepare)
