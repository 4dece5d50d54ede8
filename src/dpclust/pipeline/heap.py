"""Keep freed memory in the process for reuse: the heap setting of the workflow's compute processes.

A run job repeats the same steps many times (Lloyd iterations, blocks, seeds), and each step makes
and frees arrays of the same sizes. By default glibc serves a large allocation (above a threshold
it adapts, from 128 KiB up to 32 MiB) with a fresh memory mapping and returns it to the kernel when
it is freed, and it gives the top of the heap back once more than twice that threshold is free there. A
fresh mapping is zeroed page by page by the kernel on first touch, so a job whose steps make arrays of
MBs to hundreds of MB spends much of its time in the kernel (Su et al.'s GkM-3K on MNIST, three
runs in one process: 12.8 s of system time beside 31 s of user time; with this setting, one run:
system 3.7 → 1.9 s, CPU 1.13x less).

`retain_freed_memory` serves every allocation up to `MMAP_THRESHOLD_BYTES` (32 MiB, glibc's
largest) from the heap and keeps up to `TRIM_THRESHOLD_BYTES` of free memory at its top, so the next
step reuses the pages of the last one; larger arrays keep their own mappings, which come back whole
to the kernel when freed (serving them from the heap too fragments it in a process that runs many
different blocks: measured in the estimator's long-lived timing processes, Balcan et al.'s
k-median 1.14x slower at the median of its 86 samples, up to 2.25x).
Results are unchanged: no arithmetic depends on where an array lies (tests/test_heap.py and
benchmarks/bench_heap.py compare the records of processes with and without it, byte for byte). Only the
`dpclust run` and `dpclust audit` commands (the workflow's compute jobs) and the benchmarks that
time them call it; importing dpclust changes nothing. `DPCLUST_KEEP_FREED_MEMORY=0` in the
environment turns it off (for measuring it: benchmarks/bench_heap.py).
"""

from __future__ import annotations

import ctypes
import os
import platform

#: mallopt(3) parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

#: Allocations up to this size come from the heap (glibc's largest mmap threshold on 64-bit).
MMAP_THRESHOLD_BYTES = 32 << 20

#: Free memory at the top of the heap that glibc keeps instead of returning (1 GiB: far more than
#: the heap-served temporaries of one step, each at most MMAP_THRESHOLD_BYTES).
TRIM_THRESHOLD_BYTES = 1 << 30


def retain_freed_memory() -> bool:
    """Serve allocations up to MMAP_THRESHOLD_BYTES from the heap and keep up to
    TRIM_THRESHOLD_BYTES of free memory at its top (glibc only). Returns whether the setting was
    applied (False on other C libraries, when DPCLUST_KEEP_FREED_MEMORY=0, or if glibc refused it:
    the process then runs as before, only slower)."""
    if platform.libc_ver()[0] != "glibc" or os.environ.get("DPCLUST_KEEP_FREED_MEMORY", "1") == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    applied = [mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES), mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)]
    return all(applied)   # both asked for, even if glibc refuses the first
