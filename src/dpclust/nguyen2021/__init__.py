"""Nguyen, Chaturvedi, Xu. "Differentially Private k-Means via Exponential Mechanism and Max Cover".
AAAI 2021.

* `grid_cover` – Algorithm 2 (private grid set cover: exponential mechanism over the whole grid G_i
  by the uniform-mass decomposition of Lemma 8) and the offsets V_i of Lemma 7.
* `algorithm`  – Algorithm 1 (JL + scaling, geometric radii, proxy dataset, Lloyd, NoisyAVG) plus the
  one private Lloyd round of the experiments; its declared settings (`SETTINGS`, with provenance).
* `items`      – Figure 1 (`items.fig1`) and Table 1 (`items.table1`).

Algorithm 3 (NoisyAVG of Nissim, Stemmer & Vadhan 2016, Alg. 5), per cluster with parallel
composition, is the shared block `dpclust.blocks.noisy_average` (also used by `balcan2017`'s
`recovery: noisyavg`).
"""
