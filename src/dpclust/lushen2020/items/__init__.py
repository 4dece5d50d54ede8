"""Items of Lu & Shen (arXiv 2002.01043): Tables 1–2 and Figures 7–10, one module per item.

* `table1`: Table 1 (notation), static, from the item config.
* `table2`: Table 2, computed from the processed datasets beside the printed values.
* `fig7`: Figure 7, mean cost / mean cost of Lloyd from the same initial centroids (paired by
  seed), log scale, against the per-atom-step budget ε_step = epsilon / atom_steps (see the
  config header); the table stores ratio and gap = ratio − 1.
* `fig8`: Figure 8, share of Algorithm 1 runs whose pre-noise output matches Lloyd's (`info.match`).
* `iterations`: Figures 9 and 10, iteration ratio Algorithm 1 / Lloyd (same initial centroids,
  `info`), and the average-iterations tables (b) beside the paper's numbers.
* `common`: the per-run table every figure builds on, the paper's algorithm ids, dataset order.

Every step reads only its step spec: display names come from `config/names.yaml` (`itemkit.name`,
`itemkit.dataset_name`), thresholds from the item's `claims:`. Checks implement the paper's claims;
a claim that fails in our runs is reported as failing.
"""
