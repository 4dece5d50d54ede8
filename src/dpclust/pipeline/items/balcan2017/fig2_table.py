"""The numbers behind Balcan et al.'s Figure 2 (a–c), with sample and aggregate: a table built by `fig2`."""

from dpclust.pipeline.items.balcan2017.fig2 import aggregate
from dpclust.pipeline.items.balcan2017.fig2 import render_table as render

__all__ = ["aggregate", "render"]
