"""The items: each paper's figures and tables (one package per paper), the baselines, the leaderboard
and the audit. An item module defines its steps (aggregate, render, checks), named in the paper's
config (`config/papers/<paper>.yaml`, `module:` and the step keys) and called by
`dpclust.pipeline.steps`.
"""
