"""The empirical privacy audit as a result (the `audit` pseudo-paper, config/papers/audit.yaml).

* `dpclust.audits.designs`: neighbouring designs (D, D' in [0, 1]^2 under add/remove or
  replace-one) and the statistics of the released centres;
* `dpclust.audits.runner`: one audit job (`python -m dpclust audit --spec ... --out ...`): the
  algorithm many times on each side, the lower bound on ε (`dpclust.audit`) and the same with every
  noise scale halved (power);
* `dpclust.audits.items`: the items' aggregate (with verdicts and the Bonferroni maximum over
  designs), table, figure and checks.

Jobs are planned by `dpclust.audits.plan.audit_jobs` and run by `workflow/rules/audit.smk`.
"""
