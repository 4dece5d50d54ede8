"""Figure 9 of Lu & Shen (2020): iteration ratios and average iterations, built by `iterations`."""

from dpclust.pipeline.items.lushen2020.iterations import aggregate, checks, render

__all__ = ["aggregate", "checks", "render"]
