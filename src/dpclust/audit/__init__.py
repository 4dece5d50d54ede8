"""The empirical privacy audit (library part): statistics and neighbouring designs.

* `dpclust.audit.statistics`: a statistically valid lower bound on the ε of a mechanism from samples
  on two neighbouring datasets (Clopper-Pearson), and the halved-noise power control;
* `dpclust.audit.designs`: neighbouring designs (D, D' in [0, 1]^2 under add/remove or replace-one)
  and the statistics of the released centres.

The audit as a result of the workflow (jobs, records, items) is in the pipeline:
`dpclust.pipeline.audit_plan` plans the jobs, `dpclust.pipeline.audit_job` runs one
(`python -m dpclust.pipeline audit --spec ... --out ...`), `dpclust.pipeline.items.audit` aggregates,
renders and checks them (config/papers/audit.yaml, workflow/rules/audit.smk).
"""
