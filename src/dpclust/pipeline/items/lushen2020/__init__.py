"""Items of Lu & Shen (arXiv 2002.01043): Tables 1–2 and Figures 7–10, one module per item.

* `table1`: Table 1 (notation), static, from the item config.
* `table2`: Table 2, computed from the processed datasets beside the printed values.
* `fig7`: Figure 7, the cost gap (mean cost / Lloyd's mean cost from the same initial centroids − 1)
  on the paper's log gap axis (asinh: gaps ≤ 0 stay visible) against the per-atom-step budget
  ε_step = epsilon / atom_steps (see the config header), with bootstrap bands; claims against the paper's
  baselines as run, repeated against the DP baselines as the alternative reading.
* `fig8`: Figure 8, share of Algorithm 1 runs whose pre-noise output matches Lloyd's (`info.match`),
  Clopper-Pearson intervals, claims per dataset over all ε.
* `iterations` (re-exported by `fig9` and `fig10`): Figures 9 and 10, iteration ratio Algorithm 1 /
  Lloyd (same initial centroids, `info`; the Prior counted with its look-ahead step, as the paper
  does), and the average-iterations tables (b) beside the paper's numbers.
* `common`: the per-run table every figure builds on (with each record's guarantee), the paper's
  algorithm ids, legend labels ("not DP as published"), dataset order, the bootstrap helpers.

Every step reads only its step spec: display names come from `config/names.yaml` (`itemkit.name`,
`itemkit.dataset_name`; a DP variant without a name of its own is "<base>-DP"), thresholds from the
item's `claims:`. Checks decide the paper's claims with the claims engine (`dpclust.pipeline.verdicts`,
docs/VERDICTS.md: the paper's quantifier, one-sided cells, Holm to fail); a claim that fails in our runs is
reported as failing, with its `why`; our own readings are labelled "alternative reading", our bookkeeping
is of kind `bookkeeping`.
"""
