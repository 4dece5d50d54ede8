"""Items of Balcan et al. (ICML 2017), one module per item or family of items that share their
functions (the config names each item's `module:`):

* `table1` — Table 1 (static: the guarantees of efficient algorithms);
* `fig1` — Figure 1 from a real run of Algorithm 1 (cube geometry, candidates, data points);
* `fig2` — Figure 2 (a–c) and its single panels fig2a/b/c, and the fig2_table item (the numbers
  behind them, with sample and aggregate);
* `fig2d` — Figure 2 (d), the effect of ε;
* `supp3d` — the reconstructed supplementary 3-D comparison (a table);
* `common` — the tidy summary every item's aggregate builds on, and shared claim helpers.

This package imports none of them, so editing one item's module re-runs only that item's steps.
"""
