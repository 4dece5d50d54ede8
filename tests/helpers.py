"""Small helpers shared by test files."""
from __future__ import annotations


def timeless(obj):
    """A record (or any JSON value) without its wall times, the only values a re-run may change."""
    if isinstance(obj, dict):
        return {k: timeless(v) for k, v in obj.items() if k != "wall_time_s"}
    if isinstance(obj, list):
        return [timeless(v) for v in obj]
    return obj
