"""Items of Su et al. (2016): Table 1 and Figures 1-7, one module per item.

* `table1` — dataset descriptions (N, d, k, GkM block counts) beside the paper's Table 1;
* `fig1` — NICV vs ε of DPLloyd, EUGkM, PGkM, GkM, GkM-3K and the §5.1 baseline;
* `fig2` — NICV − baseline heatmaps over the synthetic k × d grid (θ of EUGkM varied);
* `fig3` — GkM's error analysis against the block-size exponent (GkM, SAG, Noise);
* `fig4` — convergence of non-private Lloyd and Gene;
* `fig5` — the hybrid approach vs EUGkM and DPLloyd (with the quoted numbers of §6.4);
* `fig6` — Hybrid vs EUGkM heatmaps over the synthetic grid;
* `fig7` — running time of DPLloyd and EUGkM.

`common` holds what several items share: the NICV table (`aggregate_nicv`, Figures 1, 2, 3, 5, 6
and 7), its per-dataset panels (Figures 1, 5), the k × d heatmaps (Figures 2, 6) and the helpers of
the claim checks. Each item module reads only its step spec (`dpclust.pipeline.run_plan.ItemTarget.step_spec`).
This package imports none of its modules, so an item's code hash covers its own module and `common`
only.
"""
