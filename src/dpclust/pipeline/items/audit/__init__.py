"""The privacy audit's items: `audit` (the table of verdicts, with its checks) and `audit_figure`
(empirical ε against the claimed ε); `common` aggregates the audit records and holds the verdicts."""
