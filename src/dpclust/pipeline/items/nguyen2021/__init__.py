"""Items of Nguyen, Chaturvedi & Xu (AAAI 2021), one module per item:

* `fig1`   – Figure 1: k-means objective vs k for Algorithm 1, Balcan et al. (run with NoisyAVG
  recovery) and non-private Lloyd, with the paper's claims checked (§Experiments, "Results").
* `table1` – Table 1: the theory comparison, static (rendered from the config).

Each module reads only its step spec (`dpclust.pipeline.run_plan.ItemTarget.step_spec`).
"""
