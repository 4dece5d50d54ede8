"""The non-private baselines' table (Lloyd and k-means++ costs) and its sanity checks."""

from dpclust.pipeline.items.baselines.common import check_table as checks
from dpclust.pipeline.items.baselines.common import render_table as render

__all__ = ["checks", "render"]
