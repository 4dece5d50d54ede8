"""One re-evaluation timer for Snakemake's job scheduler (a workaround, applied by the Snakefile).

Snakemake 9's scheduler (`snakemake.scheduling.job_scheduler.JobScheduler`) ends every pass of its
loop, when a job rate limit is set (the command line always sets one: `--max-jobs-per-timespan`
defaults to 100/1s), by starting a `threading.Timer` that wakes the loop after the timespan. The
pass that timer wakes starts the next one, so each pass woken by anything else (a job that
finished) starts one more chain of timers that never ends: after n finished jobs the scheduler
passes n times a second. Measured on the full protocol at 250 finished jobs: 182 threads and 26 %
of a core in the scheduler, growing with every finished job; a
400-job toy workflow spent 17.4 CPU-s with it and 8.3 without. One pending timer is enough: it
wakes the loop within the timespan, and that pass starts the next, as the rate limit needs. The
timer is a daemon thread, so an idle one never holds up the exit.
"""

from __future__ import annotations

import threading


def _one_reevaluation_timer(self, delay) -> None:
    if getattr(self, "_dpclust_reevaluation_timer", None) is not None:
        return                                   # one is pending: it wakes the loop within `delay`

    def wake():
        self._dpclust_reevaluation_timer = None  # before the pass it wakes, which starts the next
        self._open_jobs.release()

    timer = threading.Timer(delay, wake)
    timer.daemon = True
    self._dpclust_reevaluation_timer = timer     # before start: a timer that fires at once still clears it
    timer.start()


def keep_one_reevaluation_timer() -> bool:
    """Replace the scheduler's timer-per-pass by one pending timer; False (nothing changed) where
    this Snakemake has no such method."""
    try:
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:  # pragma: no cover - another Snakemake layout
        return False
    if not callable(getattr(JobScheduler, "_schedule_reevalutation", None)):  # (sic: Snakemake's spelling)
        return False  # pragma: no cover
    JobScheduler._schedule_reevalutation = _one_reevaluation_timer
    return True
