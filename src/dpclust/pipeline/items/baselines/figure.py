"""The non-private baselines' figure: the k-means++ / Lloyd cost ratio per dataset."""

from dpclust.pipeline.items.baselines.common import render_figure as render

__all__ = ["render"]
