"""dpclust data layer: registry, download/mirror, parsers, processed HDF5 I/O, transforms, synthetic.

Public API::

    load_registry(path=None) -> Registry          # .datasets, .sources, .dataset(name), .sources_for(name)
    fetch_source(source, raw_dir="data/raw", mirror=None, registry=None, timeout=60.0, retries=2,
                 backoff=0.5, log=None) -> dict   # the manifest
    prepare_dataset(name, raw_dir="data/raw", out_path=None, registry=None, log=None) -> Path
    load_processed(path) -> Dataset(X, y, attrs)  # raises DatasetUnavailable for markers
    processed_info(path) -> dict                  # attrs only
    write_processed(path, X, y=None, attrs=None) -> dict
    write_unavailable(path, name, reason) -> None
    apply_transform(name, X, entry) -> (X2, [lo, hi])

Imports stay lean: h5py, urllib and the parsers load only when used.
"""

from .processed import (Dataset, DatasetUnavailable, load_processed, prepare_dataset, processed_info,
                        write_processed, write_unavailable)
from .registry import Registry, load_registry
from .transforms import apply_transform


def fetch_source(*args, **kwargs):
    """See `dpclust.data.download.fetch_source`."""
    from .download import fetch_source as _fetch

    return _fetch(*args, **kwargs)


__all__ = ["Dataset", "DatasetUnavailable", "Registry", "apply_transform", "fetch_source", "load_processed",
           "load_registry", "prepare_dataset", "processed_info", "write_processed", "write_unavailable"]
