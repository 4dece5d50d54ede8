"""Lu & Shen, "Differentially Private k-Means Clustering with Guaranteed Convergence" (arXiv 2002.01043).

* `algorithm`: Algorithm 1 (`lushen`, strategies Posterior / Prior; estimators in `dpclust.estimators`)
  — not DP as published (declared guarantee; implemented as written);
* `sampling_zone`: Algorithm 2 (orientation controllers, zone) and the exact ExpDP draw in a zone;
* `baselines`: BLUM / DWORK / SU / GUPT / PrivGene (Su et al.'s modules) under §7.1's budget protocol
  (not DP as configured, except GUPT) and their DP variants (public total, sphere-packing starts);
* `items`: Tables 1–2 and Figures 7–10 (aggregate, render, checks).
"""
