"""The leaderboard: every configured private k-means and k-median algorithm (the five papers' and
peers such as diffprivlib's KMeans) run on the same datasets, transform, public box, ε grid and δ,
ranked by cost normalised by the best non-private solution found (config/papers/leaderboard.yaml).
By default the board runs only the methods with a declared DP guarantee (and the non-private
references); the methods not DP as published come back with the opt-in documented in that file,
labelled and never ranked, and the notes name those left out (`common.left_out_note`).

Items, one module each (`dpclust.pipeline.item_modules`):

  * `table`  — the tidy leaderboard: per (objective, dataset, k, ε, algorithm) the mean normalised
    cost with its 95 % interval, runs, wall time per run, ε spent, the guarantee, and the rank among
    the methods with a declared DP guarantee; its check "every DP run spent at most its ε";
  * `figure` — normalised cost vs ε, one panel per (objective, dataset, k), one line per algorithm,
    interval bands, methods without a DP guarantee drawn dashed/dotted and labelled;
  * `best`   — the best DP method per (objective, dataset, k, ε) and how it was decided (its interval
    against the runner-up's);
  * `common` — what the three share: the aggregation, guarantee labels and styles.
"""
