"""Cohen-Addad, Epasto, Lattanzi, Mirrokni, Munoz, Saulpic, Schwiegelshohn, Vassilvitskii.
"Scalable Differentially Private Clustering via Hierarchically Separated Trees", KDD 2022.

Modules
  * `hst` — randomly shifted binary quadtree cycling through the dimensions, private per-level cell
    counts (Alg. 2 MakePrivate, Lemma 3), chunked cell indexing (map-reduce over row chunks);
  * `dynamic_program` — Alg. 3 (k-median, p = 1; k-means, p = 2) on the released tree;
  * `dpclust.blocks.one_median` — private 1-median by objective perturbation (pure ε; the theorem
    followed and the proof of the noise scales are in its docstring); a shared DP building block,
    also used by balcan2017's k-median variant;
  * `private_lloyd` — `hst_kmedian` (tree + DP + 4 private Lloyd-median steps, ε/5 each),
    `hst_kmedian_stream` (the same on an h5py dataset / chunk iterator), `private_lloyd`
    (baseline, 7 steps from random centres), `hst_kmeans` (§5 extension, simplified);
  * `coreset` — the LSH-splits private coreset baseline (k-median variant with the private 1-median);
  * `items` — Figures 1–3 (`items.fig1`; `items.fig2`, `items.fig3` share `items.common`).

Interpretations common to the package (the extracted paper text lost every number): pure ε-DP with
Laplace counts as in the paper (the released code uses Gaussian thresholding and δ); every setting
is declared next to the code that reads it (`HST_SETTINGS`, `PRIVATE_LLOYD_SETTINGS`,
`HST_KMEANS_SETTINGS` in `private_lloyd`, `CORESET_SETTINGS` in `coreset`, all extending
`dpclust.blocks.one_median.ONE_MEDIAN_SETTINGS`), with its default and provenance (STATED /
INFERRED / EXT (the released code) / MISSING→REC / REC); config/papers/cohenaddad2022.yaml holds
only the named variants' overrides.
"""
