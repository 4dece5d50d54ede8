"""The privacy audit's table: one row per audited algorithm and design, its verdict, and the checks."""

from dpclust.pipeline.items.audit.common import aggregate_audit as aggregate
from dpclust.pipeline.items.audit.common import check_audit as checks
from dpclust.pipeline.items.audit.common import render_audit_table as render

__all__ = ["aggregate", "checks", "render"]
