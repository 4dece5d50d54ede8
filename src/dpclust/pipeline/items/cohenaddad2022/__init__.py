"""Items of Cohen-Addad et al. 2022, one module per item of
config/papers/cohenaddad2022.yaml:

  * `fig1` — Figure 1: HST centres on SYNTHETIC (S1) for a small and a large ε;
  * `fig2` — Figure 2: normalised k-median cost vs k on Skin Segmentation and Shuttle (all methods),
    one row per ε of a grid (the paper's ε is lost), normalised by the best objective found (the
    converged non-private reference of `dpclust.cohenaddad2022.reference` included);
  * `fig3` — Figure 3: the same on Covertype and HIGGS (the scalable methods);
  * `common` — what Figures 2 and 3 share: the normalised table, its figure, the claim helpers.

Each step function reads only its step spec (`dpclust.pipeline.run_plan.ItemTarget.step_spec`): display
names from `names` (config/names.yaml), thresholds from `claims`, table options from `table`, and
(render) the runs planned under the preset from `runs`.
"""
