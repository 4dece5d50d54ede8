"""Worked examples of the algorithm contract (docs/ADD_AN_ALGORITHM.md)."""
