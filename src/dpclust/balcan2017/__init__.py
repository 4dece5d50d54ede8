"""Balcan, Dick, Liang, Mou & Zhang, "Differentially Private Clustering in High-Dimensional
Euclidean Spaces", ICML 2017 — Algorithms 1–4 (`partition`, `candidates`, `local_swap`,
`algorithm`), the k-median variant (§6.2), and the baselines of §7: SuLQ k-means (`sulq`),
sample and aggregate (`sample_aggregate`), k-variates++ (`kvariates`). Items: `items`.
"""
