"""Figure 2(c) of Balcan et al. (2017) alone: the panel of Figure 2 on its dataset, built by `fig2`."""

from dpclust.pipeline.items.balcan2017.fig2 import aggregate, render

__all__ = ["aggregate", "render"]
