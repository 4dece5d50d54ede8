"""dpclust data layer: registry, download/mirror, parsers, processed HDF5 I/O, transforms, synthetic.

Public API (each name is imported from its module on first use, so that importing one part, e.g.
reading processed files on the run path, never imports the others)::

    load_registry(path=None) -> Registry          # .datasets, .sources, .dataset(name), .sources_for(name)
    fetch_source(source, raw_dir="data/raw", mirror=None, registry=None, timeout=60.0, retries=2,
                 backoff=0.5, log=None) -> dict   # the manifest
    prepare_dataset(name, raw_dir="data/raw", out_path=None, registry=None, log=None) -> Path
    load_processed(path) -> Dataset(X, y, attrs)  # raises DatasetUnavailable for markers
    processed_info(path) -> dict                  # attrs only
    write_processed(path, X, y=None, attrs=None) -> dict
    write_unavailable(path, name, reason) -> None
    apply_transform(name, X, entry) -> (X2, [lo, hi])
"""

import importlib

_HOMES = {
    "Dataset": "store", "DatasetUnavailable": "store", "ProcessedFileError": "store",
    "load_processed": "store", "processed_info": "store",
    "prepare_dataset": "processed", "write_processed": "processed", "write_unavailable": "processed",
    "Registry": "registry", "load_registry": "registry",
    "apply_transform": "transforms",
    "fetch_source": "download",
}

__all__ = sorted(_HOMES)


def __getattr__(name):
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
