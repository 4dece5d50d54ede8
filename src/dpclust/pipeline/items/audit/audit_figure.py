"""The privacy audit's figure: empirical ε lower bounds against the claimed ε."""

from dpclust.pipeline.items.audit.common import aggregate_audit as aggregate
from dpclust.pipeline.items.audit.common import render_audit_figure as render

__all__ = ["aggregate", "render"]
