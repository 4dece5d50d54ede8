"""How the audit labels its variants, shared by the planner (`audits/plan.py`, which writes them into
each spec) and the table (`audits/items.py`, which reads them back from the records). Kept apart
from both so the table does not import the workflow."""

#: relation_source of an audit that held the public N fixed (`public_n` = |D|) on both neighbours.
PUBLIC_N_FIXED = "public_n = |D| on both neighbours"
#: The audit variant that lets an N-public algorithm read N from each neighbour (`public_n` unset).
N_FROM_DATA = "n_from_data"
#: relation_source of that variant (a run outside the declared guarantee, which needs N public).
N_FROM_DATA_SOURCE = f"variant {N_FROM_DATA}: N read from each dataset, outside the guarantee (N public)"
#: The audit variant run at settings chosen for the attack's power (fewest compositions): the record's
#: `variant` is {"name": POWER, "settings": the overridden settings}. Within the guarantee, which must
#: hold at every setting.
POWER = "power"
#: The floating-point design (dpclust.audit.floating_point.release_audit, Mironov 2012): an audit variant
#: of its own, on the design `FLOATING_POINT_DESIGN` (its record's `design`), planned from the audit
#: item's `table: floating_point:` declaration (config/papers/audit.yaml).
FLOATING_POINT = "floating_point"
#: The floating-point design's name: its event is "a released coordinate not reachable from D's value".
FLOATING_POINT_DESIGN = "reachability"
#: The floating-point design's positive control (the legacy raw-float Laplace sampler, audit package only):
#: its algorithm id in the audit records, and its guarantee kind.
CONTROL_ALGORITHM = "control.legacy_laplace"
CONTROL_KIND = "positive control (not DP in floating point)"
#: The start of a declared floating-point entry that the design does not apply to ("not applicable: <why>").
NOT_APPLICABLE = "not applicable"
#: Every audit variant (the `<design>.<variant>.json` paths of the audit rule).
VARIANTS = (N_FROM_DATA, POWER, FLOATING_POINT)
