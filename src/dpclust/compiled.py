"""Numba kernels, compiled on first use.

A kernel is a plain Python function of arrays and scalars; `kernel(fn)` returns a getter that
compiles it with numba the first time it is called (no parallel, no fastmath: the same operations in
the same order as written, so the same bytes for the same inputs). Importing a module that declares
kernels, or `dpclust`, neither imports numba nor compiles anything (tests/su2016/test_eugkm_exact.py).
The machine code is cached beside the defining file, else in numba's user cache directory; with
neither writable it is compiled per process.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def kernel(fn: Callable[..., Any]) -> Callable[[], Callable[..., Any]]:
    """A getter of `fn` compiled by numba (cached per process; `getter.__wrapped__()` compiles anew)."""

    @functools.lru_cache(maxsize=1)
    def compiled():
        import numba

        try:
            return numba.njit(cache=True, nogil=True)(fn)
        except RuntimeError:    # numba: "cannot cache function ...: no locator available"
            return numba.njit(nogil=True)(fn)

    return compiled
