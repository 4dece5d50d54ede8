"""Peers: clustering algorithms of other libraries, wrapped unchanged as dpclust algorithms so that
they run on the same data, budgets and metrics as the papers' algorithms (the leaderboard,
config/papers/leaderboard.yaml).

A peer is run as its library ships it: its own code draws the noise and decides the budget split;
the wrapper only maps dpclust's contract (public box, ε, a `numpy.random.Generator`) onto the
library's arguments and records what the library says it spent. Where the library's noise does not
match the ε it reports, the peer's declared guarantee says so ("not DP as published") and the run
records the ε its noise corresponds to in `info`.

* `diffprivlib_kmeans` — IBM diffprivlib's `KMeans` (DPLloyd with the TOPS 2017 budget rule).
"""
