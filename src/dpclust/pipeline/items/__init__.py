"""The items: each paper's figures and tables (one package per paper), the baselines, the leaderboard
and the audit. The item `<item>` of `config/papers/<paper>.yaml` is the module `<paper>.<item>` here, which exposes
its steps under fixed names (aggregate, render, checks; `dpclust.pipeline.item_modules`), called by
`dpclust.pipeline.steps`.
"""
