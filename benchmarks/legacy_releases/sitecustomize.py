"""Every release of this Python process made as before the grid (d0ea793), for a whole workflow run.

Loaded at interpreter start by `benchmarks/legacy_release_run.sh`, which puts this folder first on
PYTHONPATH and sets DPCLUST_LEGACY_RELEASES to a log file: Snakemake and every job it starts then
release fl(value + noise) with the same noise doubles (`dpclust.audit.floating_point.legacy_releases`),
so a preset or full-protocol part run this way is the "before" of the grid release at today's code,
paired by seed with an ordinary run of the same commit (docs/EQUIVALENCE.md). Not DP on a real machine:
a benchmark of the change, never a result. Each process appends its number of releases to the log, so
the run shows that the patch reached its jobs.
"""
import atexit
import os

_LOG = os.environ.get("DPCLUST_LEGACY_RELEASES")
if _LOG:
    from dpclust.audit.floating_point import legacy_releases

    _block = legacy_releases()
    _calls = _block.__enter__()

    def _log_releases() -> None:
        if _calls["release"]:
            with open(_LOG, "a") as out:
                out.write(f"{os.getpid()}\t{_calls['release']}\n")

    atexit.register(_log_releases)
