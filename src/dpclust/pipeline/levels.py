"""The error levels of every decision (docs/VERDICTS.md): the rubric's one-sided α and its split over
the looks of a replication or a race. A module of its own, importing nothing of the pipeline, so that
what hashes the race's decisions (`workflow/rules/common.smk`, `race_fingerprint`) does not change with
the claims engine."""

from __future__ import annotations

#: one-sided error level of every decision (a two-sided 90 % interval tests both sides at 5 %)
ALPHA = 0.05
#: no claim or cell gets more than this many times the paper's (the group's) runs
MAX_MULTIPLE = 10
#: the share of ALPHA spent at the first look (the paper's runs); the rest is split evenly over the added looks
FIRST_LOOK_SHARE = 0.5


def alpha_schedule(n_rounds: int, alpha: float = ALPHA) -> list[float]:
    """The one-sided level of each look: FIRST_LOOK_SHARE of α at the paper's runs, the rest split
    evenly over the `n_rounds` added looks; they sum to α."""
    if n_rounds < 1:
        raise ValueError("a replication has at least one added look")
    first = FIRST_LOOK_SHARE * alpha
    return [first] + [(alpha - first) / n_rounds] * n_rounds
