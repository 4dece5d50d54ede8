"""Items of Balcan et al. (ICML 2017), one module per item (items that share their
functions re-export them from the module that defines them):

* `table1` — Table 1 (static: the guarantees of efficient algorithms);
* `fig1` — Figure 1 from a real run of Algorithm 1 (cube geometry, candidates, data points);
* `fig2` — Figure 2 (a–c); `fig2a`, `fig2b`, `fig2c` (its single panels) and `fig2_table` (the
  numbers behind them, with sample and aggregate) re-export its functions;
* `fig2d` — Figure 2 (d), the effect of ε;
* `supp3d` — the reconstructed supplementary 3-D comparison (a table);
* `common` — the tidy summary every item's aggregate builds on, and shared claim helpers.

This package imports none of them, so editing one item's module re-runs only that item's steps.
"""
